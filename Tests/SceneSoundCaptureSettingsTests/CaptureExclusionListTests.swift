import Foundation
import SceneSoundCaptureSettings
import Testing

@Suite struct CaptureExclusionListTests {
    @Test func keepsNamesOnceInOrderAcrossASaveAndALoad() throws {
        var list = CaptureExclusionList()
        let added = [list.add("firefox"), list.add(" mpv "), list.add("firefox"), list.add(""), list.add("#comment")]
        #expect(added == [true, true, false, false, false])
        #expect(list.names == ["firefox", "mpv"])
        let path = NSTemporaryDirectory() + "exclusions-\(UUID().uuidString)/capture-exclude"
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try list.save(path: path)
        #expect(try CaptureExclusionList.load(path: path) == list)
        let removed = [list.remove("firefox"), list.remove("firefox")]
        #expect(removed == [true, false])
        #expect(list.names == ["mpv"])
    }

    @Test func aMissingFileIsAnEmptyListAndCommentsAreSkipped() throws {
        #expect(try CaptureExclusionList.load(path: "/nonexistent/capture-exclude").names.isEmpty)
        #expect(CaptureExclusionList(text: "# mine\nvlc\n\n  # old\nsteam\n").names == ["vlc", "steam"])
    }

    @Test func thePathFollowsXDGConfigHome() {
        #expect(CaptureExclusionList.defaultPath(environment: ["XDG_CONFIG_HOME": "/c", "HOME": "/h"]) == "/c/scenesound/capture-exclude")
        #expect(CaptureExclusionList.defaultPath(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/h"]) == "/h/.config/scenesound/capture-exclude")
        #expect(CaptureExclusionList.defaultPath(environment: [:]) == nil)
    }
}
