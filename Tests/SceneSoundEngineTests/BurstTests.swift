import Foundation
import Testing
import SceneSoundDSP
import SceneSoundEngine

/// Real time under bursts: many streams arriving at once must not push a block anywhere near
/// its deadline. The engine admits a bounded number of new streams per block; each new voice's
/// first block (filters prepared, the governor placing it) costs more than a running one.
@Suite struct BurstTests {
    static func threadCPUNanoseconds() -> Int {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
    }

    /// 256 mono noise streams, all queued within the first second (a quarter of them at once,
    /// the rest spread over the second), each at its own place around the listener while the
    /// head turns; two seconds rendered, every block's render-thread CPU time measured.
    @Test func twoHundredFiftySixStreamsStartingWithinASecondKeepEveryBlockUnderHalfItsPeriod() {
        let configuration = EngineConfiguration()
        let block = configuration.blockFrames
        let engine = Engine(hrtf: KEMAR.set, configuration: configuration, maximumStreams: 256, maximumScenes: 256)
        var noise = WhiteNoise(seed: 3)
        let table = noise.samples(48000, amplitude: 0.1)
        var rings: [AudioRing] = []
        var pending: [EngineStream] = []
        for index in 0..<256 {
            let ring = AudioRing(capacityFrames: 4 * block, channelCount: 1)
            let input = RingInput(ring: ring)
            input.setIdle(false)
            let position = SphericalPosition(azimuthDegrees: Double(index) * 137.5, elevationDegrees: Double(index % 7) * 10 - 30,
                                             distanceMetres: 1 + Double(index % 5)).cartesian
            let source = RenderSource(input: input, channelCount: 1, mode: .anchored, channelPositions: [position],
                                      gain: 0.05, hrtf: KEMAR.set, maximumFrames: block)
            #expect(engine.commands.push(.placeScene(index: index, position: position, widthMetres: 0)))
            pending.append(EngineStream(id: StreamID(index + 1), source: source, input: input, sceneIndex: index))
            rings.append(ring)
        }
        let blocksPerSecond = Int(configuration.sampleRateHz) / block
        let period = Double(block) / configuration.sampleRateHz
        var output = [Float](repeating: 0, count: 2 * block)
        var slowest = 0, slowestBlock = 0, queued = 0
        for b in 0..<(2 * blocksPerSecond) {
            // 64 at once at the start, then the others evenly over the first second.
            let due = b == 0 ? 64 : min(256, 64 + 192 * b / (blocksPerSecond - 1))
            while queued < due {
                #expect(engine.commands.push(.addStream(pending[queued])))
                queued += 1
            }
            for (index, ring) in rings.enumerated() where ring.availableFrames < block {
                table.withUnsafeBufferPointer { _ = ring.write($0.baseAddress! + (b * block + index * 997) % (48000 - block), frames: block) }
            }
            _ = engine.commands.push(.setHeadPose(HeadPose(orientation: Quaternion(yawDegrees: 90 * Double(b) / Double(blocksPerSecond))), glide: true))
            let start = Self.threadCPUNanoseconds()
            engine.render(into: &output)
            let spent = Self.threadCPUNanoseconds() - start
            if spent > slowest { slowest = spent; slowestBlock = b }
        }
        #expect(queued == 256 && engine.renderer.sources.count == 256)
        let fraction = Double(slowest) * 1e-9 / period
        print("256 streams within 1 s: slowest block \(Double(slowest) / 1e6) ms of CPU (block \(slowestBlock)), \(Int(fraction * 100)) % of its \(period * 1000) ms period; voices \(engine.hrtfVoiceCount) HRTF / \(engine.busVoiceCount) bus")
        #expect(fraction <= 0.5)
    }
}
