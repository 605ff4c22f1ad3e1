import SceneSoundPlatform
import Synchronization

/// Pull mode, for `SceneSoundSourceNode` and the C library's `scenesound_stream_open_callback`:
/// a thread that asks a render function for one period at a time and writes it with the
/// ordinary blocking write, so that the server's credit paces the function at the output's
/// speed with no clock of our own. A short period ends the stream: it is drained and the
/// function is not called again.
package final class PullRenderer: Sendable {
    /// Fills `frames` audio frames at `buffer` (the stream's format, interleaved) and returns
    /// how many it wrote; fewer than asked (or a negative count) ends the stream.
    package typealias Render = @Sendable (_ buffer: UnsafeMutableRawPointer, _ frames: Int) -> Int

    /// How the render thread ended: drained after the function's last period, or why not
    /// (`streamClosed` when stopped).
    package let finished = OneShot<Result<Void, ClientError>>()
    private let stopRequested = Atomic<Bool>(false)
    private let thread = Mutex<PlatformThread?>(nil)
    private let threadIdentity = Mutex<PlatformThread?>(nil)

    /// Starts the render thread for `stream`.
    package init(stream: ClientStream, periodFrames: Int, render: @escaping Render) throws(PlatformThread.StartFailure) {
        let worker = try PlatformThread { [self] in run(stream, periodFrames, render) }
        thread.withLock { $0 = worker }
        threadIdentity.withLock { $0 = worker }
    }

    /// Whether the caller is this renderer's thread (inside its render function).
    package var isRenderThread: Bool { threadIdentity.withLock { $0?.isCurrent ?? false } }

    /// Asks the thread to stop. The caller then closes the stream, which wakes a blocked write,
    /// and calls `join`.
    package func requestStop() { stopRequested.store(true, ordering: .releasing) }

    /// Waits for the thread to end (once; from the thread itself it only detaches).
    package func join() { thread.withLock { $0.take() }?.joinOrDetach() }

    private func run(_ stream: ClientStream, _ periodFrames: Int, _ render: Render) {
        let bytesPerFrame = stream.format.bytesPerFrame
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: periodFrames * bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        do throws(ClientError) {
            while !stopRequested.load(ordering: .acquiring) {
                let frames = min(max(render(buffer.baseAddress!, periodFrames), 0), periodFrames)
                if frames > 0 {
                    try stream.write(UnsafeRawBufferPointer(rebasing: buffer[0..<frames * bytesPerFrame]))
                }
                if frames < periodFrames {
                    try stream.drain()
                    finished.fulfill(.success(()))
                    return
                }
            }
            finished.fulfill(.failure(.streamClosed(streamID: stream.id)))
        } catch {
            finished.fulfill(.failure(error))
        }
    }
}
