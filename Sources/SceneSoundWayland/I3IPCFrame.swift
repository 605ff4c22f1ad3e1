/// i3's IPC framing, which sway speaks on `$SWAYSOCK`: the magic `i3-ipc`, the payload's length
/// and the message type as u32s in native byte order, then the payload (JSON). Replies carry
/// the request's type; events have the top bit set.
enum I3IPCFrame {
    static let magic = Array("i3-ipc".utf8)
    static let headerBytes = magic.count + 8
    /// A reply longer than this is taken for a broken stream, not a tree.
    static let maximumPayloadBytes = 64 << 20

    enum MessageType: UInt32 {
        case runCommand = 0, subscribe = 2, getOutputs = 3, getTree = 4
    }
    static let eventBit: UInt32 = 0x8000_0000

    static func encode(_ type: MessageType, payload: String = "") -> [UInt8] {
        let body = Array(payload.utf8)
        var bytes = magic
        withUnsafeBytes(of: UInt32(body.count)) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: type.rawValue) { bytes.append(contentsOf: $0) }
        return bytes + body
    }

    /// The payload length and type of a header; throws on a wrong magic or an absurd length.
    static func header(_ bytes: ArraySlice<UInt8>) throws(CompositorError) -> (length: Int, type: UInt32) {
        guard bytes.count >= headerBytes, bytes.prefix(magic.count).elementsEqual(magic) else {
            throw .disconnected("not an i3-ipc frame (bad magic)")
        }
        let start = bytes.startIndex + magic.count
        let length = Int(u32(bytes, at: start)), type = u32(bytes, at: start + 4)
        guard length <= maximumPayloadBytes else { throw .disconnected("an i3-ipc frame of \(length) bytes") }
        return (length, type)
    }

    /// Splits whole frames off the front of `buffer`: (type, payload) each; a partial frame stays.
    static func takeFrames(from buffer: inout [UInt8]) throws(CompositorError) -> [(type: UInt32, payload: [UInt8])] {
        var frames: [(UInt32, [UInt8])] = []
        var offset = 0
        while buffer.count - offset >= headerBytes {
            let (length, type) = try header(buffer[offset...])
            guard buffer.count - offset >= headerBytes + length else { break }
            frames.append((type, Array(buffer[(offset + headerBytes)..<(offset + headerBytes + length)])))
            offset += headerBytes + length
        }
        buffer.removeFirst(offset)
        return frames
    }

    private static func u32(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt32 {
        var value: UInt32 = 0
        withUnsafeMutableBytes(of: &value) { raw in
            for i in 0..<4 { raw[i] = bytes[index + i] }
        }
        return value
    }
}
