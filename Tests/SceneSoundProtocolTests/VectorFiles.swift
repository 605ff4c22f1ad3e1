import Foundation
import SceneSoundProtocol

/// The golden vectors on disk: where they live, and the manifest the catalog produces.
enum VectorFiles {
    /// `protocol/vectors/` of this checkout, found from this source file's path.
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // SceneSoundProtocolTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // repository root
        .appendingPathComponent("protocol/vectors", isDirectory: true)

    static let manifestName = "vectors.json"

    /// Set to 1 to rewrite the vectors from the catalog instead of comparing against them.
    static var regenerating: Bool { ProcessInfo.processInfo.environment["SCENESOUND_WRITE_VECTORS"] == "1" }

    /// Reads a vector file; when regenerating, every file is rewritten first (once per process,
    /// before any test reads, since tests run in parallel).
    static func read(_ name: String) throws -> [UInt8] {
        try regeneration.get()
        return [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    private static let regeneration: Result<Void, any Error> = Result {
        guard regenerating else { return }
        for file in expectedFiles { try write(file.bytes, to: file.name) }
    }

    private static func write(_ bytes: [UInt8], to name: String) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(bytes).write(to: directory.appendingPathComponent(name))
    }

    static func binaryFilesOnDisk() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".bin") })
    }

    /// Every file the catalog defines, with its contents.
    static var expectedFiles: [(name: String, bytes: [UInt8])] {
        validVectors.map { ($0.file, $0.frameBytes) }
            + invalidVectors.map { ($0.file, $0.bytes) }
            + [(manifestName, Array((manifest.rendered() + "\n").utf8))]
    }

    static var manifest: JSONText {
        .object([
            ("protocol_version", .uint(ProtocolVersion.current)),
            ("frame_header_bytes", .uint(FrameHeader.byteCount)),
            ("default_max_frame_bytes", .uint(ProtocolLimits.defaultMaxFrameBytes)),
            ("valid", .array(validVectors.map { vector in
                .object([
                    ("file", .string(vector.file)),
                    ("type", .string(vector.message.type.name)),
                    ("type_code", .uint(vector.message.type.rawValue)),
                    ("request_id", .uint(vector.requestID)),
                    ("fields", .object(manifestFields(vector.message))),
                ] + (vector.version == 1 ? [] : [("protocol_version", .uint(vector.version))]))
            })),
            ("invalid", .array(invalidVectors.map { vector in
                .object([
                    ("file", .string(vector.file)),
                    ("description", .string(vector.description)),
                    ("stage", .string(vector.stage.rawValue)),
                    ("error", .string(vector.expected.name)),
                    ("error_code", .uint(vector.expected.rawValue)),
                    ("closes_connection", .bool(vector.expected.closesConnection)),
                ] + (vector.version == 1 ? [] : [("protocol_version", .uint(vector.version))]))
            })),
        ])
    }
}
