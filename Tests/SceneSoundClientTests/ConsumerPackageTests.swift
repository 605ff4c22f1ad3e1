import Foundation
import SceneSoundClient
import Testing

extension IdiomTests {
    /// A program in a package of its own, depending on this package by path and on its
    /// `SceneSoundClient` product as a user's would, plays through each idiom against a real
    /// daemon; the daemon's mix shows each one. The package is written to a temporary
    /// directory; its build products stay under .build/client-consumer, so later runs rebuild
    /// only what changed.
    @Test(.timeLimit(.minutes(15))) func aSeparatePackagePlaysThroughEachIdiom() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let package = NSTemporaryDirectory() + "scenesound-consumer-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: package) }
        try FileManager.default.createDirectory(atPath: package + "/Sources/idiom-consumer", withIntermediateDirectories: true)
        let manifest = """
            // swift-tools-version: 6.1
            import PackageDescription

            let package = Package(
                name: "IdiomConsumer",
                dependencies: [.package(name: "SceneSound", path: "\(repository.path)")],
                targets: [.executableTarget(name: "idiom-consumer", dependencies: [.product(name: "SceneSoundClient", package: "SceneSound")])]
            )
            """
        try manifest.write(toFile: package + "/Package.swift", atomically: true, encoding: .utf8)
        let program = repository.appendingPathComponent("Tests/SceneSoundClientTests/Consumer/main.swift")
        try FileManager.default.copyItem(atPath: program.path, toPath: package + "/Sources/idiom-consumer/main.swift")

        let scratch = repository.appendingPathComponent(".build/client-consumer").path
        // `make test` passes SWIFT as the Makefile has it, a bare name by default: looked up in PATH.
        let swift = ProcessInfo.processInfo.environment["SWIFT"].flatMap { $0.isEmpty ? nil : $0 } ?? "/opt/swift/usr/bin/swift"
        let buildArguments = ["build", "--package-path", package, "--scratch-path", scratch]
        let build = swift.contains("/") ? try runProgram(swift, buildArguments)
                                        : try runProgram("/usr/bin/env", [swift] + buildArguments)
        try #require(build.status == 0, "the consumer package did not build:\n\(build.output)")

        let daemon = try RealDaemon()
        let tone = try writeTone(directory: daemon.directory, name: "tone.wav", seconds: 0.3, rateHz: 44100)
        let run = try runProgram(scratch + "/debug/idiom-consumer", [tone.path],
                                 environment: ["SCENESOUND_SOCKET": daemon.socketPath])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("system sound played") && run.output.contains("alert sound played")
                && run.output.contains("player played 0.3") && run.output.contains("source node played"), "\(run.output)")

        let segments = audibleSegments(try daemon.stopAndReadMix())
        // The bell, then three 0.3 s sounds: the alert, the player and the source node.
        #expect(segments.count == 4, "\(segments)")
        guard segments.count == 4 else { return }
        #expect(segments[0].count > 48000 / 20, "the bell lasted \(segments[0].count) frames")
        for sound in segments[1...] { #expect(abs(sound.count - 14400) < 960, "a 0.3 s sound lasted \(sound.count) frames") }
    }
}

/// Runs a program to its end; its standard output and error together.
func runProgram(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
