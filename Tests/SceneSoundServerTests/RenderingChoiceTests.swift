import SceneSoundEngine
import SceneSoundPulse
@testable import SceneSoundServer
import Testing

/// The device → rendering rules (docs/BEHAVIOUR.md "Output devices"), case by case.
@Suite struct RenderingChoiceTests {
    static let stereo = ["front-left", "front-right"]
    static let surround51 = ["front-left", "front-right", "front-center", "lfe", "rear-left", "rear-right"]
    static let surround51Side = ["front-left", "front-right", "front-center", "lfe", "side-left", "side-right"]
    static let surround71 = ["front-left", "front-right", "front-center", "lfe", "rear-left", "rear-right", "side-left", "side-right"]

    static func choose(_ device: OutputDevice?, _ preference: RenderPreference = .auto) -> RenderingChoice {
        RenderingChoice.choose(for: device, preference: preference)
    }

    @Test(arguments: ["headphone", "headset", "hands-free", "handset"])
    func headphoneFormFactorsAreBinaural(formFactor: String) {
        #expect(Self.choose(OutputDevice(sinkName: "s", formFactor: formFactor))
                == RenderingChoice(method: .binaural, reason: "form factor \(formFactor)"))
    }

    @Test(arguments: ["speaker", "internal", "tv", "hifi", "computer", "car", "portable"])
    func speakerFormFactorsAreSpeakers(formFactor: String) {
        #expect(Self.choose(OutputDevice(sinkName: "s", formFactor: formFactor))
                == RenderingChoice(method: .speakers(.stereo), reason: "form factor \(formFactor)"))
    }

    @Test(arguments: ["webcam", "microphone", "something-new"])
    func otherFormFactorsSayNothing(formFactor: String) {
        #expect(Self.choose(OutputDevice(sinkName: "s", formFactor: formFactor))
                == RenderingChoice(method: .binaural, reason: "unknown sink: headphones"))
    }

    @Test func aSinkThatSaysNothingOrNoSinkIsHeadphonesAsBefore() {
        #expect(Self.choose(OutputDevice(sinkName: "out")) == RenderingChoice(method: .binaural, reason: "unknown sink: headphones"))
        #expect(Self.choose(nil) == RenderingChoice(method: .binaural, reason: "unknown sink: headphones"))
    }

    @Test(arguments: ["headphones", "headset", "handset", "earpiece", "handsfree"])
    func headphonePortTypesAreBinauralWhateverTheFormFactor(type: String) {
        let device = OutputDevice(sinkName: "alsa", formFactor: "internal", port: .init(name: "analog-output-x", type: type))
        #expect(Self.choose(device) == RenderingChoice(method: .binaural, reason: "port analog-output-x"))
    }

    @Test(arguments: ["speaker", "hdmi", "line", "spdif", "tv", "hifi", "car", "portable"])
    func speakerPortTypesAreSpeakersWhateverTheFormFactor(type: String) {
        let device = OutputDevice(sinkName: "alsa", formFactor: "headset", port: .init(name: "out-x", type: type))
        #expect(Self.choose(device) == RenderingChoice(method: .speakers(.stereo), reason: "port out-x"))
    }

    @Test(arguments: ["aux", "mic", "radio", "video", "usb", "bluetooth", "phone", "network", "analog"])
    func otherPortTypesLeaveItToTheFormFactor(type: String) {
        let device = OutputDevice(sinkName: "s", formFactor: "headphone", port: .init(name: "out-x", type: type))
        #expect(Self.choose(device) == RenderingChoice(method: .binaural, reason: "form factor headphone"))
        #expect(OutputDevice.portTypeNames.contains(type))
    }

    @Test func portTypesAreNamedByTheirValues() {
        #expect(OutputDevice.portTypeName(0) == nil)  // unknown
        #expect(OutputDevice.portTypeName(2) == "speaker")
        #expect(OutputDevice.portTypeName(3) == "headphones")
        #expect(OutputDevice.portTypeName(10) == "hdmi")
        #expect(OutputDevice.portTypeName(17) == "handsfree")
        #expect(OutputDevice.portTypeName(22) == "analog")
        #expect(OutputDevice.portTypeName(23) == nil)
    }

    /// A jack's plug: the laptop's sink (form factor internal) switches its port.
    @Test func aPortOfUnknownTypeIsJudgedByItsName() {
        func device(_ port: String) -> OutputDevice { OutputDevice(sinkName: "alsa", formFactor: "internal", port: .init(name: port)) }
        #expect(Self.choose(device("analog-output-headphones")) == RenderingChoice(method: .binaural, reason: "port analog-output-headphones"))
        #expect(Self.choose(device("[Out] Headphones")) == RenderingChoice(method: .binaural, reason: "port [Out] Headphones"))
        #expect(Self.choose(device("analog-output-speaker")) == RenderingChoice(method: .speakers(.stereo), reason: "port analog-output-speaker"))
        #expect(Self.choose(device("[Out] Speaker")) == RenderingChoice(method: .speakers(.stereo), reason: "port [Out] Speaker"))
        #expect(Self.choose(device("hdmi-output-0")) == RenderingChoice(method: .speakers(.stereo), reason: "port hdmi-output-0"))
        #expect(Self.choose(device("iec958-stereo-output")) == RenderingChoice(method: .speakers(.stereo), reason: "port iec958-stereo-output"))
        // A port that says nothing: the form factor decides.
        #expect(Self.choose(device("analog-output")) == RenderingChoice(method: .speakers(.stereo), reason: "form factor internal"))
    }

    @Test func bluetoothSinksWithoutAFormFactorAreHeadphonesByProfile() {
        let a2dp = OutputDevice(sinkName: "bluez_output.00_11", bus: "bluetooth", bluetoothProfile: "a2dp_sink", bluetoothAddress: "00:11")
        #expect(Self.choose(a2dp) == RenderingChoice(method: .binaural, reason: "Bluetooth a2dp_sink: headphones"))
        let hfp = OutputDevice(sinkName: "bluez_output.00_11", bus: "bluetooth", bluetoothProfile: "headset_head_unit")
        #expect(Self.choose(hfp) == RenderingChoice(method: .binaural, reason: "Bluetooth headset_head_unit: headset"))
        let headset = OutputDevice(sinkName: "bt", formFactor: "headset", bus: "bluetooth", bluetoothProfile: "a2dp-sink")
        #expect(Self.choose(headset) == RenderingChoice(method: .binaural, reason: "form factor headset"))
        // A Bluetooth speaker says so.
        let speaker = OutputDevice(sinkName: "bt", formFactor: "speaker", bus: "bluetooth", bluetoothProfile: "a2dp_sink")
        #expect(Self.choose(speaker) == RenderingChoice(method: .speakers(.stereo), reason: "form factor speaker"))
    }

    @Test func theSpeakerLayoutComesFromTheChannelMap() {
        func layout(_ channels: [String]) -> SpeakerLayout { RenderingChoice.layout(of: OutputDevice(sinkName: "s", channels: channels)) }
        #expect(layout(Self.stereo) == .stereo)
        #expect(layout(Self.surround51) == .surround51)
        #expect(layout(Self.surround51Side) == .surround51)
        #expect(layout(Self.surround71) == .surround71)
        #expect(layout(["mono"]) == .stereo)
        #expect(layout(["front-left", "front-right", "rear-left", "rear-right"]) == .stereo)  // quadraphonic: no FC, LFE
        #expect(layout(["front-left", "front-right", "front-center", "lfe", "rear-left", "aux0"]) == .stereo)
        #expect(RenderingChoice.layout(of: nil) == .stereo)
        #expect(Self.choose(OutputDevice(sinkName: "s51", formFactor: "speaker", channels: Self.surround51))
                == RenderingChoice(method: .speakers(.surround51), reason: "form factor speaker"))
    }

    @Test func renderOtherThanAutoOverridesTheDevice() {
        let headphones = OutputDevice(sinkName: "hp", formFactor: "headphone", channels: Self.surround71)
        #expect(Self.choose(headphones, .speakers) == RenderingChoice(method: .speakers(.surround71), reason: "--render speakers"))
        #expect(Self.choose(nil, .speakers) == RenderingChoice(method: .speakers(.stereo), reason: "--render speakers"))
        let speakers = OutputDevice(sinkName: "s", formFactor: "speaker")
        #expect(Self.choose(speakers, .headphones) == RenderingChoice(method: .binaural, reason: "--render headphones"))
    }

    @Test func theDeviceKeyIsTheBluetoothAddressElseTheSinkAndItsPort() {
        #expect(OutputDevice(sinkName: "hp").key == "hp")
        #expect(OutputDevice(sinkName: "alsa", port: .init(name: "analog-output-headphones")).key == "alsa#analog-output-headphones")
        #expect(OutputDevice(sinkName: "bluez_output.a", bus: "bluetooth", bluetoothAddress: "00:11:22:33:44:55").key == "bluez:00:11:22:33:44:55")
        // PulseAudio's bluez sinks carry the address in device.string.
        let pulse = OutputDevice(sinkName: "bluez_sink.x", properties: ["device.bus": "bluetooth", "device.string": "AA:BB",
                                                                         "bluetooth.protocol": "a2dp_sink"], port: nil, channels: Self.stereo)
        #expect(pulse.key == "bluez:AA:BB")
        #expect(pulse.bluetoothProfile == "a2dp_sink")
    }
}
