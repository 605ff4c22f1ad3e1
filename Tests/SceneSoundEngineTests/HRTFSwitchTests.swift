import Foundation
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundSOFA
import SceneSoundTestSupport
import Testing

/// A live switch of HRTF set in the engine (HRTFSwitch): KEMAR to a rigid sphere while a source
/// at 60° left plays. Both sets render side by side for the crossfade, mixed linearly: no gap,
/// no click, and afterwards the cues are the new set's.
@Suite struct HRTFSwitchTests {
    static let rateHz = 48000.0
    static let configuration = EngineConfiguration(sampleRateHz: rateHz, blockFrames: 256, room: .none)
    /// The second head, prepared as the daemon prepares a set (diffuse-field equalized), and
    /// cached where the daemon tests' daemons cache it (the file is the same each run).
    static let sphere: HRTFSet = {
        let cache = HRTFLoader.defaultCacheDirectory(environment: ["XDG_CACHE_HOME": NSTemporaryDirectory() + "scenesound-test-cache"])
        return try! HRTFLoader(cacheDirectory: cache).load(path: try! SphereHeadSOFA.path(), sampleRateHz: rateHz).set
    }()
    static let azimuthDegrees = 60.0
    /// Beyond both sets' measurement distances (1.4 and 1.5 m): no near-field correction.
    static let distanceMetres = 1.6
    static let seconds = 1.0
    static let switchSeconds = 0.5

    struct Rendered {
        var left: [Float] = []
        var right: [Float] = []
        var retired: HRTFSwitch?
    }

    /// `input` at 60° left through an engine on `from`; with `to`, a switch to it is pushed at
    /// `switchSeconds`.
    static func render(_ input: [Float], from: HRTFSet, to: HRTFSet? = nil, room: Room = .none) -> Rendered {
        var configuration = configuration
        configuration.room = room
        let engine = Engine(hrtf: from, configuration: configuration)
        engine.renderer.governor.simulatedLoadFraction = 0
        let ring = AudioRing(capacityFrames: input.count, channelCount: 1)
        _ = input.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: input.count) }
        let ringInput = RingInput(ring: ring)
        let position = SphericalPosition(azimuthDegrees: azimuthDegrees, distanceMetres: distanceMetres).cartesian
        let source = RenderSource(input: ringInput, channelCount: 1, mode: .anchored, channelPositions: [position],
                                  gain: 1, hrtf: from, maximumFrames: configuration.blockFrames)
        let stream = EngineStream(id: 1, source: source, input: ringInput, sceneIndex: 0)
        #expect(engine.commands.push(.addStream(stream)))
        engine.commands.push(.placeScene(index: 0, position: position, widthMetres: 0))
        // Built off the render thread, as the server builds it.
        let change = to.map { HRTFSwitch(stage: BinauralStage(hrtf: $0, configuration: configuration), streams: [stream],
                                         blockFrames: configuration.blockFrames) }
        var out = Rendered()
        var block = [Float](repeating: 0, count: 2 * configuration.blockFrames)
        var pushed = false
        while out.left.count < input.count {
            if let change, !pushed, Double(out.left.count) >= switchSeconds * rateHz {
                #expect(engine.commands.push(.switchHRTF(change)))
                pushed = true
            }
            engine.render(into: &block)
            for n in 0..<configuration.blockFrames { out.left.append(block[2 * n]); out.right.append(block[2 * n + 1]) }
            while let event = engine.events.pop() {
                if case .retiredHRTF(let retired) = event { out.retired = retired }
            }
        }
        return out
    }

    static let noise: [Float] = {
        var generator = WhiteNoise(seed: 41)
        return generator.samples(Int(seconds * rateHz), amplitude: 0.3)
    }()
    static let tone: [Float] = (0..<Int(seconds * rateHz)).map { Float(0.3 * sin(2 * Double.pi * 500 * Double($0) / rateHz)) }

    /// Each 5 ms window's level (both ears' power, dB), from `start`.
    static func windowLevels(_ r: Rendered, from start: Int, to end: Int) -> [Double] {
        let window = Int(0.005 * rateHz)
        return stride(from: start, to: end - window + 1, by: window).map { w in
            var power = 0.0
            for n in w..<(w + window) { power += Double(r.left[n] * r.left[n] + r.right[n] * r.right[n]) }
            return 10 * log10(power / Double(window) + 1e-20)
        }
    }

    static func largestStep(_ levels: [Double]) -> Double {
        zip(levels, levels.dropFirst()).map { abs($1 - $0) }.max() ?? 0
    }

    static func cues(_ r: Rendered, _ range: Range<Int>) -> BinauralCues {
        CueAnalysis.cues(left: Array(r.left[range]), right: Array(r.right[range]), sampleRateHz: rateHz)
    }

    @Test func aSwitchMidNoiseLeavesNoGapAndEndsOnTheNewSetsCues() throws {
        let kemar = Self.render(Self.noise, from: KEMAR.set)
        let sphere = Self.render(Self.noise, from: Self.sphere)
        let switched = Self.render(Self.noise, from: KEMAR.set, to: Self.sphere)

        // Level continuity over the whole sound, 5 ms window by window.
        let start = 4800, end = Self.noise.count - 2400
        let steps = (kemar: Self.largestStep(Self.windowLevels(kemar, from: start, to: end)),
                     sphere: Self.largestStep(Self.windowLevels(sphere, from: start, to: end)),
                     switched: Self.largestStep(Self.windowLevels(switched, from: start, to: end)))
        let tail = Int((Self.switchSeconds + 0.15) * Self.rateHz)..<end
        let level = { (r: Rendered) in Self.windowLevels(r, from: tail.lowerBound, to: tail.upperBound).reduce(0, +)
            / Double(Self.windowLevels(r, from: tail.lowerBound, to: tail.upperBound).count) }
        print(String(format: "HRTF switch KEMAR -> sphere mid-noise: largest 5 ms level step %.2f dB (KEMAR alone %.2f, sphere alone %.2f); sets' levels %.2f / %.2f dB",
                     steps.switched, steps.kemar, steps.sphere, level(kemar), level(sphere)))
        #expect(steps.switched <= max(steps.kemar, steps.sphere) + 1)

        // After the switch: the sphere's cues, not KEMAR's.
        let before = Self.cues(switched, 4800..<Int((Self.switchSeconds - 0.01) * Self.rateHz))
        let after = Self.cues(switched, tail)
        let kemarCues = Self.cues(kemar, tail), sphereCues = Self.cues(sphere, tail)
        print(String(format: "HRTF switch cues at 60°: before %.0f µs %.2f dB (KEMAR %.0f µs %.2f dB); after %.0f µs %.2f dB (sphere %.0f µs %.2f dB)",
                     before.itdMicroseconds, before.interauralLevelDifferenceDecibels,
                     kemarCues.itdMicroseconds, kemarCues.interauralLevelDifferenceDecibels,
                     after.itdMicroseconds, after.interauralLevelDifferenceDecibels,
                     sphereCues.itdMicroseconds, sphereCues.interauralLevelDifferenceDecibels))
        #expect(abs(before.itdMicroseconds - kemarCues.itdMicroseconds) <= 10)
        #expect(abs(after.itdMicroseconds - sphereCues.itdMicroseconds) <= 10)
        #expect(abs(after.interauralLevelDifferenceDecibels - sphereCues.interauralLevelDifferenceDecibels) <= 0.5)
        // The two heads differ enough for this to tell them apart.
        #expect(abs(kemarCues.itdMicroseconds - sphereCues.itdMicroseconds) >= 40)

        // The old set came back through the event queue, to be freed off the render thread.
        let retired = try #require(switched.retired)
        #expect(retired.retiredStage?.hrtf === KEMAR.set)
        #expect(retired.stage.hrtf === Self.sphere)
    }

    /// A steady tone: no sample-to-sample jump beyond the tone's own (the third difference, as
    /// the motion tests measure clicks), and no silent run.
    @Test func aSwitchMidToneHasNoClick() {
        let kemar = Self.render(Self.tone, from: KEMAR.set)
        let sphere = Self.render(Self.tone, from: Self.sphere)
        let switched = Self.render(Self.tone, from: KEMAR.set, to: Self.sphere)
        for (name, a, b, s) in [("left", kemar.left, sphere.left, switched.left), ("right", kemar.right, sphere.right, switched.right)] {
            let reference = max(MotionTests.discontinuity(a), MotionTests.discontinuity(b))
            let measured = MotionTests.discontinuity(s)
            print(String(format: "HRTF switch mid-tone, %@ ear: discontinuity %.3g (unswitched %.3g)", name, measured, reference))
            #expect(measured < 1.5 * reference)
            var run = 0, longest = 0
            for x in s[4800...] { run = abs(x) < 1e-6 ? run + 1 : 0; longest = max(longest, run) }
            #expect(longest < 3)
        }
    }

    /// With a room, the reverb is heard through the new set's diffuse-field response after the
    /// switch: once the old reverb has died away, the mix is the new set's alone.
    @Test func aSwitchTakesTheRoomToTheNewSetToo() {
        let switched = Self.render(Self.noise, from: KEMAR.set, to: Self.sphere, room: .small)
        let sphere = Self.render(Self.noise, from: Self.sphere, room: .small)
        let kemar = Self.render(Self.noise, from: KEMAR.set, room: .small)
        let tail = (Self.noise.count - 9600)..<Self.noise.count  // 0.5 s after the switch: the small room's tail is 0.35 s
        func ratioDecibels(_ a: Rendered, _ b: Rendered) -> Double {
            var difference = 0.0, power = 0.0
            for n in tail {
                difference += Double((a.left[n] - b.left[n]) * (a.left[n] - b.left[n]) + (a.right[n] - b.right[n]) * (a.right[n] - b.right[n]))
                power += Double(b.left[n] * b.left[n] + b.right[n] * b.right[n])
            }
            return 10 * log10(difference / power + 1e-30)
        }
        let againstSphere = ratioDecibels(switched, sphere), sphereAgainstKEMAR = ratioDecibels(kemar, sphere)
        print(String(format: "HRTF switch with a small room: the mix 0.3 s after differs from the sphere's alone by %.1f dB (KEMAR's from the sphere's: %.1f dB)",
                     againstSphere, sphereAgainstKEMAR))
        #expect(againstSphere < -60)
    }
}
