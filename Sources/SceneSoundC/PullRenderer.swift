import SceneSoundClient
import SceneSoundPlatform
import Synchronization

/// `scenesound_render_callback`: (user_data, buffer, frames) -> frames written (size_t as Int).
public typealias RenderFunction = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int) -> Int

/// The C render callback and its user data, carried to the render thread. The user data is the
/// caller's pointer; the library never looks at it.
struct RenderCallback: @unchecked Sendable {
    let function: RenderFunction
    let userData: UnsafeMutableRawPointer?
}

/// Pull mode (`scenesound_stream_open_callback`): a thread that asks the callback for one period
/// at a time and writes it with the ordinary blocking write, so the server's credit paces the
/// callback at the output's speed with no clock of our own. A short period ends the stream:
/// it is drained and the callback is not called again.
final class PullRenderer: Sendable {
    /// How the render thread ended: drained after the callback's last period, or why not.
    let finished = OneShot<Result<Void, CFailure>>()
    private let stopRequested = Atomic<Bool>(false)
    private let thread = Mutex<PlatformThread?>(nil)
    private let threadIdentity = Mutex<PlatformThread?>(nil)

    /// Starts the render thread for `stream`.
    init(stream: ClientStream, callback: RenderCallback, periodFrames: Int) throws(CFailure) {
        let worker: PlatformThread
        do {
            worker = try PlatformThread { [self] in render(stream, callback, periodFrames) }
        } catch {
            throw CFailure(StatusCode.noResources, "cannot start the render thread (\(error))")
        }
        thread.withLock { $0 = worker }
        threadIdentity.withLock { $0 = worker }
    }

    /// Whether the caller is this renderer's thread (inside its callback).
    var isRenderThread: Bool { threadIdentity.withLock { $0?.isCurrent ?? false } }

    /// Asks the thread to stop. The caller then closes the stream, which wakes a blocked write,
    /// and calls `join`.
    func requestStop() { stopRequested.store(true, ordering: .releasing) }

    /// Waits for the thread to end (once; from the thread itself it only detaches).
    func join() { thread.withLock { $0.take() }?.joinOrDetach() }

    private func render(_ stream: ClientStream, _ callback: RenderCallback, _ periodFrames: Int) {
        let bytesPerFrame = stream.format.bytesPerFrame
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: periodFrames * bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        do throws(ClientError) {
            while !stopRequested.load(ordering: .acquiring) {
                // size_t comes back as Int: a "negative" (huge) count or 0 ends the stream.
                let returned = callback.function(callback.userData, buffer.baseAddress, periodFrames)
                let frames = min(max(returned, 0), periodFrames)
                if frames > 0 {
                    try stream.write(UnsafeRawBufferPointer(rebasing: buffer[0..<frames * bytesPerFrame]))
                }
                if frames < periodFrames {
                    try stream.drain()
                    finished.fulfill(.success(()))
                    return
                }
            }
            finished.fulfill(.failure(CFailure(StatusCode.closed, "the stream was closed")))
        } catch {
            finished.fulfill(.failure(CFailure(error)))
        }
    }
}
