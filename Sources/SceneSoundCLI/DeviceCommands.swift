import ArgumentParser
import Foundation
import SceneSoundClient
import SceneSoundProtocol
import SceneSoundStatusJSON

extension DeviceSpatial: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
    public static var allValueStrings: [String] { allCases.map(\.name) }
    public var defaultValueDescription: String { name }
}

extension DeviceRender: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
    public static var allValueStrings: [String] { allCases.map(\.name) }
    public var defaultValueDescription: String { name }
}

/// `scenesound device render auto|headphones|speakers`: how the output device playing now is
/// rendered, remembered for that device (over the daemon's `--render`).
struct DeviceRenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Set how the output device playing now is rendered: auto, headphones or speakers; remembered for the device.",
        discussion: """
            auto: from what the sink says (its port, form factor, Bluetooth profile); headphones: \
            binaural whatever it says; speakers: panned over its speakers (2.0, 5.1 or 7.1 from its \
            channel map). Over scenesoundd's --render for this device; 'scenesound device' shows the \
            choice and the rendering.
            """)

    @Argument(help: ArgumentHelp("How to render.", valueName: "auto|headphones|speakers"))
    var render: DeviceRender

    @OptionGroup var server: ServerOptions

    func run() throws {
        try server.exchange { connection throws(ClientError) in try connection.useRender(render) }
    }
}

/// `scenesound spatial off|fixed|head-tracked`: the spatial mode of the output device playing
/// now (Apple's Off / Fixed / Head Tracked), remembered for that device.
struct SpatialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spatial",
        abstract: "Set the spatial mode of the output device playing now: off, fixed or head-tracked; remembered for the device.",
        discussion: """
            off: plain stereo; fixed: placed, head poses ignored; head-tracked: placed and turned \
            against the head (speakers stay in the room). Each output device remembers its mode, \
            HRTF set ('scenesound hrtf use') and EQ ('scenesound eq use'): plugging it in again \
            brings them back. 'scenesound device' lists the devices and what each remembers.
            """)

    @Argument(help: ArgumentHelp("The mode.", valueName: "off|fixed|head-tracked"))
    var spatial: DeviceSpatial

    @OptionGroup var server: ServerOptions

    func run() throws {
        try server.exchange { connection throws(ClientError) in try connection.useSpatial(spatial) }
    }
}

/// `scenesound device [--json]`: the output devices the server has seen, what each remembers,
/// and which one plays now with the rendering chosen for it.
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "List the output devices seen, what each remembers (spatial mode, HRTF set, EQ, rendering) and which one plays now.",
        discussion: """
            --json prints the status document's output_device, rendering and devices \
            (protocol/SPEC.md, section 6.8) as one line. --follow prints the device playing and its \
            rendering, then a line at each change (OUTPUT_DEVICE_CHANGED), until interrupted; with \
            --json each line is the event's JSON. 'scenesound device render auto|headphones|speakers' \
            sets how the device playing now is rendered.
            """,
        subcommands: [DeviceRenderCommand.self])

    @Flag(help: "Print the devices as JSON.")
    var json = false

    @Flag(help: "Print the device playing and its rendering at each change, until interrupted.")
    var follow = false

    @OptionGroup var server: ServerOptions

    struct Listing: Codable {
        var outputDevice: StatusDocument.OutputDevice?
        var rendering: StatusDocument.Rendering?
        var devices: [StatusDocument.Device]

        enum CodingKeys: String, CodingKey {
            case outputDevice = "output_device", rendering, devices
        }
    }

    func run() throws {
        if follow { return try followChanges() }
        let document = try server.exchange { connection throws(ClientError) in try connection.status() }
        let status = try StatusDocument(json: document)
        let listing = Listing(outputDevice: status.outputDevice, rendering: status.rendering, devices: status.devices ?? [])
        if json {
            print(String(decoding: try StatusDocument.jsonEncoder().encode(listing), as: UTF8.self))
            return
        }
        if let rendering = status.rendering {
            let state = StatusDocument.OutputDeviceState(outputDevice: status.outputDevice, rendering: rendering)
            print("playing  " + Self.line(StatusDocument.jsonLine(state)))
        }
        if listing.devices.isEmpty {
            print("no output device seen yet")
            return
        }
        for device in listing.devices {  // in the order first seen
            let choices = [device.spatial.map { "spatial \($0)" }, device.hrtf.map { "hrtf \($0)" },
                           device.headphoneEQ.map { "eq \($0)" }, device.render.map { "render \($0)" }].compactMap { $0 }
            print("\(device.playing ? "*" : " ") \(device.key)\(device.description.map { " (\($0))" } ?? ""): "
                  + (choices.isEmpty ? "the defaults" : choices.joined(separator: ", ")))
        }
    }

    /// One line per `OUTPUT_DEVICE_CHANGED`, flushed, until the connection ends.
    private func followChanges() throws {
        let connection = try server.connect()
        let ended = DispatchSemaphore(value: 0)
        let json = json
        connection.setEventHandler { event in
            switch event {
            case .outputDeviceChanged(let changed):
                // Written at once, whole lines: a pipe's reader sees each change as it comes.
                FileHandle.standardOutput.write(Data(((json ? changed.json : Self.line(changed.json)) + "\n").utf8))
            case .disconnected:
                ended.signal()
            default:
                break
            }
        }
        try withClientErrors { () throws(ClientError) in try connection.watchOutputDevice() }
        ended.wait()
        throw RuntimeError("the server closed the connection")
    }

    static func line(_ json: String) -> String {
        guard let state = try? StatusDocument.jsonDecoder().decode(StatusDocument.OutputDeviceState.self, from: Data(json.utf8)) else {
            return json
        }
        let rendering = state.rendering
        let device = state.outputDevice.map { device in device.description.map { "\(device.key) (\($0))" } ?? device.key } ?? "unknown"
        return "\(device): \(rendering.method)\(rendering.speakerLayout.map { " \($0)" } ?? "") \(rendering.spatial), because \(rendering.reason)"
    }
}
