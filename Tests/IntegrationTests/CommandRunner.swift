import Foundation

/// Runs the project's built binaries (they sit beside the test bundle) and captures what
/// they print.
struct CommandResult {
    var status: Int32
    var standardOutput: String
    var standardError: String
}

enum Binaries {
    static var directory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    static func run(_ name: String, _ arguments: [String], environment: [String: String] = [:],
                    standardInput: Data? = nil) throws -> CommandResult {
        let process = Process()
        process.executableURL = directory.appendingPathComponent(name)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let standardInput { input.fileHandleForWriting.write(standardInput) }
        try input.fileHandleForWriting.close()
        // Read both pipes to the end before waiting, so a chatty child never blocks.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus,
                             standardOutput: String(decoding: outData, as: UTF8.self),
                             standardError: String(decoding: errData, as: UTF8.self))
    }
}

func temporaryDirectory(_ label: String) -> String {
    let path = NSTemporaryDirectory() + "scenesound-\(label)-\(UUID().uuidString)"
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
