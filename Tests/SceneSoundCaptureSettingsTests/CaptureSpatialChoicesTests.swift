import Foundation
import SceneSoundCaptureSettings
import Testing

struct CaptureSpatialChoicesTests {
    @Test func aChoiceIsKeptAndAnchoredIsTheDefault() {
        var choices = CaptureSpatialChoices()
        #expect(choices.mode(binary: "mpv", applicationName: "mpv Media Player") == "anchored")
        let changes = [choices.set("mpv", mode: "off"), choices.set("mpv", mode: "off"),
                       choices.set("Firefox Web Browser", mode: "head-locked")]
        #expect(changes == [true, false, true], "the second is no change")
        #expect(choices.mode(binary: "mpv", applicationName: nil) == "off")
        #expect(choices.mode(binary: "firefox", applicationName: "Firefox Web Browser") == "head-locked")
        // Back to anchored: nothing kept for it.
        let back = choices.set("mpv", mode: "anchored")
        #expect(back)
        #expect(choices.modeByName == ["Firefox Web Browser": "head-locked"])
    }

    @Test func anUnknownModeOrANameThatCannotBeALineIsRefused() {
        var choices = CaptureSpatialChoices()
        let refused = [choices.set("mpv", mode: "binaural"), choices.set("# mpv", mode: "off"), choices.set("two\nlines", mode: "off")]
        #expect(refused == [false, false, false])
        #expect(choices.modeByName.isEmpty)
    }

    @Test func theFileRoundTripsAndAHandEditedLineThatIsWrongIsSkipped() throws {
        var choices = CaptureSpatialChoices()
        _ = choices.set("Firefox Web Browser", mode: "head-locked")
        _ = choices.set("mpv", mode: "off")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spatial-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/scenesound/capture-spatial"
        try choices.save(path: path)
        #expect(try CaptureSpatialChoices.load(path: path) == choices)
        let edited = try String(contentsOfFile: path, encoding: .utf8) + "loud vlc\noff\n  # a comment\nhead-locked  totem\n"
        let read = CaptureSpatialChoices(text: edited)
        #expect(read.modeByName == ["Firefox Web Browser": "head-locked", "mpv": "off", "totem": "head-locked"])
        #expect(try CaptureSpatialChoices.load(path: directory + "/none") == CaptureSpatialChoices())
        #expect(CaptureSpatialChoices.defaultPath(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]) == "/x/scenesound/capture-spatial")
    }
}
