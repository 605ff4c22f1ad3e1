import SceneSoundProtocol
import Testing

/// The files in protocol/vectors/ are what the encoder produces, and decode to the catalog.
@Suite struct GoldenVectorTests {
    @Test func filesOnDiskMatchTheEncoder() throws {
        for file in VectorFiles.expectedFiles {
            let onDisk = try VectorFiles.read(file.name)
            #expect(onDisk == file.bytes, "\(file.name) differs from the catalog; rerun with SCENESOUND_WRITE_VECTORS=1")
        }
        let catalogued = Set(VectorFiles.expectedFiles.map(\.name).filter { $0.hasSuffix(".bin") })
        #expect(try VectorFiles.binaryFilesOnDisk() == catalogued, "stray or missing .bin files")
    }

    @Test func everyMessageTypeHasAVector() {
        let covered = Set(validVectors.map(\.message.type))
        #expect(covered == Set(MessageType.allCases))
    }

    @Test(arguments: validVectors)
    func vectorDecodesAndReencodesExactly(_ vector: ValidVector) throws {
        let bytes = try VectorFiles.read(vector.file)
        var decoder = FrameDecoder()
        decoder.append(contentsOf: bytes)
        let frame = try #require(try decoder.nextFrame())
        #expect(decoder.bufferedByteCount == 0)
        #expect(frame.requestID == vector.requestID)
        let message = try Message.decode(frame: frame, version: vector.version)
        #expect(message == vector.message)
        #expect(FrameEncoder.frame(message, requestID: frame.requestID) == bytes)
    }

    @Test(arguments: invalidVectors)
    func invalidVectorFailsWithItsCode(_ vector: InvalidVector) throws {
        let bytes = try VectorFiles.read(vector.file)
        #expect(firstError(decoding: bytes, version: vector.version)?.code == vector.expected)
    }
}

/// Runs bytes through the whole receive path — frame decoder, end of stream, message decoder —
/// and returns the first error, or nil if everything decoded.
func firstError(decoding bytes: [UInt8], maxFrameBytes: Int = ProtocolLimits.defaultMaxFrameBytes,
                version: UInt16 = 1) -> ProtocolError? {
    var decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
    decoder.append(contentsOf: bytes)
    do {
        while let frame = try decoder.nextFrame() { _ = try Message.decode(frame: frame, version: version) }
        try decoder.finish()
        return nil
    } catch {
        return error
    }
}
