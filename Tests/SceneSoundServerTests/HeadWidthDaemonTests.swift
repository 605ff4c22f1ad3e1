import SceneSoundTestSupport
import Foundation
import SceneSoundDSP
import SceneSoundMedia
import Testing

/// `scenesoundd --head-width-cm` end to end: a noise burst placed at 90° left, played with the
/// CLI, recorded in the daemon's wav output; the ITD grows with the head.
@Suite(.serialized) struct HeadWidthDaemonTests {
    static func itdMicroseconds(extraArguments: [String]) throws -> Double {
        let daemon = try Daemon(extraArguments: extraArguments)
        var noise = WhiteNoise(seed: 29)
        let samples = noise.samples(24000, amplitude: 0.3)
        let file = daemon.directory + "/noise.wav"
        let writer = try AudioFileWriter(path: file, sampleRateHz: 48000, channelCount: 1)
        try writer.write(samples)
        try writer.finish()
        let socket = ["--socket", daemon.socketPath]
        #expect(try CommandLineTests.runCLI(["scene", "place", "left", "--azimuth", "90", "--distance", "1"] + socket).status == 0)
        let played = try CommandLineTests.runCLI(["play", file, "--scene", "left"] + socket)
        #expect(played.status == 0, "\(played.error)")
        let out = try AudioFileReader.read(path: daemon.wavPath)
        let left = out.channel(0), right = out.channel(1)
        // The burst: from its first audible sample, 0.4 s.
        guard let onset = left.firstIndex(where: { abs($0) > 1e-3 }), onset + 19200 <= left.count else {
            throw TestFailure("no burst in the daemon's output")
        }
        let range = onset..<(onset + 19200)
        return CueAnalysis.cues(left: Array(left[range]), right: Array(right[range]), sampleRateHz: 48000).itdMicroseconds
    }

    @Test func aWiderHeadWidensTheITD() throws {
        let own = try Self.itdMicroseconds(extraArguments: [])
        let wider = try Self.itdMicroseconds(extraArguments: ["--head-width-cm", "16.72"])
        print("scenesoundd ITD at 90°: \(own) µs; --head-width-cm 16.72: \(wider) µs (×\(wider / own))")
        #expect(abs(wider / own - 1.1) < 0.03)
    }
}
