import ArgumentParser
import Foundation
import SceneSoundClient
import SceneSoundProtocol

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the server's state: output, HRTF, head pose, scenes, streams, render load.",
        discussion: "--json prints the server's status document unchanged, as one line (its schema: protocol/SPEC.md, section 6.8).")

    @Flag(help: "Print the status document as JSON.")
    var json = false

    @Option(help: ArgumentHelp("Also draw a top-down map of the listener, monitors, windows and sources.", valueName: "FILE.svg"))
    var plot: String?

    @OptionGroup var server: ServerOptions

    func run() throws {
        let text = try server.exchange { connection throws(ClientError) in try connection.status() }
        // --json prints the server's text unchanged; everything else reads it through the schema.
        let document = json && plot == nil ? nil : try StatusDocument(json: text)
        if let plot, let document {
            do {
                try MapPlot(status: document).svg.write(toFile: plot, atomically: true, encoding: .utf8)
            } catch {
                throw RuntimeError("cannot write the map to \(plot): \(error.localizedDescription)")
            }
        }
        if json {
            print(text)
        } else if let document {
            print(StatusSummary(document).rendered)
        }
    }
}
