import ArgumentParser
import Foundation
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundWindows
import SceneSoundOutputs
import SceneSoundProtocol
import SceneSoundServer
import SceneSoundSOFA
import Logging
import SceneSoundCLI

// Room and HRTFEqualization are ExpressibleByArgument through SceneSoundCLI, which this
// program carries (ProgramName): a second conformance in one program would be redundant.

/// The daemon's flags (README "The daemon"). Every flag is checked here, before anything
/// starts, and a bad value is one line naming the flag and what it accepts.
struct DaemonOptions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenesoundd",
        abstract: "The SceneSound sound server: spatial, head-tracked, window-anchored audio.",
        version: SceneSoundRelease.version)

    @Option(help: ArgumentHelp("A TOML config file; every flag has a key (max_clients for --max-clients). Default: $XDG_CONFIG_HOME/scenesound/config.toml.", valueName: "FILE"))
    var config: String?

    @Option(help: ArgumentHelp("The Unix socket (default: $SCENESOUND_SOCKET, else $XDG_RUNTIME_DIR/scenesound/socket).", valueName: "PATH"))
    var socket: String?

    @Option(help: ArgumentHelp("Where the mix goes: pipewire, pipewire:SINK, pulse, pulse:SINK, wav:PATH or null (default: pipewire when the session's sound server is PipeWire, else pulse).", valueName: "OUTPUT"))
    var output: String?

    @Option(name: .customLong("rate"), parsing: .unconditional, help: ArgumentHelp("Output sample rate.", valueName: "HZ"))
    var rateHz: Int = 48000

    @Option(name: .customLong("block"), parsing: .unconditional, help: ArgumentHelp("Render quantum in frames.", valueName: "FRAMES"))
    var blockFrames: Int = 256

    @Option(name: .customLong("hrtf"), help: ArgumentHelp("The HRTF set (any AES69 SOFA file); it wins over the set last chosen with 'scenesound hrtf use' (default: that one, else \(SOFAFile.defaultPath)).", valueName: "FILE.sofa"))
    var explicitHRTFPath: String?

    @Option(name: .customLong("hrtf-eq"), help: ArgumentHelp("How the set is equalized: diffuse (diffuse-field, a neutral timbre) or none (as measured).", valueName: "diffuse|none"))
    var hrtfEqualization: HRTFEqualization = .diffuse

    @Option(name: .customLong("head-width-cm"), parsing: .unconditional, help: ArgumentHelp("The listener's head width, ear to ear (10 to 25 cm): the HRTF set's ITD is scaled to it (default: the set's own, KEMAR's 15.2 cm).", valueName: "CM"))
    var headWidthCentimetres: Double?

    @Option(name: .customLong("headphone-eq"), help: ArgumentHelp("Equalize the headphones with an AutoEQ ParametricEQ.txt (switched live with 'scenesound eq use').", valueName: "FILE"))
    var headphoneEQPath: String?

    @Option(help: ArgumentHelp("The X display to follow windows on, or none.", valueName: "DISPLAY"))
    var display: String?

    @Option(help: ArgumentHelp("Where window geometry comes from: auto (the session's compositor: SWAYSOCK, HYPRLAND_INSTANCE_SIGNATURE, org.kde.KWin or org.gnome.Shell on the session bus; else X11 on DISPLAY), x11, sway, hyprland, kwin, gnome or none.",
                               valueName: "auto|x11|sway|hyprland|kwin|gnome|none"))
    var windows: String = "auto"

    @Option(help: ArgumentHelp("How the mix is rendered for the output device: auto (from the sink: its active port, form factor, Bluetooth profile, channel map; followed live), headphones (binaural) or speakers (panned over the sink's 2.0, 5.1 or 7.1 speakers).",
                               valueName: "auto|headphones|speakers"))
    var render: String = "auto"

    @Option(name: .customLong("device-defaults"), help: ArgumentHelp("What an output device with no choice of its own plays with: spatial=off|fixed|head-tracked, hrtf=FILE.sofa, eq=FILE|none, separated by commas (each device's own choices, made with 'scenesound spatial', 'hrtf use' and 'eq use', are remembered).",
                                                                     valueName: "SETTINGS"))
    var deviceDefaults: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("opentrack UDP head-pose input on 127.0.0.1, or off.", valueName: "PORT|off"))
    var opentrack: String = "4242"

    @Option(name: .customLong("max-opentrack-packets-per-second"), parsing: .unconditional, help: "opentrack datagrams decoded per second; more are dropped and counted (10 to 100000).")
    var maximumOpenTrackPacketsPerSecond: Int = 1000

    @Option(parsing: .unconditional, help: ArgumentHelp("OSC head-pose input (IEM SceneRotator's /SceneRotator/ypr and /quaternions, and --osc-address) on 127.0.0.1:PORT, on ADDRESS:PORT, or off.", valueName: "PORT|ADDRESS:PORT|off"))
    var osc: String = "off"

    @Option(name: .customLong("osc-address"), help: ArgumentHelp("Another OSC sender's address to read head poses from, its arguments as --osc-axes says.", valueName: "PATH"))
    var oscAddress: String?

    @Option(name: .customLong("osc-axes"), help: ArgumentHelp("What each argument of --osc-address is, in order: yaw,pitch,roll (degrees) or w,x,y,z (a quaternion) in SceneSound's axes, each optionally negated (e.g. -yaw,pitch,roll).", valueName: "AXES"))
    var oscAxes: String = OSCPoseFormat.defaultAxes

    @Option(name: .customLong("max-osc-packets-per-second"), parsing: .unconditional, help: "OSC datagrams decoded per second; more are dropped and counted (10 to 100000).")
    var maximumOSCPacketsPerSecond: Int = 1000

    @Option(name: .customLong("head-tracking"), help: ArgumentHelp("What the sound follows of a tracked head: full, yaw-only, or off (trackers ignored).", valueName: "MODE"))
    var headTracking: String = HeadTrackingMode.full.rawValue

    @Option(name: .customLong("head-prediction"), help: ArgumentHelp("Extrapolate the head pose over the output's latency: on or off.", valueName: "on|off"))
    var headPrediction: String = "on"

    @Option(name: .customLong("head-recenter-seconds"), parsing: .unconditional, help: ArgumentHelp("Once the tracked head has rested this long, straight ahead glides to where it rests (yaw drift cured; 1 to 3600; default off).", valueName: "S"))
    var headRecenterSeconds: Double?

    @Option(help: "Late reverb for externalisation: none, small or medium.")
    var room: Room = .small

    @Option(name: .customLong("hrtf-voices"), parsing: .unconditional,
            help: ArgumentHelp("Most sources rendered on their own HRTF voices (a stereo stream takes two); the rest share the ambisonic bus (0 to 2048; 0 = the bus alone).", valueName: "N"))
    var maximumHRTFVoices: Int = EngineConfiguration.defaultMaximumHRTFVoices

    @Option(name: .customLong("max-clients"), parsing: .unconditional, help: "Most clients connected at once.")
    var maximumClients: Int = 64

    @Option(name: .customLong("max-streams-per-client"), parsing: .unconditional, help: "Most streams one client may have open.")
    var maximumStreamsPerClient: Int = 16

    @Option(name: .customLong("max-frame-bytes"), parsing: .unconditional, help: "Largest protocol frame accepted (4096 or more).")
    var maximumFrameBytes: Int = 262_144

    @Option(name: .customLong("stream-buffer-seconds"), parsing: .unconditional, help: "Audio buffered per stream (0.05 to 10).")
    var streamBufferSeconds: Double = 0.4

    @Option(name: .customLong("max-messages-per-second"), parsing: .unconditional, help: "Messages a client may send per second, audio excepted (10 to 1000000).")
    var maximumMessagesPerSecond: Int = 2000

    @Option(name: .customLong("sample-cache-bytes"), parsing: .unconditional, help: "Bound of the system/alert sound cache (1 MiB to 1 GiB).")
    var sampleCacheBytes: Int = 64 * 1024 * 1024

    @Option(name: .customLong("duck-db"), parsing: .unconditional, help: ArgumentHelp("How far playback ducks under an alert (-60 to 0 dB; 0 = off).", valueName: "DB"))
    var duckDecibels: Double = -12

    @Option(name: .customLong("coalesce-seconds"), parsing: .unconditional, help: "Identical sounds within this window play once (0 to 2; 0 = off).")
    var coalesceSeconds: Double = 0.1

    @Flag(name: .customLong("flash-alert-windows"), help: "Flag an alert's window for attention (_NET_WM_STATE_DEMANDS_ATTENTION).")
    var flashAlertWindows = false

    @Option(name: .customLong("hidden-window-db"), parsing: .unconditional, help: ArgumentHelp("Level of a minimized or hidden window's sounds (-60 to 0 dB).", valueName: "DB"))
    var hiddenWindowDecibels: Double = -12

    @Option(name: .customLong("hidden-window-cutoff-hz"), parsing: .unconditional, help: ArgumentHelp("Low-pass of a minimized or hidden window's sounds (200 to 20000 Hz).", valueName: "HZ"))
    var hiddenWindowCutoffHz: Double = 800

    @Option(name: .customLong("rest-after-seconds"), parsing: .unconditional, help: ArgumentHelp("Silence after which the output (and, with --capture-apps, the capture) rests, so that the sink may suspend and the card sleep (0.1 to 3600).", valueName: "S"))
    var restAfterSeconds: Double = EngineConfiguration.defaultRestAfterSeconds

    @Flag(name: .customLong("capture-apps"), help: "Take over other programs' playback streams on the default sink and play each from its window (PulseAudio or PipeWire).")
    var captureApps = false

    @Option(name: .customLong("capture-exclude"), help: ArgumentHelp("A program --capture-apps leaves alone, by binary or application name; repeatable.", valueName: "NAME"))
    var captureExclude: [String] = []

    @Flag(name: .customLong("allow-root"), help: "Also accept clients running as root.")
    var allowRoot = false

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func validate() throws {
        guard RenderPreference(rawValue: render) != nil else {
            throw ValidationError("--render '\(render)' is not valid (accepted: \(RenderPreference.acceptedValues))")
        }
        if let deviceDefaults {
            do { _ = try DeviceSettings(parsingDefaults: deviceDefaults) } catch {
                throw ValidationError("--device-defaults \(error)")
            }
        }
        guard WindowBackendChoice(rawValue: windows) != nil else {
            throw ValidationError("--windows '\(windows)' is not valid (accepted: \(WindowBackendChoice.acceptedValues))")
        }
        if let output, OutputSpecification(output) == nil {
            throw ValidationError("--output '\(output)' is not valid (accepted: \(OutputSpecification.accepted))")
        }
        guard EngineConfiguration.sampleRateRange.contains(Double(rateHz)) else {
            throw ValidationError("--rate \(rateHz) is out of range (accepted: 8000 to 192000 Hz)")
        }
        guard EngineConfiguration.blockFramesRange.contains(blockFrames),
              blockFrames % EngineConfiguration(blockFrames: blockFrames).subBlockCount == 0
        else {
            throw ValidationError("--block \(blockFrames) is not usable (accepted: 128 to 8192 frames that split into equal parts of at least 128, e.g. 256 or 480)")
        }
        guard EngineConfiguration.maximumHRTFVoicesRange.contains(maximumHRTFVoices) else {
            let range = EngineConfiguration.maximumHRTFVoicesRange
            throw ValidationError("--hrtf-voices \(maximumHRTFVoices) is out of range (accepted: \(range.lowerBound) to \(range.upperBound))")
        }
        guard (1...4096).contains(maximumClients) else {
            throw ValidationError("--max-clients \(maximumClients) is out of range (accepted: 1 to 4096)")
        }
        guard (1...256).contains(maximumStreamsPerClient) else {
            throw ValidationError("--max-streams-per-client \(maximumStreamsPerClient) is out of range (accepted: 1 to 256)")
        }
        guard (4096...(16 << 20)).contains(maximumFrameBytes) else {
            throw ValidationError("--max-frame-bytes \(maximumFrameBytes) is out of range (accepted: 4096 to 16777216)")
        }
        guard (10...100_000).contains(maximumOpenTrackPacketsPerSecond) else {
            throw ValidationError("--max-opentrack-packets-per-second \(maximumOpenTrackPacketsPerSecond) is out of range (accepted: 10 to 100000)")
        }
        guard (10...1_000_000).contains(maximumMessagesPerSecond) else {
            throw ValidationError("--max-messages-per-second \(maximumMessagesPerSecond) is out of range (accepted: 10 to 1000000)")
        }
        let ranges: [(String, Double, ClosedRange<Double>, String)] = [
            ("--sample-cache-bytes", Double(sampleCacheBytes), 1_048_576...1_073_741_824, "1048576 to 1073741824 bytes"),
            ("--duck-db", duckDecibels, -60...0, "-60 to 0 dB"),
            ("--coalesce-seconds", coalesceSeconds, 0...2, "0 to 2 seconds"),
            ("--hidden-window-db", hiddenWindowDecibels, -60...0, "-60 to 0 dB"),
            ("--hidden-window-cutoff-hz", hiddenWindowCutoffHz, 200...20000, "200 to 20000 Hz"),
            ("--rest-after-seconds", restAfterSeconds, EngineConfiguration.restAfterSecondsRange, "0.1 to 3600 seconds"),
        ]
        for (flag, value, range, accepted) in ranges where !(value.isFinite && range.contains(value)) {
            throw ValidationError("\(flag) \(value) is out of range (accepted: \(accepted))")
        }
        if let width = headWidthCentimetres, !(width.isFinite && HRTFSet.headWidthRangeCentimetres.contains(width)) {
            throw ValidationError("--head-width-cm \(width) is out of range (accepted: 10 to 25 cm)")
        }
        guard (0.05...10).contains(streamBufferSeconds) else {
            throw ValidationError("--stream-buffer-seconds \(streamBufferSeconds) is out of range (accepted: 0.05 to 10)")
        }
        guard opentrack == "off" || (Int(opentrack).map { (1...65535).contains($0) } ?? false) else {
            throw ValidationError("--opentrack '\(opentrack)' is not valid (accepted: a UDP port 1 to 65535, or off)")
        }
        guard osc == "off" || oscEndpoint != nil else {
            throw ValidationError("--osc '\(osc)' is not valid (accepted: a UDP port 1 to 65535, ADDRESS:PORT, or off)")
        }
        if let oscAddress {
            do { _ = try OSCPoseFormat(address: oscAddress, axes: oscAxes) } catch {
                let flag = error.description.hasPrefix("'\(oscAddress)'") ? "--osc-address" : "--osc-axes"
                throw ValidationError("\(flag) \(error.description)")
            }
        } else if oscAxes != OSCPoseFormat.defaultAxes {
            do { _ = try OSCPoseFormat(address: "/unused", axes: oscAxes) } catch { throw ValidationError("--osc-axes \(error.description)") }
        }
        guard (10...100_000).contains(maximumOSCPacketsPerSecond) else {
            throw ValidationError("--max-osc-packets-per-second \(maximumOSCPacketsPerSecond) is out of range (accepted: 10 to 100000)")
        }
        guard HeadTrackingMode(rawValue: headTracking) != nil else {
            throw ValidationError("--head-tracking '\(headTracking)' is not valid (accepted: full, yaw-only, off)")
        }
        guard ["on", "off"].contains(headPrediction) else {
            throw ValidationError("--head-prediction '\(headPrediction)' is not valid (accepted: on, off)")
        }
        if let headRecenterSeconds, !(headRecenterSeconds.isFinite && (1...3600).contains(headRecenterSeconds)) {
            throw ValidationError("--head-recenter-seconds \(headRecenterSeconds) is out of range (accepted: 1 to 3600 seconds)")
        }
        if let empty = captureExclude.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
            throw ValidationError("--capture-exclude: entry \(empty + 1) is empty (accepted: a binary or application name, e.g. firefox)")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level '\(logLevel)' is not valid (accepted: trace, debug, info, notice, warning, error, critical)")
        }
    }

    var openTrackPort: Int? { Int(opentrack) }

    /// `--osc`: nil when off; a bare port listens on 127.0.0.1.
    var oscEndpoint: (host: String, port: Int)? {
        guard osc != "off" else { return nil }
        var host = "127.0.0.1", portText = Substring(osc)
        if let colon = osc.lastIndex(of: ":") {
            host = String(osc[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            portText = osc[osc.index(after: colon)...]
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == "." || $0 == ":" }) else { return nil }
        }
        guard let port = Int(portText), (1...65535).contains(port) else { return nil }
        return (host, port)
    }

    /// The head-tracking choices, checked by `validate()`.
    var headTrackingSettings: HeadTrackingSettings {
        var settings = HeadTrackingSettings()
        settings.mode = HeadTrackingMode(rawValue: headTracking) ?? .full
        settings.prediction = headPrediction == "on"
        settings.recenterAfterSeconds = headRecenterSeconds
        return settings
    }

    /// `--osc-address` with its `--osc-axes`, checked by `validate()`.
    var oscFormat: OSCPoseFormat? { oscAddress.flatMap { try? OSCPoseFormat(address: $0, axes: oscAxes) } }

    /// `--socket`, else $SCENESOUND_SOCKET, else $XDG_RUNTIME_DIR/scenesound/socket.
    func socketPath(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        if let socket { return socket }
        if let path = environment["SCENESOUND_SOCKET"], !path.isEmpty { return path }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/scenesound/socket" }
        throw ValidationError("no socket path: pass --socket, or set SCENESOUND_SOCKET or XDG_RUNTIME_DIR")
    }
}

