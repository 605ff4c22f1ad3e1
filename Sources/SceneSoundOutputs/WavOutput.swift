import Glibc
import SceneSoundEngine
import SceneSoundMedia
import Synchronization
import SceneSoundPlatform

/// `--output wav:PATH`: renders in real time and writes the mix as 32-bit float stereo WAV.
/// The render thread only copies each block into a ring; a writer thread does the file I/O
/// and keeps the header current, so the file is a valid WAV of everything delivered so far
/// at any moment. A write error (a full disk) is reported and writing stops; rendering and
/// the clients carry on.
public final class WavOutput: OutputBackend, @unchecked Sendable {
    public let path: String
    private var writer: AudioFileWriter?
    private var renderThread: ClockedRenderThread?
    private var writerThread: PlatformThread?
    private var ring: AudioRing?
    private let running = Atomic<Bool>(false)
    private let overflowFrames = Atomic<Int>(0)
    private let errorLock = Mutex<String?>(nil)
    private weak var engine: Engine?

    public init(path: String) { self.path = path }

    public func start(engine: Engine) throws {
        let rate = Int(engine.configuration.sampleRateHz)
        do {
            writer = try AudioFileWriter(path: path, sampleRateHz: rate, channelCount: 2, inPlace: true)
        } catch let error as AudioFileError {
            throw OutputError(error.description)
        }
        // Two seconds of slack between the render thread and the disk.
        let ring = AudioRing(capacityFrames: rate * 2, channelCount: 2)
        self.ring = ring
        self.engine = engine
        running.store(true, ordering: .releasing)

        do {
            writerThread = try PlatformThread { [self] in writeLoop() }
        } catch {
            throw OutputError("cannot start the wav writer thread (\(error))")
        }

        let thread = ClockedRenderThread(engine: engine) { [unowned self] block, frames in
            let written = ring.write(block, frames: frames)
            if written < frames { overflowFrames.add(frames - written, ordering: .relaxed) }
        }
        try thread.start()
        renderThread = thread
    }

    private func writeLoop() {
        let chunk = 4096
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunk * 2)
        let planar = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
        planar[0] = .allocate(capacity: chunk)
        planar[1] = .allocate(capacity: chunk)
        defer { buffer.deallocate(); planar[0].deallocate(); planar[1].deallocate(); planar.deallocate() }
        var delivered = 0
        while true {
            let stillRunning = running.load(ordering: .acquiring)
            guard let ring else { return }
            let got = ring.read(into: planar, frames: chunk)
            if got > 0 {
                for n in 0..<got { buffer[2 * n] = planar[0][n]; buffer[2 * n + 1] = planar[1][n] }
                if let writer, errorLock.withLock({ $0 }) == nil {
                    do {
                        try writer.write(buffer, frames: got)
                        writer.flushHeader()
                    } catch {
                        errorLock.withLock { $0 = String(describing: error) }
                    }
                }
                delivered += got
                engine?.markDelivered(throughFrame: delivered)
                continue
            }
            if !stillRunning { return }
            usleep(5000)
        }
    }

    public func stop() throws {
        guard running.load(ordering: .acquiring) else { return }
        renderThread?.stop()
        running.store(false, ordering: .releasing)
        writerThread?.join()
        writerThread = nil
        try writer?.finish()
        writer = nil
    }

    private var overflowDescription: String? {
        let lost = overflowFrames.load(ordering: .relaxed)
        return lost > 0 ? "\(lost) frames dropped: the disk did not keep up" : nil
    }

    public var status: OutputStatus {
        OutputStatus(kind: "wav", target: path, connected: errorLock.withLock { $0 } == nil,
                     underruns: renderThread?.lateBlockCount ?? 0, overloadedBlocks: renderThread?.overloadedBlockCount ?? 0,
                     slowestBlock: renderThread?.slowestBlock,
                     renderThreadScheduling: renderThread?.scheduling.obtained?.description,
                     lastError: errorLock.withLock { $0 } ?? overflowDescription)
    }
}
