import Foundation
import Synchronization

/// A 5.1 null sink on a private server, and what an output plays into it: for the outputs'
/// channel tests (a stream reopened with a speaker layout's channels lands channel to channel).
public enum SurroundSink {
    public static let name = "surround"
    /// PulseAudio's names, in the WAVE / SMPTE order the engine renders.
    public static let channelNames = ["front-left", "front-right", "front-center", "lfe", "rear-left", "rear-right"]

    /// Loads the sink (module-null-sink with a 5.1 channel map) and waits until the server lists it.
    public static func load(on server: PrivateSoundServer) throws {
        try server.pactl(["load-module", "module-null-sink", "sink_name=\(name)", "rate=48000",
                          "channels=\(channelNames.count)", "channel_map=\(channelNames.joined(separator: ","))"])
        guard waitUntil(timeoutSeconds: 5, { (try? server.sinkIndex(named: name)) != nil }) else {
            throw ToolFailure(command: "load a 5.1 null sink", status: 1, output: "the sink never appeared")
        }
    }

    /// The last `frames` frames of the sink's monitor, all six channels interleaved (parec with
    /// the sink's own channel map: no remixing); nil if nothing came within the time.
    public static func record(on server: PrivateSoundServer, frames: Int, timeoutSeconds: Double = 5) throws -> [Float]? {
        let channels = channelNames.count
        let file = server.directory.appendingPathComponent("surround-\(UUID().uuidString.prefix(6)).raw")
        let parec = try server.startClient("/usr/bin/parec", [
            "--device=\(name).monitor", "--property=node.dont-reconnect=true", "--format=float32le", "--channels=\(channels)",
            "--channel-map=\(channelNames.joined(separator: ","))", "--rate=48000", "--raw", "--latency-msec=20", file.path,
        ])
        defer { parec.kill(); try? FileManager.default.removeItem(at: file) }
        func recorded() -> Int { ((try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0) / (4 * channels) }
        guard waitUntil(timeoutSeconds: timeoutSeconds, { recorded() >= frames + 4_800 }) else { return nil }
        parec.kill()
        let samples = try Data(contentsOf: file).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let usable = samples.count - samples.count % channels
        return Array(samples[(usable - frames * channels) ..< usable])
    }

    /// Per channel, the RMS of an interleaved recording.
    public static func channelRMS(_ interleaved: [Float], channels: Int) -> [Double] {
        (0..<channels).map { channel in
            let values = stride(from: channel, to: interleaved.count, by: channels).map { Double(interleaved[$0]) }
            return values.isEmpty ? 0 : (values.reduce(0) { $0 + $1 * $1 } / Double(values.count)).squareRoot()
        }
    }
}

/// A 1 kHz tone in every channel the output asks for, channel c at `amplitude(c)`: the render
/// closure of an output whose channel count may change while it plays.
public final class ChannelTaggedTone: @unchecked Sendable {
    public let rateHz: Int
    private var phase = 0.0
    private let lastChannelCount = Atomic<Int>(0)

    public init(rateHz: Int = 48_000) { self.rateHz = rateHz }

    /// 0.05 × (c + 1): each channel at its own level, none clipping.
    public static func amplitude(ofChannel channel: Int) -> Float { 0.05 * Float(channel + 1) }

    /// The channel count of the last block rendered (0: none yet).
    public var channelCount: Int { lastChannelCount.load(ordering: .relaxed) }

    public func render(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        let step = 2 * Double.pi * 1_000 / Double(rateHz)
        for n in 0..<frames {
            let s = Float(sin(phase))
            for c in 0..<channels { buffer[channels * n + c] = s * Self.amplitude(ofChannel: c) }
            phase += step
            if phase > 2 * .pi { phase -= 2 * .pi }
        }
        lastChannelCount.store(channels, ordering: .relaxed)
    }
}
