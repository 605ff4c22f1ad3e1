import Foundation
import Testing
@testable import SceneSoundThemes

/// Lookup through a user theme in a temporary `XDG_DATA_HOME` that inherits the installed
/// `freedesktop` theme (Debian's sound-theme-freedesktop).
@Suite struct SoundThemeLookupTests {
    static let system = "/usr/share/sounds/freedesktop/stereo"

    static func userTheme() throws -> ThemeFixture {
        let fixture = try ThemeFixture()
        try fixture.theme("mine", index: """
            [Sound Theme]
            Name=Mine
            Inherits=freedesktop
            Directories=stereo,surround

            [stereo]
            OutputProfile=stereo

            [surround]
            OutputProfile=5.1
            """)
        return fixture
    }

    @Test func userThemeOverridesOneSoundAndFallsBackForTheRest() throws {
        let fixture = try Self.userTheme()
        let bell = try fixture.file("sounds/mine/stereo/bell.wav")
        let env = fixture.environment()
        #expect(SoundTheme.lookup(name: "bell", theme: "mine", environment: env) == .found(path: bell))
        #expect(SoundTheme.lookup(name: "complete", theme: "mine", environment: env) == .found(path: "\(Self.system)/complete.oga"))
    }

    @Test func disabledIsSilenceNotAFallback() throws {
        let fixture = try Self.userTheme()
        let disabled = try fixture.file("sounds/mine/stereo/dialog-warning.disabled")
        #expect(SoundTheme.lookup(name: "dialog-warning", theme: "mine", environment: fixture.environment()) == .disabled(path: disabled))
    }

    @Test func disabledOutranksAFileBesideIt() throws {
        let fixture = try Self.userTheme()
        try fixture.file("sounds/mine/stereo/bell.oga")
        let disabled = try fixture.file("sounds/mine/stereo/bell.disabled")
        #expect(SoundTheme.lookup(name: "bell", theme: "mine", environment: fixture.environment()) == .disabled(path: disabled))
    }

    @Test func localeDirectoriesFallBackFromTerritoryToLanguageToNone() throws {
        let fixture = try Self.userTheme()
        let germanGermany = try fixture.file("sounds/mine/stereo/de_DE/message.oga")
        let german = try fixture.file("sounds/mine/stereo/de/message.oga")
        let plain = try fixture.file("sounds/mine/stereo/message.oga")
        #expect(SoundTheme.lookup(name: "message", theme: "mine", environment: fixture.environment(lang: "de_DE.UTF-8")) == .found(path: germanGermany))
        #expect(SoundTheme.lookup(name: "message", theme: "mine", environment: fixture.environment(lang: "de_AT.UTF-8")) == .found(path: german))
        #expect(SoundTheme.lookup(name: "message", theme: "mine", environment: fixture.environment(lang: "fr_FR.UTF-8")) == .found(path: plain))
        #expect(SoundTheme.lookup(name: "message", theme: "mine", environment: fixture.environment(lang: "C")) == .found(path: plain))
    }

    @Test func lcMessagesOutranksLang() throws {
        let fixture = try Self.userTheme()
        let french = try fixture.file("sounds/mine/stereo/fr/message.oga")
        try fixture.file("sounds/mine/stereo/de/message.oga")
        var env = fixture.environment(lang: "de_DE.UTF-8")
        env["LC_MESSAGES"] = "fr_FR.UTF-8"
        #expect(SoundTheme.lookup(name: "message", theme: "mine", environment: env) == .found(path: french))
    }

    @Test func namePartsAreDroppedUntilSomethingMatches() throws {
        let fixture = try Self.userTheme()
        let env = fixture.environment()
        #expect(SoundTheme.lookup(name: "dialog-warning-foo", theme: "mine", environment: env)
                == .found(path: "\(Self.system)/dialog-warning.oga"))
        // The most specific name wins even when it lives in a parent theme.
        try fixture.file("sounds/mine/stereo/dialog.wav")
        #expect(SoundTheme.lookup(name: "dialog-warning-foo", theme: "mine", environment: env)
                == .found(path: "\(Self.system)/dialog-warning.oga"))
    }

    @Test func outputProfileFallsBackToStereo() throws {
        let fixture = try Self.userTheme()
        let surround = try fixture.file("sounds/mine/surround/bell.ogg")
        let stereo = try fixture.file("sounds/mine/stereo/bell.wav")
        let env = fixture.environment()
        #expect(SoundTheme.lookup(name: "bell", theme: "mine", environment: env, outputProfile: "5.1") == .found(path: surround))
        #expect(SoundTheme.lookup(name: "bell", theme: "mine", environment: env) == .found(path: stereo))
        #expect(SoundTheme.lookup(name: "complete", theme: "mine", environment: env, outputProfile: "5.1")
                == .found(path: "\(Self.system)/complete.oga"))
    }

    @Test func inheritanceIsDepthFirstInOrder() throws {
        let fixture = try ThemeFixture()
        try fixture.theme("child", index: "[Sound Theme]\nInherits=a, b\nDirectories=stereo\n")
        try fixture.theme("a", index: "[Sound Theme]\nInherits=aa\nDirectories=stereo\n")
        try fixture.theme("aa", index: "[Sound Theme]\nDirectories=stereo\n")
        try fixture.theme("b", index: "[Sound Theme]\nInherits=child\nDirectories=stereo\n")  // a cycle
        let fromGrandparent = try fixture.file("sounds/aa/stereo/bell.oga")
        try fixture.file("sounds/b/stereo/bell.oga")
        let chain = SoundTheme.themeChain(startingAt: "child", in: SoundDataDirectories(environment: fixture.environment()))
        #expect(chain.map(\.0) == ["child", "a", "aa", "b", "freedesktop"])
        #expect(SoundTheme.lookup(name: "bell", theme: "child", environment: fixture.environment()) == .found(path: fromGrandparent))
    }

    @Test func unknownNameListsTheThemeDirectoriesSearched() throws {
        let fixture = try Self.userTheme()
        let result = SoundTheme.lookup(name: "no-such-sound", theme: "mine", environment: fixture.environment())
        #expect(result == .notFound(searchedDirectories: ["\(fixture.dataHome)/sounds/mine", "/usr/share/sounds/freedesktop"]))
    }

    @Test func anUnknownThemeFallsBackToFreedesktop() throws {
        let fixture = try ThemeFixture()
        #expect(SoundTheme.lookup(name: "bell", theme: "does-not-exist", environment: fixture.environment())
                == .found(path: "\(Self.system)/bell.oga"))
    }

    @Test(arguments: ["bell", "dialog-warning", "message-new-instant", "complete"])
    func theInstalledThemeHasTheDesktopsCommonSounds(name: String) {
        let env = ["XDG_DATA_HOME": "/nonexistent", "XDG_DATA_DIRS": "/usr/share", "LANG": "de_DE.UTF-8"]
        #expect(SoundTheme.lookup(name: name, environment: env) == .found(path: "\(Self.system)/\(name).oga"))
    }

    @Test func pathSeparatorsInNamesFindNothing() {
        if case .found = SoundTheme.lookup(name: "../freedesktop/stereo/bell") { Issue.record("a path escaped the theme") }
    }
}

@Suite struct LookupVariantTests {
    @Test func localeVariants() {
        #expect(LookupVariants.locales(for: "de_DE.UTF-8") == ["de_DE.UTF-8", "de_DE", "de"])
        #expect(LookupVariants.locales(for: "sr_RS.UTF-8@latin") == ["sr_RS.UTF-8@latin", "sr_RS@latin", "sr_RS", "sr@latin", "sr"])
        #expect(LookupVariants.locales(for: "de") == ["de"])
        #expect(LookupVariants.locales(for: "C.UTF-8") == [])
        #expect(LookupVariants.locales(for: "") == [])
        #expect(LookupVariants.locales(environment: ["LC_ALL": "", "LC_MESSAGES": "fr_FR", "LANG": "de_DE"]) == ["fr_FR", "fr"])
    }

    @Test func nameVariants() {
        #expect(LookupVariants.names(for: "dialog-warning-foo") == ["dialog-warning-foo", "dialog-warning", "dialog"])
        #expect(LookupVariants.names(for: "bell") == ["bell"])
    }

    @Test func dataDirectories() {
        #expect(SoundDataDirectories(environment: ["HOME": "/home/u"]).soundDirectories
                == ["/home/u/.local/share/sounds", "/usr/local/share/sounds", "/usr/share/sounds"])
        #expect(SoundDataDirectories(environment: ["XDG_DATA_HOME": "/d/", "XDG_DATA_DIRS": "/a:relative:/b"]).soundDirectories
                == ["/d/sounds", "/a/sounds", "/b/sounds"])
    }

    @Test func indexParsing() {
        let index = ThemeIndex(text: """
            # comment
            [Sound Theme]
            Name=X
            Name[de]=Y
            Inherits = a , b
            Directories=stereo,5.1

            [5.1]
            OutputProfile=5.1
            """)
        #expect(index.name == "X")
        #expect(index.inherits == ["a", "b"])
        #expect(index.directories == [.init(name: "stereo", outputProfile: "stereo"), .init(name: "5.1", outputProfile: "5.1")])
    }
}
