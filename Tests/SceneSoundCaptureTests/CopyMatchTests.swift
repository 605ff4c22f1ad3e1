import SceneSoundTestSupport
import Testing

/// The tests' own measure of an exact copy (`TestSignal.match`): a capture that loses frames of
/// the file, or has silence put in, is told apart from one that is merely different, so that
/// a failure says which.
@Suite struct CopyMatchTests {
    static let source = TestSignal.stereoNoise(seconds: 2, seed: 5)
    static func asCaptured(_ samples: ArraySlice<Int16>) -> [Float] { samples.map { Float($0) / 32768 } }

    @Test func anExactCopyHasNoBreak() throws {
        let match = try #require(TestSignal.match(captured: Self.asCaptured(Self.source[4_800 ..< 150_000]), source: Self.source))
        #expect(match.residualDecibels < -60)
        #expect(match.breaks.isEmpty)
    }

    @Test(arguments: [256, 960])
    func framesLostAreOneBreakForward(lostFrames: Int) throws {
        let cut = 120_000  // interleaved: captured frame 57_600 of the copy from source frame 2_400
        let captured = Self.asCaptured(Self.source[4_800 ..< cut] + Self.source[(cut + 2 * lostFrames) ..< 190_000])
        let match = try #require(TestSignal.match(captured: captured, source: Self.source))
        #expect(match.residualDecibels > -60)
        let copyBreak = try #require(match.breaks.count == 1 ? match.breaks.first : nil, "\(match.mismatch)")
        #expect(copyBreak.jumpFrames == lostFrames && copyBreak.exactFromFrame == (cut - 4_800) / 2, "\(copyBreak)")
    }

    /// Lost before the middle of the capture, where the match anchors: the copy before the
    /// break is the file at another offset (seen on a busy machine: a cycle lost 256 frames in).
    @Test(arguments: [256, 27_904])
    func framesLostBeforeTheAnchorAreOneBreakForward(cutFrame: Int) throws {
        let start = 2_400, lost = 256
        let captured = Self.asCaptured(Self.source[(2 * start) ..< (2 * (start + cutFrame))]
            + Self.source[(2 * (start + cutFrame + lost)) ..< 190_000])
        let match = try #require(TestSignal.match(captured: captured, source: Self.source))
        #expect(match.residualDecibels > -60)
        let copyBreak = try #require(match.breaks.count == 1 ? match.breaks.first : nil, "\(match.mismatch)")
        #expect(copyBreak.jumpFrames == lost && copyBreak.firstDifferingFrame == cutFrame && copyBreak.exactFromFrame == cutFrame,
                "\(copyBreak)")
    }

    @Test func aStartThatIsNotTheFileHasNoBreak() throws {
        var samples = Array(Self.source[4_800 ..< 190_000])
        for index in stride(from: 0, to: 2 * 1_000, by: 3) { samples[index] = samples[index] / 2 }
        let match = try #require(TestSignal.match(captured: Self.asCaptured(samples[...]), source: Self.source))
        #expect(match.residualDecibels > -60)
        #expect(match.breaks.isEmpty, "\(match.mismatch)")
    }

    /// Silence put in, a quantum or longer than the 50 ms looked through for the copy again (an
    /// app's stream held up 139 ms while its server starved, the file then skipped).
    @Test(arguments: [(heldFrames: 256, skippedFrames: 0), (heldFrames: 6_656, skippedFrames: 6_656)])
    func silencePutInIsOneBreak(heldFrames: Int, skippedFrames: Int) throws {
        let cut = 120_000
        let captured = Self.asCaptured(Self.source[4_800 ..< cut] + [Int16](repeating: 0, count: 2 * heldFrames)
            + Self.source[(cut + 2 * skippedFrames) ..< 190_000])
        let match = try #require(TestSignal.match(captured: captured, source: Self.source))
        let copyBreak = try #require(match.breaks.count == 1 ? match.breaks.first : nil, "\(match.mismatch)")
        #expect(copyBreak.jumpFrames == skippedFrames - heldFrames && copyBreak.silentBetween, "\(copyBreak)")
        #expect(copyBreak.exactFromFrame - copyBreak.firstDifferingFrame == heldFrames, "\(copyBreak)")
    }

    /// A cycle lost, then later one played twice (seen on PipeWire: a late driver's catch-up
    /// cycle, and one in which the node read an app's buffer a second time): two breaks, each
    /// told, the copy exact between and after them.
    @Test func aLossAndARepeatAreTwoBreaks() throws {
        let lostAt = 30_000, repeatedAt = 70_000, quantum = 256
        let captured = Self.asCaptured(Self.source[(2 * 2_400) ..< (2 * lostAt)]
            + Self.source[(2 * (lostAt + quantum)) ..< (2 * repeatedAt)]
            + Self.source[(2 * (repeatedAt - quantum)) ..< (2 * 90_000)])
        let match = try #require(TestSignal.match(captured: captured, source: Self.source))
        #expect(match.residualDecibels > -60)
        #expect(match.breaks.map(\.jumpFrames) == [quantum, -quantum], "\(match.mismatch)")
        #expect(match.breaks.map(\.firstDifferingFrame) == [lostAt - 2_400, repeatedAt - quantum - 2_400], "\(match.mismatch)")
    }

    /// A copy from a node late over and over (ci69: 83 late cycles in two seconds, the host
    /// taking 36 % of the CPUs): a quantum lost every 600 frames, each a break, past 64 of them.
    @Test func aHundredQuantaLostAreAHundredBreaks() throws {
        let quantum = 256, kept = 600
        var captured: [Int16] = [], sourceFrame = 2_400
        while sourceFrame + kept <= Self.source.count / 2 {
            captured += Self.source[(2 * sourceFrame) ..< (2 * (sourceFrame + kept))]
            sourceFrame += kept + quantum
        }
        let match = try #require(TestSignal.match(captured: Self.asCaptured(captured[...]), source: Self.source))
        let lost = captured.count / 2 / kept - 1
        #expect(lost > 64)
        #expect(match.breaks.count == lost && match.breaks.allSatisfy { $0.jumpFrames == quantum }, "\(match.breaks.count) breaks of \(lost)")
    }

    /// Two quanta replaced in place by something else (seen on PipeWire under a host's
    /// steal): one break of no jump, its span told.
    @Test func framesReplacedInPlaceAreOneBreakOfNoJump() throws {
        var samples = Array(Self.source[4_800 ..< 150_000])
        for index in (2 * 40_000) ..< (2 * 40_512) { samples[index] = samples[index] / 3 &+ 1_000 }
        let match = try #require(TestSignal.match(captured: Self.asCaptured(samples[...]), source: Self.source))
        let copyBreak = try #require(match.breaks.count == 1 ? match.breaks.first : nil, "\(match.mismatch)")
        #expect(copyBreak.jumpFrames == 0 && copyBreak.exactFromFrame - copyBreak.firstDifferingFrame == 512, "\(copyBreak)")
    }

    @Test func aCopyThatStaysWrongHasNoBreak() throws {
        var samples = Array(Self.source[4_800 ..< 190_000])
        for index in stride(from: 120_000 - 4_800, to: samples.count, by: 7) { samples[index] = samples[index] / 2 }
        let match = try #require(TestSignal.match(captured: Self.asCaptured(samples[...]), source: Self.source))
        #expect(match.residualDecibels > -60)
        #expect(match.breaks.isEmpty, "\(match.mismatch)")
    }

    /// The known late-driver weakness, as the capture tests judge it: whole quanta skipped, no
    /// more breaks than the node's late cycles unless the machine was disturbed; a loss of
    /// another size, or more breaks than late cycles on an undisturbed machine, is not it.
    @Test func aLateDriversLossIsWholeQuantaNoMoreThanTheLateCycles() throws {
        func lost(_ frames: Int) throws -> TestSignal.Match {
            let cut = 120_000
            return try #require(TestSignal.match(captured: Self.asCaptured(Self.source[4_800 ..< cut] + Self.source[(cut + 2 * frames) ..< 190_000]),
                                                 source: Self.source))
        }
        let quantum = try lost(256), notAQuantum = try lost(300)
        #expect(CaptureOnServerTests.Fixture.isLateDriversLoss(quantum, lateCycles: 1))
        #expect(!CaptureOnServerTests.Fixture.isLateDriversLoss(quantum, lateCycles: 0))
        #expect(CaptureOnServerTests.Fixture.isLateDriversLoss(quantum, lateCycles: 0, machineDisturbed: true))
        #expect(!CaptureOnServerTests.Fixture.isLateDriversLoss(notAQuantum, lateCycles: 0, machineDisturbed: true))
        #expect(!CaptureOnServerTests.Fixture.isLateDriversLoss(notAQuantum, lateCycles: 3))
        // A graph run at an app's 128 frames loses 128: a quantum then, not at 256.
        let smallQuantum = try lost(128)
        #expect(CaptureOnServerTests.Fixture.isLateDriversLoss(smallQuantum, lateCycles: 1, quantumFrames: 128))
        #expect(!CaptureOnServerTests.Fixture.isLateDriversLoss(smallQuantum, lateCycles: 1))
        let exact = try #require(TestSignal.match(captured: Self.asCaptured(Self.source[4_800 ..< 150_000]), source: Self.source))
        #expect(!CaptureOnServerTests.Fixture.isLateDriversLoss(exact, lateCycles: 3))
    }
}
