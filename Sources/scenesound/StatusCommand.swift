import ArgumentParser
import Foundation
import SceneSoundClient

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the server's state: output, HRTF, head pose, scenes, streams, render load.",
        discussion: "--json prints the server's status document unchanged, as one line.")

    @Flag(help: "Print the status document as JSON.")
    var json = false

    @Option(help: ArgumentHelp("Also draw a top-down map of the listener, monitors, windows and sources.", valueName: "FILE.svg"))
    var plot: String?

    @OptionGroup var server: ServerOptions

    func run() throws {
        let connection = try server.connect()
        defer { connection.close() }
        let document = try withClientErrors { () throws(ClientError) in try connection.status() }
        if let plot {
            guard let object = try? JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any] else {
                throw RuntimeError("the server's status is not a JSON object; see 'scenesound status --json'")
            }
            do {
                try MapPlot(status: object).svg.write(toFile: plot, atomically: true, encoding: .utf8)
            } catch {
                throw RuntimeError("cannot write the map to \(plot): \(error.localizedDescription)")
            }
        }
        if json {
            print(document)
            return
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any] else {
            throw RuntimeError("the server's status is not a JSON object; see 'scenesound status --json'")
        }
        print(StatusSummary(object).rendered)
    }
}
