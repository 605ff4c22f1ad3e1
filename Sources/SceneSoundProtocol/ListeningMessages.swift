// What the listener hears the whole mix through: the headphones' equalization, the HRTF set.

/// A request naming a file the server reads: one long string, an absolute path.
protocol ServerFileRequest: WirePayload {
    var path: String { get }
    init(path: String)
    /// Whether an empty path (none) is accepted.
    static var acceptsNone: Bool { get }
    /// What is accepted, for the error naming a path that is not.
    static var acceptedPaths: String { get }
}

extension ServerFileRequest {
    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        self.init(path: try reader.readLongString())
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeLongString(path)
    }

    func validatePath() throws(ProtocolError) {
        try Check.longString(path, "path")
        guard path.hasPrefix("/") || (Self.acceptsNone && path.isEmpty) else {
            throw ProtocolError(.invalidArgument, "path '\(path)' is not absolute (accepted: \(Self.acceptedPaths))")
        }
    }
}

/// `HEADPHONE_EQ_USE` (request → `OK`): equalize the listener's headphones from now on with the
/// AutoEQ `ParametricEQ.txt` at `path` (absolute, read by the server), or with none (empty).
public struct HeadphoneEQUse: ServerFileRequest {
    public var path: String
    static let acceptsNone = true
    static let acceptedPaths = "an absolute path, or empty for none"

    public init(path: String) {
        self.path = path
    }

    public func validate() throws(ProtocolError) { try validatePath() }
}

/// `HRTF_USE` (request → `OK`, once the set is loaded and the switch queued): render with the
/// AES69 SOFA file at `path` (absolute, read by the server) from now on, crossfaded in.
public struct HRTFUse: ServerFileRequest {
    public var path: String
    static let acceptsNone = false
    static let acceptedPaths = "the absolute path of a SOFA file"

    public init(path: String) {
        self.path = path
    }

    public func validate() throws(ProtocolError) { try validatePath() }
}

/// The listener's spatial choice for the output device playing now (Apple's Off / Fixed / Head
/// Tracked), remembered for that device.
public enum DeviceSpatial: UInt8, NamedChoice {
    case off = 0
    case fixed = 1
    case headTracked = 2

    /// `off`, `fixed`, `head-tracked`: as the CLI and the status document name them.
    public var name: String {
        switch self {
        case .off: "off"
        case .fixed: "fixed"
        case .headTracked: "head-tracked"
        }
    }
}

/// The listener's rendering choice for the output device playing now: from the sink (`auto`),
/// or binaural (`headphones`) or panned over its speakers (`speakers`) whatever the sink says.
public enum DeviceRender: UInt8, NamedChoice {
    case auto = 0
    case headphones = 1
    case speakers = 2

    /// `auto`, `headphones`, `speakers`: as the CLI, `--render` and the status document name them.
    public var name: String {
        switch self {
        case .auto: "auto"
        case .headphones: "headphones"
        case .speakers: "speakers"
        }
    }
}

/// `RENDER_USE` (request → `OK`): how the output device playing now is rendered, from now on and
/// whenever that device plays again (over the daemon's `--render`).
public struct RenderUse: WirePayload {
    public var render: DeviceRender

    public init(render: DeviceRender) {
        self.render = render
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        render = try reader.readEnum(DeviceRender.self, field: "render", accepted: "0 auto, 1 headphones, 2 speakers")
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU8(render.rawValue)
    }

    public func validate() throws(ProtocolError) {}
}

/// `SPATIAL_USE` (request → `OK`): the spatial mode of the output device playing now, from now
/// on and whenever that device plays again.
public struct SpatialUse: WirePayload {
    public var spatial: DeviceSpatial

    public init(spatial: DeviceSpatial) {
        self.spatial = spatial
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        spatial = try reader.readEnum(DeviceSpatial.self, field: "spatial", accepted: "0 off, 1 fixed, 2 head-tracked")
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU8(spatial.rawValue)
    }

    public func validate() throws(ProtocolError) {}
}

/// `OUTPUT_DEVICE_CHANGED` (event, to a client that sent `OUTPUT_DEVICE_WATCH`): the output
/// device or the rendering chosen for it changed. `json` is an object with the status
/// document's `output_device` (absent when none is known) and `rendering` (SPEC.md §6.9).
public struct OutputDeviceChanged: JSONDocumentPayload {
    public var json: String

    public init(json: String) { self.json = json }
}
