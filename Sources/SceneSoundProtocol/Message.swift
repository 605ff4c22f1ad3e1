/// Every message of protocol version 1, with its payload.
public enum Message: Equatable, Sendable {
    case hello(Hello)
    case welcome(Welcome)
    case ok
    case error(ErrorReply)
    case sceneBindWindow(SceneBindWindow)
    case scenePlace(ScenePlace)
    case sceneUnbind(SceneUnbind)
    case sceneList
    case sceneListReply(SceneListReply)
    case streamOpen(StreamOpen)
    case streamOpened(StreamOpened)
    case streamData(StreamData)
    case streamDrain(StreamReference)
    case streamClose(StreamReference)
    case streamSetVolume(StreamSetVolume)
    case streamSetScene(StreamSetScene)
    case sampleUpload(SampleUpload)
    case samplePlay(SamplePlay)
    case samplePlaying(SamplePlaying)
    case headPose(HeadPose)
    case headRecenter
    case headTrackingSet(HeadTrackingSet)
    case headTrackerUse(HeadTrackerUse)
    case statusRequest
    case statusReply(StatusReply)
    case headphoneEQUse(HeadphoneEQUse)
    case hrtfUse(HRTFUse)
    case spatialUse(SpatialUse)
    case outputDeviceWatch
    case renderUse(RenderUse)
    case creditGranted(CreditGranted)
    case streamEnded(StreamEnded)
    case streamError(StreamError)
    case playbackEnded(PlaybackEnded)
    case outputDeviceChanged(OutputDeviceChanged)

    public var type: MessageType {
        switch self {
        case .hello: .hello
        case .welcome: .welcome
        case .ok: .ok
        case .error: .error
        case .sceneBindWindow: .sceneBindWindow
        case .scenePlace: .scenePlace
        case .sceneUnbind: .sceneUnbind
        case .sceneList: .sceneList
        case .sceneListReply: .sceneListReply
        case .streamOpen: .streamOpen
        case .streamOpened: .streamOpened
        case .streamData: .streamData
        case .streamDrain: .streamDrain
        case .streamClose: .streamClose
        case .streamSetVolume: .streamSetVolume
        case .streamSetScene: .streamSetScene
        case .sampleUpload: .sampleUpload
        case .samplePlay: .samplePlay
        case .samplePlaying: .samplePlaying
        case .headPose: .headPose
        case .headRecenter: .headRecenter
        case .headTrackingSet: .headTrackingSet
        case .headTrackerUse: .headTrackerUse
        case .statusRequest: .statusRequest
        case .statusReply: .statusReply
        case .headphoneEQUse: .headphoneEQUse
        case .hrtfUse: .hrtfUse
        case .spatialUse: .spatialUse
        case .outputDeviceWatch: .outputDeviceWatch
        case .renderUse: .renderUse
        case .creditGranted: .creditGranted
        case .streamEnded: .streamEnded
        case .streamError: .streamError
        case .playbackEnded: .playbackEnded
        case .outputDeviceChanged: .outputDeviceChanged
        }
    }

    /// The payload struct, or nil for the messages without a payload.
    private var payload: (any WirePayload)? {
        switch self {
        case .ok, .sceneList, .headRecenter, .statusRequest, .outputDeviceWatch: nil
        case .hello(let p): p
        case .welcome(let p): p
        case .error(let p): p
        case .sceneBindWindow(let p): p
        case .scenePlace(let p): p
        case .sceneUnbind(let p): p
        case .sceneListReply(let p): p
        case .streamOpen(let p): p
        case .streamOpened(let p): p
        case .streamData(let p): p
        case .streamDrain(let p), .streamClose(let p): p
        case .streamSetVolume(let p): p
        case .streamSetScene(let p): p
        case .sampleUpload(let p): p
        case .samplePlay(let p): p
        case .samplePlaying(let p): p
        case .headPose(let p): p
        case .headTrackingSet(let p): p
        case .headTrackerUse(let p): p
        case .statusReply(let p): p
        case .headphoneEQUse(let p): p
        case .hrtfUse(let p): p
        case .spatialUse(let p): p
        case .renderUse(let p): p
        case .outputDeviceChanged(let p): p
        case .creditGranted(let p): p
        case .streamEnded(let p): p
        case .streamError(let p): p
        case .playbackEnded(let p): p
        }
    }

    /// Appends the payload (not the frame header; see `FrameEncoder`). Does not validate: call
    /// `validate()` first when the values come from outside.
    public func encode(into bytes: inout [UInt8]) {
        payload?.write(into: &bytes)
    }

    /// The range checks a receiver applies (see each payload's `validate()`).
    public func validate() throws(ProtocolError) {
        try payload?.validate()
    }

    /// Decodes and validates a payload. Throws `unknown_message_type` for type numbers version 1
    /// does not define, `malformed_payload` for truncation, trailing bytes, bad UTF-8 or NUL,
    /// and `invalid_argument` / `bad_format` for values out of range.
    /// `version`: the connection's agreed protocol version (1 before `WELCOME`).
    public static func decode(type typeCode: UInt16, payload: ArraySlice<UInt8>,
                              version: UInt16 = 1) throws(ProtocolError) -> Message {
        guard let type = MessageType(rawValue: typeCode) else {
            throw ProtocolError(.unknownMessageType, "message type 0x\(String(typeCode, radix: 16)) unknown")
        }
        var reader = PayloadReader(payload, messageName: type.name, version: version)
        let message: Message
        switch type {
        case .ok: message = .ok
        case .sceneList: message = .sceneList
        case .headRecenter: message = .headRecenter
        case .statusRequest: message = .statusRequest
        case .hello: message = .hello(try Hello(reading: &reader))
        case .welcome: message = .welcome(try Welcome(reading: &reader))
        case .error: message = .error(try ErrorReply(reading: &reader))
        case .sceneBindWindow: message = .sceneBindWindow(try SceneBindWindow(reading: &reader))
        case .scenePlace: message = .scenePlace(try ScenePlace(reading: &reader))
        case .sceneUnbind: message = .sceneUnbind(try SceneUnbind(reading: &reader))
        case .sceneListReply: message = .sceneListReply(try SceneListReply(reading: &reader))
        case .streamOpen: message = .streamOpen(try StreamOpen(reading: &reader))
        case .streamOpened: message = .streamOpened(try StreamOpened(reading: &reader))
        case .streamData: message = .streamData(try StreamData(reading: &reader))
        case .streamDrain: message = .streamDrain(try StreamReference(reading: &reader))
        case .streamClose: message = .streamClose(try StreamReference(reading: &reader))
        case .streamSetVolume: message = .streamSetVolume(try StreamSetVolume(reading: &reader))
        case .streamSetScene: message = .streamSetScene(try StreamSetScene(reading: &reader))
        case .sampleUpload: message = .sampleUpload(try SampleUpload(reading: &reader))
        case .samplePlay: message = .samplePlay(try SamplePlay(reading: &reader))
        case .samplePlaying: message = .samplePlaying(try SamplePlaying(reading: &reader))
        case .headPose: message = .headPose(try HeadPose(reading: &reader))
        case .headTrackingSet: message = .headTrackingSet(try HeadTrackingSet(reading: &reader))
        case .headTrackerUse: message = .headTrackerUse(try HeadTrackerUse(reading: &reader))
        case .statusReply: message = .statusReply(try StatusReply(reading: &reader))
        case .headphoneEQUse: message = .headphoneEQUse(try HeadphoneEQUse(reading: &reader))
        case .hrtfUse: message = .hrtfUse(try HRTFUse(reading: &reader))
        case .spatialUse: message = .spatialUse(try SpatialUse(reading: &reader))
        case .outputDeviceWatch: message = .outputDeviceWatch
        case .renderUse: message = .renderUse(try RenderUse(reading: &reader))
        case .creditGranted: message = .creditGranted(try CreditGranted(reading: &reader))
        case .streamEnded: message = .streamEnded(try StreamEnded(reading: &reader))
        case .streamError: message = .streamError(try StreamError(reading: &reader))
        case .playbackEnded: message = .playbackEnded(try PlaybackEnded(reading: &reader))
        case .outputDeviceChanged: message = .outputDeviceChanged(try OutputDeviceChanged(reading: &reader))
        }
        try reader.finish()
        try message.validate()
        return message
    }

    /// Decodes a whole frame: checks the request id rule (`malformed_frame`), then the payload.
    public static func decode(frame: Frame, version: UInt16 = 1) throws(ProtocolError) -> Message {
        if let type = MessageType(rawValue: frame.typeCode) {
            try type.checkRequestID(frame.requestID)
        }
        return try decode(type: frame.typeCode, payload: frame.payload, version: version)
    }
}
