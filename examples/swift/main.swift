// scenesound-two-windows: opens two X11 windows with XCB and plays a tone at each, so that each
// tone sounds from its window and follows it when it is dragged; the SceneSoundClient idioms
// as a program would use them.
//
//   scenesound-two-windows [--seconds S] [--socket PATH] [--by-pid] [--file FILE]
//
// Each tone is a SceneSoundSourceNode (pull mode, like AVAudioSourceNode), head-tracked at its
// window's scene (x11:0x<hex>). --by-pid anchors them `.automatic` instead: no scene at all, the
// server finds this program's windows through _NET_WM_PID (the socket peer's pid). --file also
// plays FILE in a loop with a SceneSoundPlayer at the first window, and a system sound greets
// the windows when they appear.

import CXCB
import Foundation
import SceneSoundClient
import SceneSoundProtocol
#if canImport(Glibc)
import Glibc
#endif

struct Options {
    var seconds: Double = .infinity
    var socket: String?
    var byPID = false
    var file: String?

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--seconds": seconds = rest.popFirst().flatMap(Double.init) ?? seconds
            case "--socket": socket = rest.popFirst()
            case "--by-pid": byPID = true
            case "--file": file = rest.popFirst()
            default: fail("unknown argument '\(argument)' (accepted: --seconds S, --socket PATH, --by-pid, --file FILE)", status: 2)
            }
        }
    }
}

func fail(_ message: String, status: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("scenesound-two-windows: \(message)\n".utf8))
    exit(status)
}

/// A plain top-level window: titled, tagged with our pid (`_NET_WM_PID`) and class, mapped.
func openWindow(_ connection: OpaquePointer, _ screen: xcb_screen_t, x: Int16, title: String) -> xcb_window_t {
    let window = xcb_generate_id(connection)
    var values: [UInt32] = [screen.white_pixel]
    xcb_create_window(connection, UInt8(XCB_COPY_FROM_PARENT), window, screen.root, x, 200, 480, 320, 0,
                      UInt16(XCB_WINDOW_CLASS_INPUT_OUTPUT.rawValue), screen.root_visual, XCB_CW_BACK_PIXEL.rawValue, &values)
    func setProperty(_ name: String, type: xcb_atom_t, format: UInt8, _ bytes: [UInt8]) {
        let cookie = xcb_intern_atom(connection, 0, UInt16(name.utf8.count), name)
        guard let reply = xcb_intern_atom_reply(connection, cookie, nil) else { return }
        defer { free(reply) }
        xcb_change_property(connection, UInt8(XCB_PROP_MODE_REPLACE.rawValue), window, reply.pointee.atom, type, format,
                            UInt32(bytes.count / Int(format / 8)), bytes)
    }
    let string = xcb_atom_t(XCB_ATOM_STRING.rawValue)
    setProperty("WM_NAME", type: string, format: 8, Array(title.utf8))
    setProperty("WM_CLASS", type: string, format: 8, Array("two-windows\0SceneSoundExample\0".utf8))
    withUnsafeBytes(of: UInt32(getpid()).littleEndian) {
        setProperty("_NET_WM_PID", type: xcb_atom_t(XCB_ATOM_CARDINAL.rawValue), format: 32, Array($0))
    }
    xcb_map_window(connection, window)
    return window
}

/// A sine that never ends, generated as the server asks for it.
func tone(frequencyHz: Double, at experience: SpatialExperience) throws(ClientError) -> SceneSoundSourceNode {
    var phase = 0.0
    let step = 2 * Double.pi * frequencyHz / 48000
    return try SceneSoundSourceNode(sampleRateHz: 48000, channels: 1, spatialExperience: experience) { frames, buffer in
        for frame in 0..<frames {
            buffer[frame] = Float(sin(phase)) * 0.2
            phase = (phase + step).truncatingRemainder(dividingBy: 2 * .pi)
        }
        return frames
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
var screenNumber: Int32 = 0
guard let x = xcb_connect(nil, &screenNumber), xcb_connection_has_error(x) == 0 else {
    fail("cannot open the X display (is DISPLAY set?)")
}
let screen = xcb_setup_roots_iterator(xcb_get_setup(x)).data.pointee
let windows = [openWindow(x, screen, x: 100, title: "SceneSound: 440 Hz"),
               openWindow(x, screen, x: 1200, title: "SceneSound: 660 Hz")]
xcb_flush(x)

// Every idiom below shares the default connection: $SCENESOUND_SOCKET, else the usual path.
if let socket = options.socket { setenv("SCENESOUND_SOCKET", socket, 1) }

var tones: [SceneSoundSourceNode] = []
var player: SceneSoundPlayer?
do {
    for (window, frequency) in zip(windows, [440.0, 660.0]) {
        let experience: SpatialExperience = options.byPID ? .headTracked(.automatic)
            : .headTracked(.scene(identifier: SceneID.forX11Window(window)))
        let node = try tone(frequencyHz: frequency, at: experience)
        try node.start()
        tones.append(node)
    }
    print("playing: 440 Hz at window 0x\(String(windows[0], radix: 16)), 660 Hz at window 0x\(String(windows[1], radix: 16))")
    if let file = options.file {
        let first = SpatialExperience.headTracked(.scene(identifier: SceneID.forX11Window(windows[0])))
        try SceneSound.playSystemSound("window-attention", spatialExperience: first)
        let filePlayer = try SceneSoundPlayer(contentsOf: URL(fileURLWithPath: file))
        filePlayer.intendedSpatialExperience = first
        filePlayer.numberOfLoops = -1
        try filePlayer.play()
        player = filePlayer
        print("playing \(file) at window 0x\(String(windows[0], radix: 16))")
    }
} catch {
    fail("\(error)")
}

let end = Date().addingTimeInterval(options.seconds)
while Date() < end && xcb_connection_has_error(x) == 0 { usleep(100_000) }
player?.stop()
for node in tones { node.stop() }
xcb_disconnect(x)
