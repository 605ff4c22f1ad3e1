import SceneSoundProtocol

/// Something the server told this client without being asked, or the end of the connection.
/// Delivered to `ClientConnection.setEventHandler` on the reader thread (for `.disconnected`,
/// possibly on the thread that called `close()`).
public enum ClientEvent: Sendable, Equatable {
    /// `STREAM_ENDED` for a stream this client still has open.
    case streamEnded(StreamEnded)
    /// `STREAM_ERROR` for a stream this client still has open; the stream is now defunct.
    case streamError(StreamError)
    /// `PLAYBACK_ENDED`: a sample play finished.
    case playbackEnded(PlaybackEnded)
    /// `OUTPUT_DEVICE_CHANGED` (after `watchOutputDevice`): the output device or its rendering
    /// changed; its JSON holds the status document's `output_device` and `rendering`.
    case outputDeviceChanged(OutputDeviceChanged)
    /// `ERROR` with request id 0: a one-way message failed, or the server is about to close.
    case serverError(ErrorReply)
    /// The connection ended; every waiter has been failed with this error.
    case disconnected(ClientError)
}

/// Receives `ClientEvent`s. Runs on the reader thread: keep it short and never block on a
/// reply from the same connection in it.
public typealias ClientEventHandler = @Sendable (ClientEvent) -> Void

/// A completion for a request: the reply message (never `ERROR`, which arrives as
/// `ClientError.server`), or why there is none. Runs on the reader thread.
public typealias ReplyCompletion = @Sendable (Result<Message, ClientError>) -> Void
