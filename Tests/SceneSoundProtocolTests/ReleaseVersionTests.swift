import Foundation
import SceneSoundProtocol
import Testing

/// One version everywhere: the programs' `--version`, the C library's `scenesound_version()`,
/// the server's name in its welcome and the Debian packages (debian/changelog's top entry,
/// which dpkg takes the packages' version from).
struct ReleaseVersionTests {
    static let changelog = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("debian/changelog")

    @Test func debianChangelogCarriesTheRelease() throws {
        let text = try String(contentsOf: Self.changelog, encoding: .utf8)
        let first = try #require(text.split(separator: "\n").first)
        // "scenesound (0.1.0) unstable; urgency=medium": a native package, no Debian revision.
        #expect(first.hasPrefix("scenesound (\(SceneSoundRelease.version)) "), "debian/changelog starts \"\(first)\"")
    }

    @Test func theVersionIsThreeNumbers() {
        let parts = SceneSoundRelease.version.split(separator: ".")
        #expect(parts.count == 3 && parts.allSatisfy { UInt($0) != nil }, "\(SceneSoundRelease.version)")
    }
}
