import CPulse
import SceneSoundPulse
import Testing

/// `OutputDevice`'s names for libpulse's port types are def.h's values.
@Suite struct OutputDeviceTests {
    @Test func portTypeNamesMatchLibpulsesValues() {
        let types: [(pa_device_port_type_t, String?)] = [
            (PA_DEVICE_PORT_TYPE_UNKNOWN, nil), (PA_DEVICE_PORT_TYPE_AUX, "aux"), (PA_DEVICE_PORT_TYPE_SPEAKER, "speaker"),
            (PA_DEVICE_PORT_TYPE_HEADPHONES, "headphones"), (PA_DEVICE_PORT_TYPE_LINE, "line"), (PA_DEVICE_PORT_TYPE_MIC, "mic"),
            (PA_DEVICE_PORT_TYPE_HEADSET, "headset"), (PA_DEVICE_PORT_TYPE_HANDSET, "handset"),
            (PA_DEVICE_PORT_TYPE_EARPIECE, "earpiece"), (PA_DEVICE_PORT_TYPE_SPDIF, "spdif"), (PA_DEVICE_PORT_TYPE_HDMI, "hdmi"),
            (PA_DEVICE_PORT_TYPE_TV, "tv"), (PA_DEVICE_PORT_TYPE_RADIO, "radio"), (PA_DEVICE_PORT_TYPE_VIDEO, "video"),
            (PA_DEVICE_PORT_TYPE_USB, "usb"), (PA_DEVICE_PORT_TYPE_BLUETOOTH, "bluetooth"),
            (PA_DEVICE_PORT_TYPE_PORTABLE, "portable"), (PA_DEVICE_PORT_TYPE_HANDSFREE, "handsfree"),
            (PA_DEVICE_PORT_TYPE_CAR, "car"), (PA_DEVICE_PORT_TYPE_HIFI, "hifi"), (PA_DEVICE_PORT_TYPE_PHONE, "phone"),
            (PA_DEVICE_PORT_TYPE_NETWORK, "network"), (PA_DEVICE_PORT_TYPE_ANALOG, "analog"),
        ]
        for (type, name) in types {
            #expect(OutputDevice.portTypeName(type.rawValue) == name, "\(type.rawValue)")
        }
    }
}
