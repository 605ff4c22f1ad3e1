// What the listener hears the whole mix through: the headphones' equalization, the HRTF set.

/// `HEADPHONE_EQ_USE` (request → `OK`): equalize the listener's headphones from now on with the
/// AutoEQ `ParametricEQ.txt` at `path` (absolute, read by the server), or with none (empty).
public struct HeadphoneEQUse: WirePayload {
    public var path: String

    public init(path: String) {
        self.path = path
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        path = try reader.readLongString()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeLongString(path)
    }

    public func validate() throws(ProtocolError) {
        try Check.longString(path, "path")
        guard path.isEmpty || path.hasPrefix("/") else {
            throw ProtocolError(.invalidArgument, "path '\(path)' is not absolute (accepted: an absolute path, or empty for none)")
        }
    }
}

/// `HRTF_USE` (request → `OK`, once the set is loaded and the switch queued): render with the
/// AES69 SOFA file at `path` (absolute, read by the server) from now on, crossfaded in.
public struct HRTFUse: WirePayload {
    public var path: String

    public init(path: String) {
        self.path = path
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        path = try reader.readLongString()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeLongString(path)
    }

    public func validate() throws(ProtocolError) {
        try Check.longString(path, "path")
        guard path.hasPrefix("/") else {
            throw ProtocolError(.invalidArgument, "path '\(path)' is not absolute (accepted: the absolute path of a SOFA file)")
        }
    }
}
