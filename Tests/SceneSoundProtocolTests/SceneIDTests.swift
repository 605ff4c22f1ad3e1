import SceneSoundProtocol
import Testing

@Suite struct SceneIDTests {
    @Test func x11IdsRoundTrip() {
        for windowID: UInt32 in [1, 0x3a00007, .max] {
            #expect(SceneID.x11WindowID(SceneID.forX11Window(windowID)) == windowID)
        }
        #expect(SceneID.forX11Window(0x3a00007) == "x11:0x3a00007")
    }

    @Test func x11ParsingAcceptsEitherCaseAndRejectsJunk() {
        #expect(SceneID.x11WindowID("x11:0X3A00007") == 0x3a00007)
        for junk in ["x11:", "x11:0x", "x11:3a", "x11:0x0", "x11:0x-1", "x11:0x123456789", "X11:0x1", "x11:0xg", "chat"] {
            #expect(SceneID.x11WindowID(junk) == nil, "\(junk)")
        }
    }

    @Test func waylandIdsNameNativeWindowsByHandle() throws {
        #expect(SceneID.forNativeWindow("42") == "wayland:42")
        #expect(SceneID.nativeWindowID("wayland:0x55d0c3a4b2c0") == "0x55d0c3a4b2c0")
        for junk in ["wayland:", "wayland:a b", "Wayland:1", "wayland:\u{7F}", "wayland:" + String(repeating: "1", count: 65), "chat"] {
            #expect(SceneID.nativeWindowID(junk) == nil, "\(junk)")
            #expect(SceneID.windowID(junk) == nil, "\(junk)")
        }
        // FNV-1a-32 of "a" is 0xe40c292c; the handle sets the top bit, which no X id has.
        #expect(SceneID.nativeWindowHandle("a") == 0xe40c292c)
        #expect(SceneID.nativeWindowHandle("1") & SceneID.nativeWindowHandleBit != 0)
        #expect(SceneID.windowID("wayland:42") == SceneID.nativeWindowHandle("42"))
        #expect(SceneID.windowID("wayland:42") != SceneID.windowID("wayland:43"))
        #expect(SceneID.windowID("x11:0x3a00007") == 0x3a00007)
        #expect(throws: ProtocolError.self) { try SceneID.validate("wayland:", allowEmpty: false) }
        try SceneID.validate("wayland:42", allowEmpty: false)
    }

    @Test func versionNegotiationPicksTheHighestSharedVersion() {
        #expect(ProtocolVersion.negotiate(clientMinimum: 1, clientMaximum: 5) == 2)
        #expect(ProtocolVersion.negotiate(clientMinimum: 1, clientMaximum: 1) == 1)  // a version 1 client
        #expect(ProtocolVersion.negotiate(clientMinimum: 1, clientMaximum: 5, serverSupported: 1...3) == 3)
        #expect(ProtocolVersion.negotiate(clientMinimum: 3, clientMaximum: 5) == nil)
    }
}
