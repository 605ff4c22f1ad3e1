@testable import SceneSoundCapture
import Testing

/// The mirror's rules without a server: what it forwards, and what it takes for an echo.
struct VolumeMirrorTests {
    typealias Setting = VolumeMirror.Setting
    static let norm: UInt32 = 0x10000

    @Test func ourStaleSettingIsNotForwardedBeforeTheRealSinkSpoke() {
        var mirror = VolumeMirror()
        let restored = mirror.captureReported(Setting(channelVolumes: [Self.norm / 4, Self.norm / 4], isMuted: true))
        #expect(restored.channelVolumes == nil && restored.isMuted == nil)
        let real = mirror.realReported(Setting(channelVolumes: [Self.norm, Self.norm], isMuted: false))
        #expect(real.channelVolumes == [Self.norm, Self.norm] && real.isMuted == false)
    }

    /// The slider dragged on ours: each step forwarded; the real sink's reports of earlier
    /// steps, read after a later one was sent, are echoes and do not set ours back.
    @Test func aDraggedSliderIsNotSetBackByTheRealSinksEchoes() {
        var mirror = VolumeMirror()
        _ = mirror.realReported(Setting(channelVolumes: [Self.norm, Self.norm], isMuted: false))
        let steps: [UInt32] = [0xE000, 0xC000, 0xA000]
        for step in steps {
            #expect(mirror.captureReported(Setting(channelVolumes: [step, step], isMuted: false)).channelVolumes == [step, step])
        }
        for step in steps {
            #expect(mirror.realReported(Setting(channelVolumes: [step, step], isMuted: false)).channelVolumes == nil,
                    "the real sink's echo of \(step) was sent back to ours")
        }
        // Another program's change afterwards is shown on ours.
        #expect(mirror.realReported(Setting(channelVolumes: [0x8000, 0x8000], isMuted: false)).channelVolumes == [0x8000, 0x8000])
        // Ours reporting it back is an echo, not a change to forward.
        #expect(mirror.captureReported(Setting(channelVolumes: [0x8000, 0x8000], isMuted: false)).channelVolumes == nil)
    }

    @Test func volumesAreRemappedByChannelPosition() {
        // Positions: mono 0, front-left 1, front-right 2.
        #expect(VolumeMirror.remap([10, 20], from: [1, 2], to: [2, 1]) == [20, 10])
        #expect(VolumeMirror.remap([10, 20], from: [1, 2], to: [0]) == [20])
        #expect(VolumeMirror.remap([30], from: [0], to: [1, 2]) == [30, 30])
    }
}
