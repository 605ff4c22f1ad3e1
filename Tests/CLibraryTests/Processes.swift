import Foundation

/// Running programs from the tests: the project's binaries (beside the test bundle), the
/// compilers, make, python3.
struct ProcessResult {
    var status: Int32
    var output: String
    var errors: String
    var text: String { output + errors }
}

enum Paths {
    /// The repository: this file is Tests/CLibraryTests/Processes.swift.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    /// Where SwiftPM put scenesound and scenesoundd (the test bundle's directory).
    static let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path

    static func temporaryDirectory(_ label: String) -> String {
        let path = NSTemporaryDirectory() + "scenesound-\(label)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Starts `executable` (an absolute path, or a name looked up in PATH); `finish()` waits for it
/// and collects what it printed.
final class RunningProcess: @unchecked Sendable {
    let process = Process()
    private let out = Pipe(), err = Pipe()

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
         directory: String? = nil) throws {
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
        process.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    func finish() -> ProcessResult {
        // Read both pipes to the end before waiting, so a chatty child never blocks.
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ProcessResult(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
                             errors: String(decoding: errors, as: UTF8.self))
    }
}

func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
         directory: String? = nil) throws -> ProcessResult {
    try RunningProcess(executable, arguments, environment: environment, directory: directory).finish()
}
