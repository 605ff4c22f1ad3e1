// scenesound-two-windows: opens two X11 windows with XCB and plays a looping tone anchored to
// each, so that each tone sounds from its window and follows it when it is dragged.
//
//   scenesound-two-windows [--seconds S] [--socket PATH] [--by-pid]
//
// --by-pid plays to no scene at all: the server then finds this program's windows through
// _NET_WM_PID (the socket peer's pid), which every program gets without binding anything.

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

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--seconds": seconds = rest.popFirst().flatMap(Double.init) ?? seconds
            case "--socket": socket = rest.popFirst()
            case "--by-pid": byPID = true
            default: fail("unknown argument '\(argument)' (accepted: --seconds S, --socket PATH, --by-pid)", status: 2)
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

/// One second of a sine, interleaved f32le mono.
func tone(frequencyHz: Double) -> [UInt8] {
    (0..<48000).flatMap { n -> [UInt8] in
        let sample = Float(sin(2 * .pi * frequencyHz * Double(n) / 48000) * 0.2)
        return withUnsafeBytes(of: sample.bitPattern.littleEndian) { Array($0) }
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

let sound: ClientConnection
do {
    let path = try SocketPath.resolve(explicit: options.socket, environment: ProcessInfo.processInfo.environment)
    sound = try ClientConnection(socketPath: path, clientName: "scenesound-two-windows")
} catch {
    fail("\(error)")
}

var streams: [ClientStream] = []
do {
    for (window, frequency) in zip(windows, [440.0, 660.0]) {
        let scene = options.byPID ? "" : SceneID.forX11Window(window)
        let stream = try sound.openStream(StreamOpen(kind: .playback, format: AudioFormat(sampleFormat: .f32le, rateHz: 48000, channels: 1),
                                                     spatialMode: .anchored, loop: true, volumeDecibels: 0, sceneID: scene))
        try stream.write(tone(frequencyHz: frequency))
        streams.append(stream)
    }
    // A loop repeats what was sent before its first drain; both loop from here on.
    for stream in streams { try stream.drain() }
    print("playing: 440 Hz at window 0x\(String(windows[0], radix: 16)), 660 Hz at window 0x\(String(windows[1], radix: 16))")
} catch {
    fail("\(error)")
}

let end = Date().addingTimeInterval(options.seconds)
while Date() < end && xcb_connection_has_error(x) == 0 { usleep(100_000) }
for stream in streams { try? stream.close() }
sound.close()
xcb_disconnect(x)
