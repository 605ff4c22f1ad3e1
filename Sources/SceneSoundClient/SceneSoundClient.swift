import SceneSoundProtocol

/// The async API for Swift programs, over the same core as `ClientConnection`: each call sends
/// its request and suspends until the reader thread delivers the reply. Cancelling the task
/// withdraws the wait (`ClientError.cancelled`); the request itself may still take effect.
public final class SceneSoundClient: Sendable {
    /// The blocking connection underneath, for what the async API does not cover.
    public let connection: ClientConnection

    public init(connection: ClientConnection) {
        self.connection = connection
    }

    /// Connects to the socket `SocketPath.resolve` names (explicit path, `$SCENESOUND_SOCKET`,
    /// `$XDG_RUNTIME_DIR/scenesound/socket`).
    public static func connect(socketPath: String, clientName: String,
                               timeoutSeconds: Double? = ClientConnection.defaultTimeoutSeconds) async throws(ClientError) -> SceneSoundClient {
        let connection = try await runOnOwnThread { () -> Result<ClientConnection, ClientError> in
            do throws(ClientError) {
                return .success(try ClientConnection(socketPath: socketPath, clientName: clientName, timeoutSeconds: timeoutSeconds))
            } catch {
                return .failure(error)
            }
        }
        return SceneSoundClient(connection: connection)
    }

    public var server: ServerParameters { connection.server }

    public func close() { connection.close() }

    /// Performs any operation asynchronously.
    public func perform<Value>(_ operation: ClientOperation<Value>) async throws(ClientError) -> Value {
        let connection = self.connection
        return try await awaitOperation(operation.name) { connection.perform(operation, completion: $0) }
    }

    public func bindScene(_ sceneID: String, toWindow windowID: UInt32) async throws(ClientError) {
        try await perform(.bindScene(sceneID, toWindow: windowID))
    }

    public func placeScene(_ sceneID: String, at position: ScenePosition) async throws(ClientError) {
        try await perform(.placeScene(sceneID, at: position))
    }

    public func unbindScene(_ sceneID: String) async throws(ClientError) {
        try await perform(.unbindScene(sceneID))
    }

    public func listScenes() async throws(ClientError) -> [SceneListEntry] {
        try await perform(.listScenes())
    }

    /// The server's status document as JSON text: a `StatusDocument` (SPEC.md section 6.8).
    public func status() async throws(ClientError) -> String {
        try await perform(.status())
    }

    public func sendHeadPose(_ pose: HeadPose) throws(ClientError) {
        try connection.sendHeadPose(pose)
    }

    public func recenterHead() async throws(ClientError) {
        try await perform(.recenterHead())
    }

    /// What the renderer follows of a tracked head, and automatic recentering (0 s: off).
    public func setHeadTracking(_ mode: HeadTrackingSet.Mode, recenterAfterSeconds: Float = 0) async throws(ClientError) {
        try await perform(.setHeadTracking(mode, recenterAfterSeconds: recenterAfterSeconds))
    }

    /// Which tracker input is followed, and the poses a second taken from each (0: the daemon's own limits).
    public func useHeadTracker(_ tracker: HeadTrackerUse.Tracker, posesPerSecond: UInt32 = 0) async throws(ClientError) {
        try await perform(.useHeadTracker(tracker, posesPerSecond: posesPerSecond))
    }

    /// Equalizes the headphones with the ParametricEQ.txt at `path` (absolute; nil: none).
    public func useHeadphoneEQ(path: String?) async throws(ClientError) {
        try await perform(.useHeadphoneEQ(path: path))
    }

    /// Switches the server to the HRTF set in the SOFA file at `path` (absolute), live.
    public func useHRTF(path: String) async throws(ClientError) {
        try await perform(.useHRTF(path: path))
    }

    /// The spatial mode of the output device playing now, remembered for it.
    public func useSpatial(_ spatial: DeviceSpatial) async throws(ClientError) {
        try await perform(.useSpatial(spatial))
    }

    /// How the output device playing now is rendered (auto, headphones, speakers), remembered for it.
    public func useRender(_ render: DeviceRender) async throws(ClientError) {
        try await perform(.useRender(render))
    }

    public func uploadSample(name: String, format: AudioFormat, pcm: [UInt8]) async throws(ClientError) {
        let connection = self.connection
        try await awaitOperation("SAMPLE_UPLOAD") {
            SampleUploader.upload(name: name, format: format, pcm: pcm, over: connection, completion: $0)
        }
    }

    /// Plays a cached sample; returns its play id.
    public func playSample(_ play: SamplePlay) async throws(ClientError) -> UInt32 {
        try await perform(.playSample(play))
    }

    /// Suspends until the play ends; returns how it ended.
    public func playbackEnd(playID: UInt32) async throws(ClientError) -> PlaybackEndReason {
        let connection = self.connection
        return try await awaitOperation("waiting for the end of play \(playID)") {
            connection.whenPlaybackEnds(playID: playID, completion: $0)
        }
    }

    public func openStream(_ options: StreamOpen) async throws(ClientError) -> SceneSoundStream {
        let opened = try await perform(.openStream(options))
        return SceneSoundStream(ClientStream(connection: connection, options: options, opened: opened))
    }
}
