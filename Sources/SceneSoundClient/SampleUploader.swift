import SceneSoundProtocol
import Synchronization

/// `SAMPLE_UPLOAD` in chunks (SPEC.md 6.6): every chunk in its own frame, all sent without
/// waiting, in order; done when every chunk is acknowledged, failed at the first `ERROR`.
enum SampleUploader {
    /// The chunks' PCM ranges: as large as a frame allows, whole audio frames.
    static func chunkRanges(totalBytes: Int, nameBytes: Int, bytesPerFrame: Int, maxFrameBytes: Int) -> [Range<Int>] {
        let room = maxFrameBytes - FrameHeader.byteCount - SampleUpload.headerBytes(nameBytes: nameBytes)
        let chunkBytes = room - room % bytesPerFrame
        return stride(from: 0, to: totalBytes, by: chunkBytes).map { $0..<min($0 + chunkBytes, totalBytes) }
    }

    static func upload(name: String, format: AudioFormat, pcm: [UInt8], over connection: ClientConnection,
                       completion: @escaping OperationCompletion<Void>) -> OperationCanceller {
        guard !pcm.isEmpty, pcm.count % format.bytesPerFrame == 0 else {
            completion(.failure(.invalidArgument("a sample must hold at least one audio frame and whole frames only (\(pcm.count) bytes, \(format.bytesPerFrame) per frame)")))
            return { _ in }
        }
        guard pcm.count <= connection.server.maxSampleBytes else {
            completion(.failure(.invalidArgument("sample \"\(name)\" of \(pcm.count) bytes exceeds the server's maximum of \(connection.server.maxSampleBytes) bytes")))
            return { _ in }
        }
        let ranges = chunkRanges(totalBytes: pcm.count, nameBytes: name.utf8.count, bytesPerFrame: format.bytesPerFrame,
                                 maxFrameBytes: connection.server.maxFrameBytes)
        let progress = UploadProgress(chunks: ranges.count, completion: completion)
        for range in ranges {
            let chunk = SampleUpload(name: name, format: format, totalBytes: UInt32(pcm.count),
                                     offsetBytes: UInt32(range.lowerBound), pcm: pcm[range])
            progress.add(canceller: connection.send(.sampleUpload(chunk)) { progress.chunkDone($0) })
            if progress.isFinished { break }  // an early failure: stop sending
        }
        return { error in progress.cancel(error) }
    }

    /// Counts acknowledged chunks; completes once.
    private final class UploadProgress: Sendable {
        private struct State {
            var remaining: Int
            var completion: OperationCompletion<Void>?
            var cancellers: [OperationCanceller] = []
        }
        private let state: Mutex<State>

        init(chunks: Int, completion: @escaping OperationCompletion<Void>) {
            state = Mutex(State(remaining: chunks, completion: completion))
        }

        var isFinished: Bool { state.withLock { $0.completion == nil } }

        func add(canceller: @escaping OperationCanceller) {
            state.withLock { $0.cancellers.append(canceller) }
        }

        func chunkDone(_ result: Result<Message, ClientError>) {
            let finish: (() -> Void)? = state.withLock { state in
                guard let completion = state.completion else { return nil }
                switch result {
                case .failure(let error):
                    state.completion = nil
                    return { completion(.failure(error)) }
                case .success(.ok):
                    state.remaining -= 1
                    guard state.remaining == 0 else { return nil }
                    state.completion = nil
                    return { completion(.success(())) }
                case .success(let reply):
                    state.completion = nil
                    return { completion(.failure(.protocolViolation("\(reply.type.name) answers SAMPLE_UPLOAD"))) }
                }
            }
            finish?()
        }

        /// Withdraws the chunks still waiting; the upload fails with `error`.
        func cancel(_ error: ClientError) {
            let (completion, cancellers) = state.withLock { state in
                defer { state.completion = nil }
                return (state.completion, state.cancellers)
            }
            guard let completion else { return }
            cancellers.forEach { $0(error) }
            completion(.failure(error))
        }
    }
}
