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

    @Test func versionNegotiationPicksTheHighestSharedVersion() {
        #expect(ProtocolVersion.negotiate(clientMinimum: 1, clientMaximum: 5) == 2)
        #expect(ProtocolVersion.negotiate(clientMinimum: 1, clientMaximum: 1) == 1)  // a version 1 client
        #expect(ProtocolVersion.negotiate(clientMinimum: 1, clientMaximum: 5, serverSupported: 1...3) == 3)
        #expect(ProtocolVersion.negotiate(clientMinimum: 3, clientMaximum: 5) == nil)
    }
}
