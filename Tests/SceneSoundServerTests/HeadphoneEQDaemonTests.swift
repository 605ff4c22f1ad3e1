import Foundation
import SceneSoundProtocol
import SceneSoundTestSupport
import Testing

/// `--headphone-eq` and `scenesound eq use` against the real daemon, as a user runs them.
@Suite(.serialized) struct HeadphoneEQDaemonTests {
    static let good = "Preamp: -6.2 dB\nFilter 1: ON PK Fc 1000 Hz Gain 6.0 dB Q 1.41\nFilter 2: OFF HSC Fc 9000 Hz Gain 2.0 dB Q 0.70\n"
    static let bad = "Preamp: -6.2 dB\nFilter 1: ON PEAK Fc 1000 Hz Gain 6.0 dB Q 1.41\n"

    static func status(_ daemon: Daemon) throws -> StatusDocument {
        let run = try CommandLineTests.runCLI(["status", "--json", "--socket", daemon.socketPath])
        guard run.status == 0 else { throw TestFailure("status: \(run.error)") }
        return try StatusSchema.decode(run.output)
    }

    @Test func startsWithTheFileSwitchesLiveAndKeepsItWhenANewOneIsMalformed() throws {
        let directory = NSTemporaryDirectory() + "scenesound-eq-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let good = directory + "/good ParametricEQ.txt", bad = directory + "/bad.txt"
        try Self.good.write(toFile: good, atomically: true, encoding: .utf8)
        try Self.bad.write(toFile: bad, atomically: true, encoding: .utf8)

        let daemon = try Daemon(output: "null", extraArguments: ["--headphone-eq", good])
        let inUse = StatusDocument.HeadphoneEQ(path: good, preampDecibels: -6.2, filters: 1)
        #expect(try Self.status(daemon).headphoneEQ == inUse)

        let refused = try CommandLineTests.runCLI(["eq", "use", bad, "--socket", daemon.socketPath])
        #expect(refused.status == 1)
        #expect(refused.error == "scenesound: the server refused: \(bad): line 2: filter type 'PEAK' is not supported (accepted: PK, LSC, HSC) (invalid_argument)\n",
                "\(refused.error)")
        #expect(try Self.status(daemon).headphoneEQ == inUse)

        let none = try CommandLineTests.runCLI(["eq", "use", "none", "--socket", daemon.socketPath])
        #expect(none.status == 0, "\(none.error)")
        #expect(try Self.status(daemon).headphoneEQ == nil)
        let summary = try CommandLineTests.runCLI(["status", "--socket", daemon.socketPath])
        #expect(summary.output.contains("\neq       none\n"), "\(summary.output)")

        // A relative path, as typed in the file's directory.
        let relative = try CommandLineTests.runCLI(["eq", "use", "good ParametricEQ.txt", "--socket", daemon.socketPath],
                                                   directory: directory)
        #expect(relative.status == 0, "\(relative.error)")
        #expect(try Self.status(daemon).headphoneEQ == inUse)
    }

    @Test func theDaemonRefusesAMalformedFileAtStartNamingTheLine() throws {
        let path = NSTemporaryDirectory() + "scenesound-eq-\(UUID().uuidString.prefix(8)).txt"
        try Self.bad.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let process = Process()
        process.executableURL = Daemon.binaries.appendingPathComponent("scenesoundd")
        process.arguments = ["--socket", NSTemporaryDirectory() + "unused-\(UUID().uuidString.prefix(8))/socket",
                             "--output", "null", "--display", "none", "--opentrack", "off", "--headphone-eq", path]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let error = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 2)
        let lines = error.split(separator: "\n").filter { !$0.contains(" info ") }
        #expect(lines == ["scenesoundd: --headphone-eq \(path): line 2: filter type 'PEAK' is not supported (accepted: PK, LSC, HSC)"],
                "\(error)")
    }
}
