import Foundation
import SceneSoundProtocol
import SceneSoundStatusJSON
@testable import SceneSoundView
import Testing

/// The view's rules without a server: the token, the Host and Origin checks, the cookie.
@Suite struct ViewAccessTests {
    let access = ViewAccess(token: "00112233445566778899aabbccddeeff", port: 4711)

    func decide(_ uri: String, _ headers: [(String, String)]) -> ViewAccess.Decision {
        access.decide(uri: uri, headers: headers.map { (name: $0.0, value: $0.1) })
    }

    @Test func tokensAre128RandomBitsInHex() {
        let tokens = (0..<64).map { _ in ViewAccess.randomToken() }
        #expect(tokens.allSatisfy { $0.count == 32 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
        #expect(Set(tokens).count == tokens.count)
        // Every hex digit turns up in every position over many tokens: no fixed nibble.
        let positions = (0..<32).map { index in Set(tokens.map { Array($0)[index] }) }
        #expect(positions.allSatisfy { $0.count > 4 })
    }

    @Test func theTokenInTheURLOrTheCookieLetsIn() {
        #expect(decide("/?token=00112233445566778899aabbccddeeff", [("Host", "127.0.0.1:4711")]) == .allow(tokenInURL: true))
        #expect(decide("/view.js", [("host", "localhost:4711"), ("Cookie", "a=b; scenesound_view_4711=00112233445566778899aabbccddeeff")])
                == .allow(tokenInURL: false))
    }

    @Test func noTokenAWrongOneOrAnotherPortsCookieIsRefused() {
        for (uri, headers) in [
            ("/", [("Host", "127.0.0.1:4711")]),
            ("/?token=00112233445566778899aabbccddeefe", [("Host", "127.0.0.1:4711")]),
            ("/?token=00112233445566778899aabbccddeeff0", [("Host", "127.0.0.1:4711")]),
            ("/?token=", [("Host", "127.0.0.1:4711")]),
            ("/", [("Host", "127.0.0.1:4711"), ("Cookie", "scenesound_view_4712=00112233445566778899aabbccddeeff")]),
            ("/", [("Host", "127.0.0.1:4711"), ("Cookie", "scenesound_view_4711=")]),
        ] {
            guard case .refuse(403, _) = decide(uri, headers) else {
                Issue.record("\(uri) \(headers) was not refused with 403: \(decide(uri, headers))")
                continue
            }
        }
    }

    @Test func aForeignHostIsRefusedEvenWithTheToken() {
        let token = "/?token=00112233445566778899aabbccddeeff"
        for headers in [[("Host", "attacker.example:4711")], [("Host", "127.0.0.1:4712")], [("Host", "127.0.0.1")],
                        [("Host", "[::1]:4711")], [], [("Host", "127.0.0.1:4711"), ("Host", "attacker.example")]] {
            #expect(decide(token, headers) == .refuse(status: 421, reason: "the Host is not this server's loopback address and port"),
                    "\(headers)")
        }
    }

    @Test func aForeignOriginIsRefusedEvenWithTheToken() {
        let token = "/ws?token=00112233445566778899aabbccddeeff"
        for origin in ["http://attacker.example", "http://127.0.0.1:4712", "https://127.0.0.1:4711", "null", "http://localhost"] {
            guard case .refuse(403, _) = decide(token, [("Host", "127.0.0.1:4711"), ("Origin", origin)]) else {
                Issue.record("Origin \(origin) was let in")
                continue
            }
        }
        #expect(decide(token, [("Host", "127.0.0.1:4711"), ("Origin", "http://127.0.0.1:4711")]) == .allow(tokenInURL: true))
        #expect(decide(token, [("Host", "localhost:4711"), ("Origin", "http://localhost:4711")]) == .allow(tokenInURL: true))
    }

    @Test func theCookieIsHttpOnlyAndSameSiteStrict() {
        #expect(access.setCookieValue == "scenesound_view_4711=00112233445566778899aabbccddeeff; Path=/; HttpOnly; SameSite=Strict")
    }

    /// The page served is the page's files, as they are in the source tree.
    @Test func theEmbeddedPageIsThePagesFiles() throws {
        let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/SceneSoundView/Page").standardized
        func file(_ name: String) throws -> String { try String(contentsOf: page.appendingPathComponent(name), encoding: .utf8) }
        #expect(PageAssets.html == (try file("index.html")))
        #expect(PageAssets.style == (try file("view.css")))
        #expect(PageAssets.script == (try file("view.js")))
        // Nothing from anywhere else (the script's one address is SVG's namespace name).
        for text in [PageAssets.html, PageAssets.style, PageAssets.script] {
            for remote in ["src=\"http", "href=\"http", "src=\"//", "href=\"//", "url(", "@import", "fetch(", "XMLHttpRequest"] {
                #expect(!text.contains(remote), "\(remote)")
            }
        }
    }

    @Test func theModelMarksAlertsMuffledWindowsAndLevels() throws {
        let json = """
        {"version":1,"server":{"software":"x","pid":1,"uptime_seconds":1,"socket":"s"},
         "output":{"kind":"null","rate_hz":48000,"block_frames":256,"connected":true,"underruns":0,"reconnects":0,"rendered_seconds":1},
         "hrtf":{"path":"/a.sofa","measurements":1,"filter_taps":1,"rate_hz":48000},
         "head":{"yaw_degrees":12.34,"pitch_degrees":0,"roll_degrees":0,"quaternion":[1,0,0,0],"position_metres":[0,0,0],
                 "poses_received":0,"opentrack_packets":0,"opentrack_rejected_packets":0,"opentrack_rate_limited_packets":0},
         "display":{"connected":true},"monitors":[],"clients":[],
         "scenes":[{"id":"x11:0x1","kind":"window","state":"minimized","title":"t","application":"A","azimuth_degrees":10,
                    "elevation_degrees":0,"distance_metres":1,"position_metres":[-0.17,0,-0.98],"width_metres":0.4},
                   {"id":"bell","kind":"fixed","azimuth_degrees":0,"elevation_degrees":0,"distance_metres":1,"position_metres":[0,0,-1]}],
         "streams":[{"id":1,"client_id":1,"kind":"alert","scene":"bell","state":"playing","spatial":"anchored","volume_db":0,
                     "level_db":-20.4,"format":"f","buffered_seconds":0,"starved_seconds":0,"loop":false}],
         "render":{"load":0,"peak_load":0,"block_deadline_seconds":0.005,"hrtf_voices":0,"bus_voices":0,"kernels":"portable"},
         "health":{"connections":0,"refused_connections":0,"stalled_clients_dropped":0,"rate_limited_messages":0,
                   "governor_moves_to_bus":0,"governor_moves_to_hrtf":0,"rejected_frames":0,"dropped_engine_events":0,
                   "engine_commands_deferred":0,"engine_commands_waiting":0,"requests_refused_engine_behind":0}}
        """
        var status = try StatusDocument.jsonDecoder().decode(StatusDocument.self, from: Data(json.utf8))
        let model = SceneModel(status: status)
        #expect(model.headYawDegrees == 12.3)
        defer {
            // An alert played from the sample cache flashes its scene, with its level; a captured
            // app's level is its mark's.
            status.plays = [.init(id: 7, kind: "alert", scene: "x11:0x1", levelDecibels: -31.2)]
            status.scenes[0].streams = 1
            let withPlay = SceneModel(status: status)
            let window = withPlay.marks.first { $0.id == "x11:0x1" }
            #expect(window?.alert == true && window?.levelDecibels == -31 && window?.unlistedSounds == 0)
            status.plays = nil
            status.apps = .init(state: "capturing", started: 1, ended: 0, excluded: [], streams: [
                .init(application: "mpv", binary: "mpv", pid: 9, kind: "playback", eventID: nil, window: "0x1", windowFoundBy: "pid",
                      title: nil, scene: "x11:0x1", azimuthDegrees: 10, addedLatencySeconds: 0.02, starvedSeconds: 0,
                      droppedSeconds: 0, levelDecibels: -12.6)])
            let withApp = SceneModel(status: status).marks.first { $0.id == "x11:0x1" }
            #expect(withApp?.levelDecibels == -13 && withApp?.alert == false && withApp?.apps == ["mpv"])
        }
        let window = try #require(model.marks.first { $0.id == "x11:0x1" })
        #expect(window.state == "minimized" && window.levelDecibels == nil && !window.alert && window.widthMetres == 0.4 && !window.placed)
        let bell = try #require(model.marks.first { $0.id == "bell" })
        #expect(bell.alert && bell.levelDecibels == -20 && bell.placed)
        #expect(model.captureState == nil)
        // Units in every number's name.
        let encoded = String(decoding: try JSONEncoder().encode(model), as: UTF8.self)
        for key in ["head_yaw_degrees", "metres_across", "x_metres", "z_metres", "level_db", "width_metres"] {
            #expect(encoded.contains("\"\(key)\""), "\(key)")
        }
    }
}
