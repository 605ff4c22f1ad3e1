import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol

/// One client stream on the server side: its format and converter, the ring the render
/// thread reads, the credit accounting, pending drains, and a loop's copy.
final class ServerStream {
    let id: StreamID
    let kind: StreamKind
    let format: AudioFormat
    let converter: PCMConverter
    let engineStream: EngineStream
    var sceneID: String
    var volumeDecibels: Float
    let spatialMode: SceneSoundProtocol.SpatialMode

    /// Bytes of credit granted and not yet used by the client.
    var outstandingCreditBytes = 0
    /// Set after a STREAM_ERROR: only STREAM_CLOSE is accepted.
    var defunctCode: ErrorCode?
    /// Drain requests waiting: the request id and the ring frame the drain covers.
    var pendingDrains: [(requestID: UInt32, throughFrame: Int)] = []
    /// Drains the engine reported done, waiting for the output to deliver their frame.
    var deliveredDrains: [(throughFrame: Int, outputFrame: Int)] = []

    /// For `loop` streams: the content up to the first drain, replayed until close.
    let loops: Bool
    var loopContent: [Float] = []
    var loopClosed = false
    var loopPosition = 0
    let loopLimitFrames: Int

    var ring: AudioRing { engineStream.input.ring }

    init(id: StreamID, open: StreamOpen, converter: PCMConverter, engineStream: EngineStream, loopLimitFrames: Int) {
        self.id = id
        kind = open.kind
        format = open.format
        self.converter = converter
        self.engineStream = engineStream
        sceneID = open.sceneID
        volumeDecibels = open.volumeDecibels
        spatialMode = open.spatialMode
        loops = open.loop
        self.loopLimitFrames = loopLimitFrames
    }

    /// Engine frames the client may still send, in the worst case of rounding in the resampler.
    var creditFramesInEngineUnits: Int {
        Int((Double(outstandingCreditBytes / format.bytesPerFrame) * converter.rateRatio).rounded(.up)) + resamplerSlackFrames
    }

    var resamplerSlackFrames: Int { converter.rateRatio == 1 ? 0 : 64 }

    /// How many bytes of new credit the ring can take now, in whole wire frames.
    func grantableCreditBytes() -> Int {
        guard defunctCode == nil, !loopClosed else { return 0 }
        let freeFrames = ring.freeFrames - creditFramesInEngineUnits - resamplerSlackFrames
        guard freeFrames > 0 else { return 0 }
        return Int(Double(freeFrames) / converter.rateRatio) * format.bytesPerFrame
    }

    /// Appends converted audio to the ring. Credit guarantees it fits.
    func append(_ samples: [Float]) {
        guard !samples.isEmpty else { return }
        let frames = samples.count / Int(format.channels)
        samples.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, frames: frames) }
        engineStream.input.setIdle(false)
        if loops && !loopClosed { loopContent.append(contentsOf: samples) }
    }

    /// After the first drain of a loop stream: keep the ring topped up from the copy.
    func refillLoop() {
        guard loopClosed, !loopContent.isEmpty else { return }
        let channels = Int(format.channels)
        let total = loopContent.count / channels
        var free = ring.freeFrames
        loopContent.withUnsafeBufferPointer { content in
            while free > 0 {
                let n = min(free, total - loopPosition)
                let written = ring.write(content.baseAddress! + loopPosition * channels, frames: n)
                loopPosition = (loopPosition + written) % total
                free -= written
                if written == 0 { break }
            }
        }
    }
}
