import SceneSoundEngine
import SceneSoundPulse

/// `--render` (key `render`): how the mix is rendered for the output device.
public enum RenderPreference: String, CaseIterable, Sendable {
    /// From the sink: its active port, form factor, Bluetooth profile, channel map.
    case auto
    /// Binaural whatever the sink says.
    case headphones
    /// Panned over the sink's speakers (its channel map: 2.0, 5.1 or 7.1) whatever it says.
    case speakers

    public static let acceptedValues = allCases.map(\.rawValue).joined(separator: ", ")
}

/// The rendering method chosen for a device, and why (status shows both). The rules, in order
/// (docs/BEHAVIOUR.md "Output devices"): `--render` other than auto; the active port, by type
/// or by name (a jack's plug switches it); the form factor; a Bluetooth sink's profile; else
/// headphones, as before SceneSound knew the device (a null sink says nothing).
public struct RenderingChoice: Equatable, Sendable {
    public var method: OutputRendering.Method
    public var reason: String

    public init(method: OutputRendering.Method, reason: String) {
        self.method = method
        self.reason = reason
    }

    static let headphoneFormFactors: Set = ["headphone", "headset", "hands-free", "handset"]
    static let speakerFormFactors: Set = ["speaker", "internal", "tv", "hifi", "computer", "car", "portable"]
    static let headphonePortTypes: Set = ["headphones", "headset", "handset", "earpiece", "handsfree"]
    static let speakerPortTypes: Set = ["speaker", "hdmi", "line", "spdif", "tv", "hifi", "car", "portable"]
    static let headphonePortNames = ["headphone", "headset"]
    static let speakerPortNames = ["speaker", "hdmi", "lineout", "line-out", "iec958", "spdif"]
    /// Bluetooth profiles of headsets (`bluetooth.protocol` on PulseAudio, `api.bluez5.profile`
    /// on PipeWire): binaural even with no form factor.
    static let headsetProfiles = ["headset_head_unit", "handsfree_head_unit", "headset-head-unit", "hfp", "hsp"]

    public static func choose(for device: OutputDevice?, preference: RenderPreference) -> RenderingChoice {
        switch preference {
        case .headphones:
            return RenderingChoice(method: .binaural, reason: "--render headphones")
        case .speakers:
            return RenderingChoice(method: .speakers(layout(of: device)), reason: "--render speakers")
        case .auto:
            break
        }
        guard let device else { return RenderingChoice(method: .binaural, reason: "unknown sink: headphones") }
        let speakers = OutputRendering.Method.speakers(layout(of: device))
        if let port = device.port {
            let name = port.name.lowercased()
            if let type = port.type, headphonePortTypes.contains(type) {
                return RenderingChoice(method: .binaural, reason: "port \(port.name)")
            }
            if let type = port.type, speakerPortTypes.contains(type) {
                return RenderingChoice(method: speakers, reason: "port \(port.name)")
            }
            if headphonePortNames.contains(where: name.contains) {
                return RenderingChoice(method: .binaural, reason: "port \(port.name)")
            }
            if speakerPortNames.contains(where: name.contains) {
                return RenderingChoice(method: speakers, reason: "port \(port.name)")
            }
        }
        if let formFactor = device.formFactor {
            if headphoneFormFactors.contains(formFactor) {
                return RenderingChoice(method: .binaural, reason: "form factor \(formFactor)")
            }
            if speakerFormFactors.contains(formFactor) {
                return RenderingChoice(method: speakers, reason: "form factor \(formFactor)")
            }
        }
        if device.bus == "bluetooth" || device.bluetoothProfile != nil {
            let profile = device.bluetoothProfile ?? "no profile"
            let kind = headsetProfiles.contains(where: profile.lowercased().contains) ? "headset" : "headphones"
            return RenderingChoice(method: .binaural, reason: "Bluetooth \(profile): \(kind)")
        }
        return RenderingChoice(method: .binaural, reason: "unknown sink: headphones")
    }

    /// The speakers the sink's channel map feeds: 5.1 for six channels with FL FR FC LFE and a
    /// rear or side pair, 7.1 for eight with FL FR FC LFE and both pairs, else two.
    public static func layout(of device: OutputDevice?) -> SpeakerLayout {
        guard let channels = device.map({ Set($0.channels) }) else { return .stereo }
        let front: Set = ["front-left", "front-right", "front-center", "lfe"]
        let rear: Set = ["rear-left", "rear-right"], side: Set = ["side-left", "side-right"]
        guard front.isSubset(of: channels) else { return .stereo }
        if channels.count == 8, rear.isSubset(of: channels), side.isSubset(of: channels) { return .surround71 }
        if channels.count == 6, rear.isSubset(of: channels) || side.isSubset(of: channels) { return .surround51 }
        return .stereo
    }
}
