import Testing
@testable import SceneSoundCapture

/// `OnsetRecovery` as a unit, fed as the capture feeds it: the sink's mix in fragments, and each
/// stream's own recording, which begins some frames after the stream started sounding.
@Suite struct OnsetRecoveryTests {
    static let fragmentFrames = 240

    /// Deterministic noise, interleaved stereo, never silent.
    static func noise(frames: Int, seed: UInt64, level: Float) -> [Float] {
        var state = seed
        return (0 ..< 2 * frames).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let value = Float(Int64(state >> 40) % 2001 - 1000) / 1000
            return level * (abs(value) < 0.01 ? 0.5 : value)
        }
    }

    /// One stream on the sink: where in the mix's timeline it starts, its sound, and after how
    /// many of its frames its own recording begins.
    struct Source {
        let index: UInt32
        let startFrame: Int
        let sound: [Float]
        let missedFrames: Int
        /// Taken over while already playing: never announced as new.
        var announced = true
        /// Its recording arrives this many fragments after the mix of the same span.
        var lagFragments = 0
        /// Whether its recording brings anything (a stream gone before its recording was made
        /// brings nothing), and the frame of the mix's timeline at which the capture says it
        /// ended (nil: it does not, within the run).
        var recorded = true
        var endNoticedFrame: Int?
    }

    /// Runs the sources through a recovery fragment by fragment (each fragment's mix before the
    /// recordings of the same span, as the sink renders it) and returns what the consumer got.
    static func run(_ sources: [Source], totalFrames: Int) -> RecordingConsumer {
        let consumer = RecordingConsumer()
        let recovery = OnsetRecovery(consumer: consumer, rateHz: 48_000)
        for start in stride(from: 0, to: totalFrames, by: fragmentFrames) {
            let mixSpan = start ..< start + fragmentFrames
            let span = mixSpan
            for source in sources where source.announced && span.contains(source.startFrame) {
                recovery.streamAppeared(source.index)
            }
            var mix = [Float](repeating: 0, count: 2 * fragmentFrames)
            for source in sources {
                for frame in span where frame >= source.startFrame && frame - source.startFrame < source.sound.count / 2 {
                    mix[2 * (frame - start)] += source.sound[2 * (frame - source.startFrame)]
                    mix[2 * (frame - start) + 1] += source.sound[2 * (frame - source.startFrame) + 1]
                }
            }
            mix.withUnsafeBufferPointer { recovery.mixDidArrive($0) }
            for source in sources {
                let span = (mixSpan.lowerBound - source.lagFragments * fragmentFrames) ..< (mixSpan.upperBound - source.lagFragments * fragmentFrames)
                let recordingStart = source.startFrame + source.missedFrames
                if span.contains(recordingStart) {
                    recovery.captureDidStart(CapturedStreamIdentity(streamIndex: source.index, properties: [:]))
                }
                let from = max(span.lowerBound, recordingStart) - source.startFrame
                let to = min(span.upperBound - source.startFrame, source.sound.count / 2)
                if source.recorded, from < to {
                    source.sound[(2 * from) ..< (2 * to)].withUnsafeBufferPointer {
                        recovery.captureDidReceive(streamIndex: source.index, interleaved: $0)
                    }
                }
                if let ended = source.endNoticedFrame, span.contains(ended) { recovery.captureDidEnd(streamIndex: source.index) }
            }
        }
        return consumer
    }

    /// How many frames, from the first, `captured` equals `sound` (and whether it has no more).
    static func agreement(_ captured: [Float], _ sound: [Float]) -> (exactFrames: Int, sameLength: Bool) {
        let compared = min(captured.count, sound.count)
        let firstDifference = (0 ..< compared).first { (sample: Int) -> Bool in abs(captured[sample] - sound[sample]) > 1e-5 } ?? compared
        return (firstDifference / 2, captured.count == sound.count)
    }

    @Test func aStreamStartingAloneIsHandedOnFromItsFirstSample() {
        let sound = Self.noise(frames: 4_800, seed: 1, level: 0.3)
        let consumer = Self.run([Source(index: 1, startFrame: 1_000, sound: sound, missedFrames: 300)], totalFrames: 8_000)
        #expect(Self.agreement(consumer.audio(of: 1), sound) == (4_800, true))
    }

    /// How the music under the event came to be placed: its start found in the mix (its
    /// recording on time with the mix, or two fragments behind it), or, taken over while
    /// already playing, found later by its latest frames.
    enum MusicPlacement: CaseIterable, Sendable {
        case startFound, startFoundRecordingLate, takenOverWhilePlaying
    }

    @Test(arguments: MusicPlacement.allCases)
    func aStreamStartingOverAPlacedOneIsHandedOnFromItsFirstSample(music placement: MusicPlacement) {
        let music = Self.noise(frames: 20_000, seed: 2, level: 0.25)
        let event = Self.noise(frames: 4_800, seed: 3, level: 0.3)
        let musicSource = placement == .takenOverWhilePlaying
            ? Source(index: 1, startFrame: 0, sound: music, missedFrames: 0, announced: false)
            : Source(index: 1, startFrame: 500, sound: music, missedFrames: 400,
                     lagFragments: placement == .startFoundRecordingLate ? 2 : 0)
        let consumer = Self.run([musicSource, Source(index: 2, startFrame: 9_000, sound: event, missedFrames: 500)],
                                totalFrames: 22_000)
        if placement != .takenOverWhilePlaying { #expect(Self.agreement(consumer.audio(of: 1), music) == (20_000, true)) }
        #expect(Self.agreement(consumer.audio(of: 2), event) == (4_800, true))
    }

    /// Over streams whose place cannot be found (two taken over while playing together: the mix
    /// is neither), nothing is guessed: the new stream is heard from where its recording began.
    @Test func aStreamStartingOverUnplacedOnesIsHandedOnFromItsRecording() {
        let first = Self.noise(frames: 30_000, seed: 6, level: 0.2)
        let second = Self.noise(frames: 30_000, seed: 7, level: 0.2)
        let event = Self.noise(frames: 4_800, seed: 8, level: 0.3)
        let consumer = Self.run([
            Source(index: 1, startFrame: 0, sound: first, missedFrames: 0, announced: false),
            Source(index: 2, startFrame: 0, sound: second, missedFrames: 0, announced: false),
            Source(index: 3, startFrame: 20_000, sound: event, missedFrames: 500),
        ], totalFrames: 32_000)
        #expect(Self.agreement(consumer.audio(of: 3), Array(event[(2 * 500)...])) == (4_300, true))
    }

    /// A short sound gone before its recording was made (a consumer slow to take it held the
    /// capture's thread while it played out: its recording then fails, bringing nothing) is
    /// taken whole from the mix, its end told after it.
    /// Also when it appeared before the mix's first fragment (the capture had just started:
    /// a fresh-clone run captured 0 frames so).
    @Test(arguments: [1_000, 100])
    func aStreamThatEndedBeforeItsRecordingBroughtAnythingIsTakenWholeFromTheMix(startFrame: Int) {
        let event = Self.noise(frames: 4_800, seed: 9, level: 0.3)
        let consumer = Self.run([Source(index: 1, startFrame: startFrame, sound: event, missedFrames: 5_300, recorded: false,
                                        endNoticedFrame: startFrame + 5_500)], totalFrames: 12_000)
        #expect(Self.agreement(consumer.audio(of: 1), event) == (4_800, true))
        #expect(consumer.endedStreams == [1])
    }

    /// Over music found in the mix by its latest frames (taken over while playing), the mix
    /// less the music is the short sound: taken whole. Over two streams taken over together
    /// (neither can be placed: the mix is neither), whose sound it is cannot be told: it ends
    /// with nothing rather than with another's sound.
    @Test(arguments: [1, 2])
    func aStreamThatEndedUnheardOverOthersIsTakenWholeOnlyWhereTheyArePlaced(takenOverWhilePlaying: Int) {
        let event = Self.noise(frames: 4_800, seed: 11, level: 0.3)
        let others = (0 ..< takenOverWhilePlaying).map { other in
            Source(index: UInt32(10 + other), startFrame: 0, sound: Self.noise(frames: 30_000, seed: 20 + UInt64(other), level: 0.2),
                   missedFrames: 0, announced: false)
        }
        let consumer = Self.run(others + [Source(index: 2, startFrame: 20_000, sound: event, missedFrames: 5_300, recorded: false,
                                                 endNoticedFrame: 25_500)], totalFrames: 30_000)
        let captured = consumer.audio(of: 2)
        if takenOverWhilePlaying == 1 {
            #expect(Self.agreement(captured, event) == (4_800, true))
        } else {
            #expect(captured.isEmpty, "\(captured.count / 2) frames taken from a mix of three streams")
        }
        #expect(consumer.endedStreams == [2])
    }
}
