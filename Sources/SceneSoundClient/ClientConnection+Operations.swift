import SceneSoundProtocol

/// The blocking API, one method per operation (timeouts in seconds; nil waits as long as it
/// takes). Each is a `ClientOperation` performed and waited for.
extension ClientConnection {
    /// Anchors a scene to an X11 top-level window (`x11:` scenes cannot be bound).
    public func bindScene(_ sceneID: String, toWindow windowID: UInt32,
                          timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) {
        try perform(.bindScene(sceneID, toWindow: windowID), timeoutSeconds: timeoutSeconds)
    }

    /// Puts a scene at a fixed direction and distance, replacing any window binding.
    public func placeScene(_ sceneID: String, at position: ScenePosition,
                           timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) {
        try perform(.placeScene(sceneID, at: position), timeoutSeconds: timeoutSeconds)
    }

    /// Removes a scene's binding or placement; its streams then play straight ahead.
    public func unbindScene(_ sceneID: String, timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) {
        try perform(.unbindScene(sceneID), timeoutSeconds: timeoutSeconds)
    }

    public func listScenes(timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) -> [SceneListEntry] {
        try perform(.listScenes(), timeoutSeconds: timeoutSeconds)
    }

    /// The server's status document as JSON text: a `StatusDocument` (SPEC.md section 6.8).
    public func status(timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) -> String {
        try perform(.status(), timeoutSeconds: timeoutSeconds)
    }

    /// Sends the user's head pose (one-way; a failure comes back as a `.serverError` event).
    public func sendHeadPose(_ pose: HeadPose) throws(ClientError) {
        do throws(ProtocolError) { try pose.validate() } catch { throw ClientError(error) }
        try sendOneWay(.headPose(pose))
    }

    /// Makes the current head orientation "straight ahead".
    public func recenterHead(timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) {
        try perform(.recenterHead(), timeoutSeconds: timeoutSeconds)
    }

    /// What the renderer follows of a tracked head from now on, and automatic recentering
    /// after that many seconds at rest (0: off).
    public func setHeadTracking(_ mode: HeadTrackingSet.Mode, recenterAfterSeconds: Float = 0,
                                timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) {
        try perform(.setHeadTracking(mode, recenterAfterSeconds: recenterAfterSeconds), timeoutSeconds: timeoutSeconds)
    }

    /// Which tracker input is followed from now on (`any`: the newest pose from opentrack or
    /// OSC), and the poses a second taken from each input, more dropped unread (0: the daemon's
    /// own limits).
    public func useHeadTracker(_ tracker: HeadTrackerUse.Tracker, posesPerSecond: UInt32 = 0,
                               timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) {
        try perform(.useHeadTracker(tracker, posesPerSecond: posesPerSecond), timeoutSeconds: timeoutSeconds)
    }

    /// Equalizes the headphones with the ParametricEQ.txt at `path` (absolute; nil: none). A
    /// malformed file is refused (`invalid_argument`, naming its line) and the one in use kept.
    public func useHeadphoneEQ(path: String?, timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) {
        try perform(.useHeadphoneEQ(path: path), timeoutSeconds: timeoutSeconds)
    }

    /// Switches the server to the HRTF set in the SOFA file at `path` (absolute), live and
    /// crossfaded; returns once it is loaded (a set not cached yet is prepared first: seconds,
    /// hence the longer default timeout). A missing or bad file is refused
    /// (`invalid_argument`, naming it) and the set in use kept.
    public func useHRTF(path: String, timeoutSeconds: Double? = 120) throws(ClientError) {
        try perform(.useHRTF(path: path), timeoutSeconds: timeoutSeconds)
    }

    /// The spatial mode (off, fixed, head-tracked) of the output device playing now, from now on
    /// and whenever that device plays again. The device and its rendering: `status`'s
    /// `output_device` and `rendering`.
    public func useRender(_ render: DeviceRender, timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) {
        try perform(.useRender(render), timeoutSeconds: timeoutSeconds)
    }

    /// The spatial mode (off, fixed, head-tracked) of the output device playing now. (See above.)
    public func useSpatial(_ spatial: DeviceSpatial, timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) {
        try perform(.useSpatial(spatial), timeoutSeconds: timeoutSeconds)
    }

    /// Asks for `ClientEvent.outputDeviceChanged` whenever the output device or the rendering
    /// chosen for it changes (the first right after this returns), delivered to the event handler.
    public func watchOutputDevice(timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) {
        try perform(.watchOutputDevice(), timeoutSeconds: timeoutSeconds)
    }

    /// Uploads a sample (system or alert sound) into the server's cache, in as many chunks as
    /// the frame size needs; returns when the server has acknowledged all of them.
    public func uploadSample(name: String, format: AudioFormat, pcm: [UInt8],
                             timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) {
        try checkNotOnReaderThread("SAMPLE_UPLOAD")
        try waitBlocking("SAMPLE_UPLOAD", timeoutSeconds: timeoutSeconds) {
            SampleUploader.upload(name: name, format: format, pcm: pcm, over: self, completion: $0)
        }
    }

    /// Plays a cached sample; returns its play id (for `waitForPlaybackEnd`).
    /// `ClientError.server(unknown_sound)` means: upload it (again) first.
    public func playSample(_ play: SamplePlay, timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) -> UInt32 {
        try perform(.playSample(play), timeoutSeconds: timeoutSeconds)
    }

    /// Calls `completion` when the play ends (at once if it already has).
    @discardableResult
    public func whenPlaybackEnds(playID: UInt32,
                                 completion: @escaping OperationCompletion<PlaybackEndReason>) -> OperationCanceller {
        let token = session.nextToken()
        session.whenPlaybackEnds(playID: playID, token: token, completion: completion)
        let session = self.session
        return { error in
            if session.cancelPlaybackWaiter(playID: playID, token: token) { completion(.failure(error)) }
        }
    }

    /// Blocks until the play ends and says how (`completed`, `coalesced`, `interrupted`).
    public func waitForPlaybackEnd(playID: UInt32, timeoutSeconds: Double?) throws(ClientError) -> PlaybackEndReason {
        try checkNotOnReaderThread("waiting for PLAYBACK_ENDED")
        return try waitBlocking("waiting for the end of play \(playID)", timeoutSeconds: timeoutSeconds) {
            whenPlaybackEnds(playID: playID, completion: $0)
        }
    }

    /// Opens a stream. `ClientError.server(limit_exceeded)` when too many are open.
    public func openStream(_ options: StreamOpen,
                           timeoutSeconds: Double? = defaultTimeoutSeconds) throws(ClientError) -> ClientStream {
        let opened = try perform(.openStream(options), timeoutSeconds: timeoutSeconds)
        return ClientStream(connection: self, options: options, opened: opened)
    }
}
