import CPulse
import Foundation
import SceneSoundPulse

/// The default sink's volume and mute kept on the real sink (`VolumeMirror`).
extension CaptureSession {
    /// Keeps the capture sink's and the real sink's volume and mute the same (`VolumeMirror`):
    /// the desktop's volume keys act on the default sink, ours, and are heard on the real one.
    func mirrorVolume(ofSink index: UInt32) {
        requests.sinks { [weak self] sinks in
            guard let self, phase == .capturing || phase == .preparing, let sinks,
                  let ours = sinks.first(where: { $0.index == self.captureSink?.index }),
                  let real = sinks.first(where: { $0.index == self.defaultSink?.index }) else { return }
            captureSinkReported(ours)
            let inOurOrder: ([UInt32], [Int32]) -> [UInt32] = {
                VolumeMirror.remap($0, from: $1, to: ours.channelPositions)
            }
            if index == real.index {
                let reported = VolumeMirror.Setting(
                    channelVolumes: inOurOrder(real.channelVolumes, real.channelPositions), isMuted: real.isMuted)
                apply(volumeMirror.realReported(reported), to: ours, from: ours.channelPositions)
                volumeMirror.captureShows(VolumeMirror.Setting(channelVolumes: ours.channelVolumes, isMuted: ours.isMuted))
            } else {
                let reported = VolumeMirror.Setting(channelVolumes: ours.channelVolumes, isMuted: ours.isMuted)
                apply(volumeMirror.captureReported(reported), to: real, from: ours.channelPositions)
            }
        }
    }

    func apply(_ change: (channelVolumes: [UInt32]?, isMuted: Bool?), to sink: SinkFacts, from positions: [Int32]) {
        if let volumes = change.channelVolumes {
            let inItsOrder = VolumeMirror.remap(volumes, from: positions, to: sink.channelPositions)
            requests.setSinkVolume(sink.index, channelVolumes: inItsOrder) { _ in }
        }
        if let isMuted = change.isMuted { requests.setSinkMute(sink.index, isMuted: isMuted) { _ in } }
    }

    /// Our sink's volume scales the mix the onset recovery compares with.
    func captureSinkReported(_ sink: SinkFacts) {
        let gains = sink.channelVolumes.map { sink.isMuted ? 0 : Float(pa_sw_volume_to_linear($0)) }
        guard gains.count >= 2 else { return onsets.mixGainDidChange(left: gains.first ?? 1, right: gains.first ?? 1) }
        onsets.mixGainDidChange(left: gains[0], right: gains[1])
    }
}
