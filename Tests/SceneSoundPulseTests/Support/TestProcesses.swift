import Foundation

/// Runs a short-lived helper to completion and returns its stdout; throws with its stderr on failure.
@discardableResult
func runHelper(_ executable: URL, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    // Read before waiting: a helper that fills the pipe would otherwise never exit.
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    let errors = stderr.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw HelperFailure(
            command: ([executable.path] + arguments).joined(separator: " "),
            status: process.terminationStatus,
            stderr: String(decoding: errors, as: UTF8.self))
    }
    return String(decoding: output, as: UTF8.self)
}

struct HelperFailure: Error, CustomStringConvertible {
    let command: String
    let status: Int32
    let stderr: String
    var description: String { "\(command) exited with \(status): \(stderr)" }
}

/// The repository root: the nearest directory above this file holding the test scripts.
func repositoryRoot(from file: String = #filePath) -> URL {
    var directory = URL(fileURLWithPath: file).deletingLastPathComponent()
    while directory.path != "/" {
        if FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("scripts/testenv/pulse-start").path) {
            return directory
        }
        directory = directory.deletingLastPathComponent()
    }
    fatalError("scripts/testenv/pulse-start not found above \(file)")
}

/// A fresh private directory, short enough for a Unix socket path inside it.
func makeShortTemporaryDirectory(prefix: String) throws -> URL {
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    guard let path = mkdtemp(&template) else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "mkdtemp failed"])
    }
    return URL(fileURLWithPath: String(cString: path), isDirectory: true)
}
