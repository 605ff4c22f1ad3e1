// libFuzzer target for the wire protocol's decoders (`make fuzz`). Built with
// `swiftc -sanitize=fuzzer,address` together with the SceneSoundProtocol sources, so the
// framing and every message decoder run under the address sanitizer.
//
// What it checks besides "no crash": a frame that decodes re-encodes to the same bytes, and
// the frame decoder never buffers more than its maximum frame size.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProtocolDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    var decoder = FrameDecoder(maxFrameBytes: 4096)
    // Feed in two pieces split at a data-dependent point, as a socket would.
    let split = size > 0 ? Int(bytes[0]) % (size + 1) : 0
    decoder.append(contentsOf: bytes[0..<split])
    decoder.append(contentsOf: bytes[split..<size])
    while true {
        let frame: Frame?
        do { frame = try decoder.nextFrame() } catch { break }
        guard let frame else { break }
        guard let message = try? Message.decode(frame: frame) else { continue }
        var encoded: [UInt8] = []
        FrameEncoder.append(message, requestID: frame.requestID, to: &encoded)
        let original = FrameEncoder.frame(message, requestID: frame.requestID)
        precondition(encoded == original, "encoding is not deterministic")
        // Decoding what we encoded gives the same message back.
        var again = FrameDecoder(maxFrameBytes: 1 << 20)
        again.append(contentsOf: encoded)
        if let reframed = try? again.nextFrame() {
            precondition((try? Message.decode(frame: reframed)) == message, "round trip changed \(message)")
        } else {
            preconditionFailure("re-encoded frame does not decode")
        }
    }
    precondition(decoder.bufferedByteCount <= 4096 + FrameHeader.byteCount, "decoder buffered past its limit")
    return 0
}
