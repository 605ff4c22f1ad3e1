import SceneSoundProtocol

/// One request and how to read its reply: the single definition of each operation, used by
/// the callback core, the blocking API (`ClientConnection`) and the async API
/// (`SceneSoundClient`).
public struct ClientOperation<Value: Sendable>: Sendable {
    public let request: Message
    let interpretReply: @Sendable (Message) throws(ClientError) -> Value

    public init(request: Message, interpretReply: @escaping @Sendable (Message) throws(ClientError) -> Value) {
        self.request = request
        self.interpretReply = interpretReply
    }

    /// What the operation is called in timeout and error messages.
    public var name: String { request.type.name }

    static func unexpectedReply(_ reply: Message, to request: Message) -> ClientError {
        .protocolViolation("\(reply.type.name) answers \(request.type.name)")
    }
}

extension ClientOperation where Value == Void {
    /// A request whose reply is `OK`.
    public static func expectingOK(_ request: Message) -> ClientOperation<Void> {
        ClientOperation(request: request) { (reply) throws(ClientError) in
            guard case .ok = reply else { throw unexpectedReply(reply, to: request) }
        }
    }

    public static func bindScene(_ sceneID: String, toWindow windowID: UInt32) -> ClientOperation<Void> {
        expectingOK(.sceneBindWindow(SceneBindWindow(sceneID: sceneID, windowID: windowID)))
    }

    public static func placeScene(_ sceneID: String, at position: ScenePosition) -> ClientOperation<Void> {
        expectingOK(.scenePlace(ScenePlace(sceneID: sceneID, position: position)))
    }

    public static func unbindScene(_ sceneID: String) -> ClientOperation<Void> {
        expectingOK(.sceneUnbind(SceneUnbind(sceneID: sceneID)))
    }

    public static func recenterHead() -> ClientOperation<Void> {
        expectingOK(.headRecenter)
    }

    /// What the renderer follows of a tracked head, and automatic recentering (0 s: off).
    public static func setHeadTracking(_ mode: HeadTrackingSet.Mode, recenterAfterSeconds: Float = 0) -> ClientOperation<Void> {
        expectingOK(.headTrackingSet(HeadTrackingSet(mode: mode, recenterAfterSeconds: recenterAfterSeconds)))
    }

    /// Which tracker input is followed, and the poses a second taken from each (0: the daemon's own limits).
    public static func useHeadTracker(_ tracker: HeadTrackerUse.Tracker, posesPerSecond: UInt32 = 0) -> ClientOperation<Void> {
        expectingOK(.headTrackerUse(HeadTrackerUse(tracker: tracker, posesPerSecond: posesPerSecond)))
    }

    /// Equalizes the headphones with the ParametricEQ.txt at `path` (absolute), or none (nil).
    public static func useHeadphoneEQ(path: String?) -> ClientOperation<Void> {
        expectingOK(.headphoneEQUse(HeadphoneEQUse(path: path ?? "")))
    }

    /// Renders with the SOFA file at `path` (absolute) from now on, crossfaded in.
    public static func useHRTF(path: String) -> ClientOperation<Void> {
        expectingOK(.hrtfUse(HRTFUse(path: path)))
    }

    /// `OUTPUT_DEVICE_CHANGED` events from now on (the first at once), to the event handler.
    public static func watchOutputDevice() -> ClientOperation<Void> {
        expectingOK(.outputDeviceWatch)
    }

    /// The spatial mode of the output device playing now, remembered for it.
    public static func useSpatial(_ spatial: DeviceSpatial) -> ClientOperation<Void> {
        expectingOK(.spatialUse(SpatialUse(spatial: spatial)))
    }

    /// How the output device playing now is rendered (auto, headphones, speakers), remembered for it.
    public static func useRender(_ render: DeviceRender) -> ClientOperation<Void> {
        expectingOK(.renderUse(RenderUse(render: render)))
    }
}

extension ClientOperation where Value == [SceneListEntry] {
    public static func listScenes() -> ClientOperation<[SceneListEntry]> {
        ClientOperation(request: .sceneList) { (reply) throws(ClientError) in
            guard case .sceneListReply(let list) = reply else { throw unexpectedReply(reply, to: .sceneList) }
            return list.entries
        }
    }
}

extension ClientOperation where Value == String {
    /// The server's status document, JSON text as the server sent it.
    public static func status() -> ClientOperation<String> {
        ClientOperation(request: .statusRequest) { (reply) throws(ClientError) in
            guard case .statusReply(let status) = reply else { throw unexpectedReply(reply, to: .statusRequest) }
            return status.json
        }
    }
}

extension ClientOperation where Value == UInt32 {
    /// Plays a cached sample; the value is the play id that `PLAYBACK_ENDED` names.
    public static func playSample(_ play: SamplePlay) -> ClientOperation<UInt32> {
        ClientOperation(request: .samplePlay(play)) { (reply) throws(ClientError) in
            guard case .samplePlaying(let playing) = reply else { throw unexpectedReply(reply, to: .samplePlay(play)) }
            return playing.playID
        }
    }
}

extension ClientOperation where Value == StreamOpened {
    public static func openStream(_ options: StreamOpen) -> ClientOperation<StreamOpened> {
        ClientOperation(request: .streamOpen(options)) { (reply) throws(ClientError) in
            guard case .streamOpened(let opened) = reply else { throw unexpectedReply(reply, to: .streamOpen(options)) }
            return opened
        }
    }
}
