/// Message type numbers (u16 in the frame header), grouped by area in the high byte.
public enum MessageType: UInt16, Sendable, CaseIterable {
    // Handshake and generic replies; 0x00xx.
    case hello = 0x0001
    case welcome = 0x0002
    case ok = 0x0003
    case error = 0x0004
    // Scenes; 0x01xx.
    case sceneBindWindow = 0x0101
    case scenePlace = 0x0102
    case sceneUnbind = 0x0103
    case sceneList = 0x0104
    case sceneListReply = 0x0105
    // Streams; 0x02xx.
    case streamOpen = 0x0201
    case streamOpened = 0x0202
    case streamData = 0x0203
    case streamDrain = 0x0204
    case streamClose = 0x0205
    case streamSetVolume = 0x0206
    case streamSetScene = 0x0207
    // Sample cache; 0x03xx.
    case sampleUpload = 0x0301
    case samplePlay = 0x0302
    case samplePlaying = 0x0303
    // Head tracking; 0x04xx.
    case headPose = 0x0401
    case headRecenter = 0x0402
    case headTrackingSet = 0x0403
    case headTrackerUse = 0x0404
    // Status; 0x05xx.
    case statusRequest = 0x0501
    case statusReply = 0x0502
    // Listening settings; 0x06xx.
    case headphoneEQUse = 0x0601
    case hrtfUse = 0x0602
    case spatialUse = 0x0603
    case outputDeviceWatch = 0x0604
    case renderUse = 0x0605
    // Server events; 0x08xx.
    case creditGranted = 0x0801
    case streamEnded = 0x0802
    case streamError = 0x0803
    case playbackEnded = 0x0804
    case outputDeviceChanged = 0x0805

    /// Who may send it.
    public enum Direction: Sendable { case clientToServer, serverToClient }

    /// What the frame's request id must be.
    public enum RequestIDRule: Sendable {
        /// Requests (chosen by the client) and the replies that echo them.
        case nonZero
        /// One-way client messages and server events.
        case zero
        /// `ERROR`: echoes a request, or 0 when it concerns no request.
        case any
    }

    public var direction: Direction {
        switch self {
        case .hello, .sceneBindWindow, .scenePlace, .sceneUnbind, .sceneList, .streamOpen, .streamData,
             .streamDrain, .streamClose, .streamSetVolume, .streamSetScene, .sampleUpload, .samplePlay,
             .headPose, .headRecenter, .headTrackingSet, .headTrackerUse, .statusRequest, .headphoneEQUse, .hrtfUse, .spatialUse, .outputDeviceWatch, .renderUse:
            .clientToServer
        case .welcome, .ok, .error, .sceneListReply, .streamOpened, .samplePlaying, .statusReply,
             .creditGranted, .streamEnded, .streamError, .playbackEnded, .outputDeviceChanged:
            .serverToClient
        }
    }

    public var requestIDRule: RequestIDRule {
        switch self {
        case .streamData, .headPose, .creditGranted, .streamEnded, .streamError, .playbackEnded, .outputDeviceChanged: .zero
        case .error: .any
        default: .nonZero
        }
    }

    /// The SCREAMING_SNAKE name used in SPEC.md and the vector manifest.
    public var name: String {
        switch self {
        case .hello: "HELLO"
        case .welcome: "WELCOME"
        case .ok: "OK"
        case .error: "ERROR"
        case .sceneBindWindow: "SCENE_BIND_WINDOW"
        case .scenePlace: "SCENE_PLACE"
        case .sceneUnbind: "SCENE_UNBIND"
        case .sceneList: "SCENE_LIST"
        case .sceneListReply: "SCENE_LIST_REPLY"
        case .streamOpen: "STREAM_OPEN"
        case .streamOpened: "STREAM_OPENED"
        case .streamData: "STREAM_DATA"
        case .streamDrain: "STREAM_DRAIN"
        case .streamClose: "STREAM_CLOSE"
        case .streamSetVolume: "STREAM_SET_VOLUME"
        case .streamSetScene: "STREAM_SET_SCENE"
        case .sampleUpload: "SAMPLE_UPLOAD"
        case .samplePlay: "SAMPLE_PLAY"
        case .samplePlaying: "SAMPLE_PLAYING"
        case .headPose: "HEAD_POSE"
        case .headRecenter: "HEAD_RECENTER"
        case .headTrackingSet: "HEAD_TRACKING_SET"
        case .headTrackerUse: "HEAD_TRACKER_USE"
        case .statusRequest: "STATUS_REQUEST"
        case .statusReply: "STATUS_REPLY"
        case .headphoneEQUse: "HEADPHONE_EQ_USE"
        case .hrtfUse: "HRTF_USE"
        case .spatialUse: "SPATIAL_USE"
        case .outputDeviceWatch: "OUTPUT_DEVICE_WATCH"
        case .renderUse: "RENDER_USE"
        case .creditGranted: "CREDIT_GRANTED"
        case .streamEnded: "STREAM_ENDED"
        case .streamError: "STREAM_ERROR"
        case .playbackEnded: "PLAYBACK_ENDED"
        case .outputDeviceChanged: "OUTPUT_DEVICE_CHANGED"
        }
    }

    /// Checks a frame's request id against `requestIDRule`; a violation is `malformed_frame`.
    public func checkRequestID(_ requestID: UInt32) throws(ProtocolError) {
        switch (requestIDRule, requestID) {
        case (.nonZero, 0):
            throw ProtocolError(.malformedFrame, "\(name) needs a non-zero request id")
        case (.zero, 1...):
            throw ProtocolError(.malformedFrame, "\(name) must carry request id 0, not \(requestID)")
        default:
            return
        }
    }
}
