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

    /// A sink PipeWire has just made reports volume 0 on every channel until its properties
    /// arrive; reported after the real sink spoke (before our write of the real sink's
    /// setting reached it), that is not the user's: not forwarded, and once ours shows the
    /// real sink's setting its changes are.
    @Test func ourSinksStartingVolumeIsNotForwardedUntilItShowsTheRealSinks() {
        var mirror = VolumeMirror()
        let real = mirror.realReported(Setting(channelVolumes: [Self.norm, Self.norm], isMuted: false))
        #expect(real.channelVolumes == [Self.norm, Self.norm] && real.isMuted == false)
        let starting = mirror.captureReported(Setting(channelVolumes: [0, 0], isMuted: false))
        #expect(starting.channelVolumes == nil, "ours' starting volume 0 was forwarded to the real sink")
        // Our write arrives: ours shows the real sink's setting, an echo.
        #expect(mirror.captureReported(Setting(channelVolumes: [Self.norm, Self.norm], isMuted: false)).channelVolumes == nil)
        // From then on the user's changes on ours are forwarded, 0 included.
        #expect(mirror.captureReported(Setting(channelVolumes: [0, 0], isMuted: false)).channelVolumes == [0, 0])
        #expect(mirror.captureReported(Setting(channelVolumes: [0, 0], isMuted: true)).isMuted == true)
    }

    /// Ours already at the real sink's setting (a PulseAudio null sink at 100 %): the write
    /// of the same value may bring no report from ours, so ours showing it beside the real
    /// sink's report puts it in step, and the user's first change is forwarded.
    @Test func oursAlreadyAtTheRealSinksSettingIsInStepAtOnce() {
        var mirror = VolumeMirror()
        let same = Setting(channelVolumes: [Self.norm, Self.norm], isMuted: false)
        _ = mirror.realReported(same)
        mirror.captureShows(same)
        #expect(mirror.captureReported(Setting(channelVolumes: [0x8000, 0x8000], isMuted: false)).channelVolumes == [0x8000, 0x8000])
    }

    /// The slider dragged on ours: each step forwarded; the real sink's reports of earlier
    /// steps, read after a later one was sent, are echoes and do not set ours back.
    @Test func aDraggedSliderIsNotSetBackByTheRealSinksEchoes() {
        var mirror = VolumeMirror()
        _ = mirror.realReported(Setting(channelVolumes: [Self.norm, Self.norm], isMuted: false))
        _ = mirror.captureReported(Setting(channelVolumes: [Self.norm, Self.norm], isMuted: false))  // ours in step
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
