import Foundation
import Synchronization

/// A second, different head for the tests that switch HRTF sets: a rigid sphere written as an
/// AES69 SOFA file by `scripts/testdata/make-sphere-sofa.py` (Debian's python3-netcdf4, in
/// `scripts/deps test`), once per process and radius.
public enum SphereHeadSOFA {
    /// Larger than KEMAR's head, so that its cues differ clearly from KEMAR's (ITD at 60°:
    /// about 610 µs against 530).
    public static let defaultRadiusMetres = 0.11
    public static let measurementDistanceMetres = 1.5

    private static let made = Mutex<[Double: String]>([:])

    /// The file's path (made on first use).
    public static func path(radiusMetres: Double = defaultRadiusMetres) throws -> String {
        try made.withLock { made in
            if let path = made[radiusMetres] { return path }
            let directory = NSTemporaryDirectory() + "scenesound-sphere-\(getpid())"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let path = directory + "/sphere-\(Int((radiusMetres * 1000).rounded()))mm.sofa"
            let script = PrivateSoundServer.repositoryRoot().appendingPathComponent("scripts/testdata/make-sphere-sofa.py").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = [script, path, "--radius-metres", "\(radiusMetres)",
                                 "--distance-metres", "\(measurementDistanceMetres)"]
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw SphereHeadSOFAFailure(description: "make-sphere-sofa.py failed (scripts/deps test installs python3-netcdf4): \(message)")
            }
            made[radiusMetres] = path
            return path
        }
    }
}

struct SphereHeadSOFAFailure: Error, CustomStringConvertible { let description: String }
