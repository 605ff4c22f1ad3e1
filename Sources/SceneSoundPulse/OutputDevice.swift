/// The sink SceneSound plays on, as libpulse describes it on PulseAudio and on pipewire-pulse
/// alike (which maps the same keys from PipeWire's node and device): what the server chooses
/// the rendering from (docs/BEHAVIOUR.md "Output devices") and remembers settings for.
public struct OutputDevice: Equatable, Sendable {
    /// The active port: a jack's plug switches it (`analog-output-speaker` ↔
    /// `analog-output-headphones`).
    public struct Port: Equatable, Sendable {
        public var name: String
        public var description: String?
        /// `pa_device_port_type_t` by name (`headphones`, `speaker`, `hdmi`, …; PulseAudio ≥ 14),
        /// nil when the server says `unknown`.
        public var type: String?

        public init(name: String, description: String? = nil, type: String? = nil) {
            self.name = name
            self.description = description
            self.type = type
        }
    }

    public var sinkName: String
    public var description: String?
    /// `device.form_factor`: `headphone`, `headset`, `speaker`, `internal`, …
    public var formFactor: String?
    /// `device.bus`: `pci`, `usb`, `bluetooth`, …
    public var bus: String?
    public var port: Port?
    /// `api.bluez5.profile` (PipeWire) or `bluetooth.protocol` (PulseAudio): `a2dp_sink`,
    /// `headset_head_unit`, …
    public var bluetoothProfile: String?
    /// `api.bluez5.address`, else a Bluetooth sink's `device.string`.
    public var bluetoothAddress: String?
    /// The sink's channel map by libpulse's names (`front-left`, `lfe`, `rear-right`, …).
    public var channels: [String]

    public init(sinkName: String, description: String? = nil, formFactor: String? = nil, bus: String? = nil,
                port: Port? = nil, bluetoothProfile: String? = nil, bluetoothAddress: String? = nil,
                channels: [String] = ["front-left", "front-right"]) {
        self.sinkName = sinkName
        self.description = description
        self.formFactor = formFactor
        self.bus = bus
        self.port = port
        self.bluetoothProfile = bluetoothProfile
        self.bluetoothAddress = bluetoothAddress
        self.channels = channels
    }

    /// What settings are remembered under: a Bluetooth device by its address (whichever sink
    /// or profile it comes as), another by its sink name and, when it has ports, the active one
    /// (a laptop's speakers and the headphones in its jack are one sink, two ports).
    public var key: String {
        if let bluetoothAddress, !bluetoothAddress.isEmpty { return "bluez:" + bluetoothAddress }
        guard let port else { return sinkName }
        return sinkName + "#" + port.name
    }

    /// From a sink's proplist and facts (the keys both servers use).
    public init(sinkName: String, properties: [String: String], port: Port?, channels: [String]) {
        func value(_ key: String) -> String? { properties[key].flatMap { $0.isEmpty ? nil : $0 } }
        let bus = value("device.bus")
        self.init(sinkName: sinkName, description: value("device.description"),
                  formFactor: value("device.form_factor") ?? value("device.form-factor"),
                  bus: bus, port: port,
                  bluetoothProfile: value("api.bluez5.profile") ?? value("bluetooth.protocol"),
                  bluetoothAddress: value("api.bluez5.address") ?? (bus == "bluetooth" ? value("device.string") : nil),
                  channels: channels)
    }

    /// `pa_device_port_type_t`'s names (def.h), index = value.
    public static let portTypeNames = [
        "unknown", "aux", "speaker", "headphones", "line", "mic", "headset", "handset", "earpiece", "spdif", "hdmi",
        "tv", "radio", "video", "usb", "bluetooth", "portable", "handsfree", "car", "hifi", "phone", "network", "analog",
    ]

    public static func portTypeName(_ type: UInt32) -> String? {
        guard type > 0, Int(type) < portTypeNames.count else { return nil }
        return portTypeNames[Int(type)]
    }
}
