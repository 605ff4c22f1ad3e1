import ArgumentParser
import Foundation
import SceneSoundProtocol

/// The `scenesound` command line. Exit codes (docs/ARCHITECTURE.md): 0 success, 1 runtime error,
/// 2 usage error; errors are one line on stderr that says what to do.
struct SceneSoundCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenesound",
        abstract: "Play, place and render spatial sound on the SceneSound server.",
        version: SceneSoundRelease.version,
        subcommands: [PlayCommand.self, SystemSoundCommand.self, AlertSoundCommand.self, SceneCommand.self, HeadCommand.self, HRTFCommand.self, EQCommand.self, SpatialCommand.self, DeviceCommand.self, StatusCommand.self, AppsCommand.self, ViewCommand.self, RenderCommand.self, CuesCommand.self, BenchCommand.self])
}

/// A failure the user can act on; printed as one line, exit status 1.
struct RuntimeError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("scenesound: \(message)\n".utf8))
    exit(status)
}

/// Help and usage errors can surface from parsing or from running (a subcommand's --help);
/// they are told apart from runtime failures by ArgumentParser's own exit code.
func exitForParserError(_ error: Error) -> Never {
    let code = SceneSoundCommand.exitCode(for: error)
    if code == .success {  // --help, --version
        print(SceneSoundCommand.fullMessage(for: error))
        exit(0)
    }
    let message = SceneSoundCommand.message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid usage"
    fail("\(message.replacingOccurrences(of: "Error: ", with: "")) (see 'scenesound --help')", status: 2)
}

/// The `scenesound` program: parses `arguments` (without the program's name), runs the verb and
/// exits with its status. A library function rather than top-level code so that one binary can
/// carry the CLI and the daemon (see `ProgramName` in scenesoundd).
public enum SceneSoundCLI {
    public static func run(arguments: [String]) -> Never {
        var command: ParsableCommand
        do {
            command = try SceneSoundCommand.parseAsRoot(arguments)
        } catch {
            exitForParserError(error)
        }
        do {
            try command.run()
        } catch {
            // Anything that is not help or a usage error is a runtime failure: exit 1.
            guard SceneSoundCommand.exitCode(for: error) == .failure else { exitForParserError(error) }
            fail(String(describing: error), status: 1)
        }
        exit(0)
    }
}
