// The output device the mix plays on, the rendering chosen for it and why, and the devices the
// server has seen with what each remembers (SPEC.md §6.8: `output_device`, `rendering`,
// `devices`).

extension StatusDocument {
    /// The sink SceneSound plays on, as the sound server describes it.
    public struct OutputDevice: Codable, Equatable, Sendable {
        /// What its settings are remembered under: `bluez:ADDRESS`, else the sink's name and
        /// `#PORT` when it has an active port.
        public var key: String
        public var sink: String
        public var description: String?
        public var formFactor: String?
        public var bus: String?
        public var port: String?
        public var portDescription: String?
        /// `headphones`, `speaker`, `hdmi`, … (PulseAudio ≥ 14's port types).
        public var portType: String?
        public var bluetoothProfile: String?
        public var bluetoothAddress: String?
        /// The sink's channel map (`front-left`, `lfe`, …).
        public var channels: [String]

        public init(key: String, sink: String, description: String? = nil, formFactor: String? = nil, bus: String? = nil,
                    port: String? = nil, portDescription: String? = nil, portType: String? = nil,
                    bluetoothProfile: String? = nil, bluetoothAddress: String? = nil, channels: [String]) {
            self.key = key
            self.sink = sink
            self.description = description
            self.formFactor = formFactor
            self.bus = bus
            self.port = port
            self.portDescription = portDescription
            self.portType = portType
            self.bluetoothProfile = bluetoothProfile
            self.bluetoothAddress = bluetoothAddress
            self.channels = channels
        }

        enum CodingKeys: String, CodingKey {
            case key, sink, description, bus, port, channels
            case formFactor = "form_factor", portDescription = "port_description", portType = "port_type"
            case bluetoothProfile = "bluetooth_profile", bluetoothAddress = "bluetooth_address"
        }
    }

    /// How the mix is rendered for the device now.
    public struct Rendering: Codable, Equatable, Sendable {
        /// `binaural` or `speakers`.
        public var method: String
        /// `2.0`, `5.1`, `7.1` (speakers only).
        public var speakerLayout: String?
        /// The output's channels.
        public var channels: Int
        /// `off`, `fixed`, `head-tracked`: the listener's choice for the device.
        public var spatial: String
        /// Why this method: `form factor headphone`, `port analog-output-speaker`,
        /// `unknown sink: headphones`, `--render speakers`, …
        public var reason: String
        /// `--render`: `auto`, `headphones`, `speakers`.
        public var preference: String

        public init(method: String, speakerLayout: String? = nil, channels: Int, spatial: String, reason: String, preference: String) {
            self.method = method
            self.speakerLayout = speakerLayout
            self.channels = channels
            self.spatial = spatial
            self.reason = reason
            self.preference = preference
        }

        enum CodingKeys: String, CodingKey {
            case method, channels, spatial, reason, preference
            case speakerLayout = "speaker_layout"
        }
    }

    /// A device seen (now or before a restart) and what the listener chose for it; a choice
    /// absent is the defaults'.
    public struct Device: Codable, Equatable, Sendable {
        public var key: String
        public var sink: String
        public var description: String?
        /// The one playing now.
        public var playing: Bool
        public var spatial: String?
        public var hrtf: String?
        /// A file, or `none`.
        public var headphoneEQ: String?
        /// `auto`, `headphones`, `speakers` (`RENDER_USE`).
        public var render: String?

        public init(key: String, sink: String, description: String? = nil, playing: Bool, spatial: String? = nil,
                    hrtf: String? = nil, headphoneEQ: String? = nil, render: String? = nil) {
            self.render = render
            self.key = key
            self.sink = sink
            self.description = description
            self.playing = playing
            self.spatial = spatial
            self.hrtf = hrtf
            self.headphoneEQ = headphoneEQ
        }

        enum CodingKeys: String, CodingKey {
            case key, sink, description, playing, spatial, hrtf, render
            case headphoneEQ = "headphone_eq"
        }
    }
}

extension StatusDocument {
    /// What `OUTPUT_DEVICE_CHANGED` carries: the device (absent when none is known) and the
    /// rendering, as in the status document.
    public struct OutputDeviceState: Codable, Equatable, Sendable {
        public var outputDevice: OutputDevice?
        public var rendering: Rendering

        public init(outputDevice: OutputDevice?, rendering: Rendering) {
            self.outputDevice = outputDevice
            self.rendering = rendering
        }

        enum CodingKeys: String, CodingKey {
            case outputDevice = "output_device", rendering
        }
    }
}
