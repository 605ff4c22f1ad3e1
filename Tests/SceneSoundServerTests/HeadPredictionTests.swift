import Foundation
import Testing
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundOutputs
@testable import SceneSoundServer

/// Head-pose prediction, automatic recentering and the tracking modes, in process: a
/// `HeadTracking` over a real engine whose blocks the test renders, on a clock the test moves.
/// Poses arrive as a tracker sends them (100 a second, with a millisecond of arrival jitter);
/// each rendered block's head pose is compared with where the head truly is when that block
/// is heard (its render time plus the latency).
@Suite struct HeadPredictionTests {
    /// A deterministic source of arrival jitter and tracker noise.
    struct Random {
        var state: UInt64
        mutating func uniform() -> Double {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Double(state >> 11) / Double(1 << 53)
        }
        /// Normally distributed (Box–Muller), standard deviation `sigma`.
        mutating func gaussian(_ sigma: Double) -> Double {
            sigma * (-2 * log(max(uniform(), 1e-300))).squareRoot() * cos(2 * .pi * uniform())
        }
    }

    /// The head's true orientation at a time, in seconds.
    typealias Motion = @Sendable (Double) -> SceneSoundDSP.Quaternion

    final class Rig {
        let engine = Engine(hrtf: KEMARSet.set, configuration: EngineConfiguration(sampleRateHz: 48000, blockFrames: 256, room: .none),
                            busFilters: KEMARSet.busFilters)
        let commands: EngineCommandQueue
        let head: HeadTracking
        var nowNanoseconds = 1_000_000_000
        private var block = [Float](repeating: 0, count: 512)
        /// Output latency plus the limiter's look-ahead, as the server computes it.
        let latencySeconds: Double

        init(settings: HeadTrackingSettings, outputLatencySeconds: Double) {
            commands = EngineCommandQueue(queue: engine.commands, refusalThreshold: 4096)
            latencySeconds = outputLatencySeconds + Double(engine.renderer.latencyFrames) / 48000
            var clock: () -> Int = { 0 }
            let latency = latencySeconds
            head = HeadTracking(engine: engine, commands: commands, settings: settings,
                                latencySeconds: { latency }, nowNanoseconds: { clock() })
            clock = { [unowned self] in self.nowNanoseconds }
        }

        var seconds: Double { Double(nowNanoseconds) * 1e-9 - 1 }
        func advance(to seconds: Double) { nowNanoseconds = 1_000_000_000 + Int((seconds * 1e9).rounded()) }

        /// Renders one block; the head pose it ends on.
        func render() -> SceneSoundDSP.HeadPose {
            commands.flush()
            block.withUnsafeMutableBufferPointer { engine.render(into: $0.baseAddress!) }
            return engine.renderer.headPose
        }
    }

    struct Errors {
        var rmsDegrees: Double
        var maximumDegrees: Double
    }

    /// Sends `motion` (plus Gaussian noise of `noiseDegrees` RMS per axis) as opentrack poses at
    /// `posesPerSecond` for `seconds`, renders blocks throughout, and measures, from the first
    /// second on, the angle between each block's rendered head and the true head when the
    /// block is heard (`yawOnly`: the yaw difference alone).
    static func run(_ motion: Motion, prediction: Bool, outputLatencySeconds: Double = 0.02, noiseDegrees: Double = 0,
                    posesPerSecond: Double = 100, seconds: Double = 6, seed: UInt64 = 7) -> Errors {
        var settings = HeadTrackingSettings()
        settings.prediction = prediction
        let rig = Rig(settings: settings, outputLatencySeconds: outputLatencySeconds)
        var random = Random(state: seed)
        let blockSeconds = 256.0 / 48000
        var nextPose = 0.0, nextBlock = 0.0
        var squares = 0.0, count = 0, worst = 0.0
        while nextBlock < seconds {
            if nextPose <= nextBlock {
                // Arrival jitter of up to ±1 ms (the network and the event loop), not in the pose.
                let arrival = nextPose + (random.uniform() - 0.5) * 0.002
                rig.advance(to: max(arrival, rig.seconds))
                var q = motion(nextPose)
                if noiseDegrees > 0 {
                    q = SceneSoundDSP.Quaternion(yawDegrees: random.gaussian(noiseDegrees), pitchDegrees: random.gaussian(noiseDegrees),
                                                 rollDegrees: random.gaussian(noiseDegrees)) * q
                }
                rig.head.update(SceneSoundDSP.HeadPose(orientation: q), from: .opentrack)
                nextPose += 1 / posesPerSecond
            } else {
                rig.advance(to: nextBlock)
                rig.head.tick()
                let rendered = rig.render()
                if nextBlock >= 1 {
                    let error = angleDegrees(rendered.orientation, motion(nextBlock + rig.latencySeconds))
                    squares += error * error
                    count += 1
                    worst = max(worst, error)
                }
                nextBlock += blockSeconds
            }
        }
        return Errors(rmsDegrees: (squares / Double(count)).squareRoot(), maximumDegrees: worst)
    }

    static let swing: Motion = { SceneSoundDSP.Quaternion(yawDegrees: 45 * sin(2 * .pi * $0)) }
    static let still: Motion = { _ in .identity }

    static func format(_ e: Errors) -> String { String(format: "RMS %.2f°, max %.2f°", e.rmsDegrees, e.maximumDegrees) }

    /// ±45° at 1 Hz (up to 283°/s), opentrack at 100 Hz: the direction heard against the head's
    /// true direction at that moment, with and without prediction, at PulseAudio's latency (20 ms)
    /// and at the 40 ms measured through pipewire-pulse.
    @Test(arguments: [0.02, 0.04])
    func aSwingingHeadIsHeardWhereItIsAtLeastThreeTimesCloser(outputLatencySeconds: Double) {
        let without = Self.run(Self.swing, prediction: false, outputLatencySeconds: outputLatencySeconds)
        let with = Self.run(Self.swing, prediction: true, outputLatencySeconds: outputLatencySeconds)
        let noisy = Self.run(Self.swing, prediction: true, outputLatencySeconds: outputLatencySeconds, noiseDegrees: 0.2)
        print(String(format: "prediction, ±45° 1 Hz swing, opentrack 100 Hz, output latency %.0f ms: without %@, with %@ (%.1f× smaller); with 0.2° noise %@",
                     outputLatencySeconds * 1000, Self.format(without), Self.format(with), without.rmsDegrees / with.rmsDegrees, Self.format(noisy)))
        #expect(with.rmsDegrees * 3 <= without.rmsDegrees)
        #expect(noisy.rmsDegrees * 3 <= without.rmsDegrees)
    }

    /// A still head whose tracker jitters by 0.2° (RMS of the direction): the prediction neither
    /// extrapolates the noise nor adds to it, and the smoothing at rest takes most of it out.
    @Test func aStillHeadsTrackerNoiseIsNotAmplified() {
        let perAxis = 0.2 / 3.0.squareRoot()
        let without = Self.run(Self.still, prediction: false, noiseDegrees: perAxis)
        let with = Self.run(Self.still, prediction: true, noiseDegrees: perAxis)
        print("prediction, still head with 0.2° tracker noise: without \(Self.format(without)), with \(Self.format(with))")
        #expect(abs(without.rmsDegrees - 0.2) < 0.03)  // the noise is what it says
        #expect(with.rmsDegrees <= 0.2)
        #expect(with.maximumDegrees <= without.maximumDegrees)
    }

    /// Bounded: a horizon of at most 100 ms whatever the latency, at most 30° ahead of the
    /// tracker however fast it turns; and when poses stop, back to the last one within 0.1 s.
    @Test func theExtrapolationIsBoundedAndFadesWhenPosesStop() throws {
        var settings = HeadTrackingSettings()
        settings.prediction = true
        let rig = Rig(settings: settings, outputLatencySeconds: 0.5)
        #expect(try #require(rig.head.predictionHorizonSeconds) <= 0.1)
        // 1000°/s at 100 Hz, then silence.
        var yaw = 0.0
        for k in 0..<50 {
            rig.advance(to: Double(k) * 0.01)
            yaw = Double(k) * 10
            rig.head.update(SceneSoundDSP.HeadPose(orientation: SceneSoundDSP.Quaternion(yawDegrees: yaw)), from: .opentrack)
        }
        let last = SceneSoundDSP.Quaternion(yawDegrees: yaw)
        let ahead = angleDegrees(rig.render().orientation, last)
        var back = 0.0
        var t = 0.49
        while t < 0.8 {
            t += 256.0 / 48000
            rig.advance(to: t)
            rig.head.tick()
            let error = angleDegrees(rig.render().orientation, last)
            if error > 0.01 { back = t - 0.49 }
        }
        print(String(format: "prediction at 1000°/s with 500 ms of latency: horizon %.0f ms, %.1f° ahead of the last pose; back on it %.0f ms after the poses stopped",
                     (rig.head.predictionHorizonSeconds ?? 0) * 1000, ahead, back * 1000))
        #expect(ahead > 20 && ahead <= 30.001)
        #expect(back > 0 && back <= 0.136)  // 2.5 intervals, the 100 ms fade, and a block

        // A jump no head makes (90° in 10 ms: a pose set by hand, a glitch) is taken as it is.
        rig.advance(to: 1)
        rig.head.update(SceneSoundDSP.HeadPose(orientation: SceneSoundDSP.Quaternion(yawDegrees: 0)), from: .opentrack)
        rig.advance(to: 1.01)
        let jumped = SceneSoundDSP.Quaternion(yawDegrees: 90)
        rig.head.update(SceneSoundDSP.HeadPose(orientation: jumped), from: .opentrack)
        #expect(angleDegrees(rig.render().orientation, jumped) < 1e-6)
    }
}
