import ArgumentParser
import Foundation
import SceneSoundClient

struct EQCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eq",
        abstract: "Equalize the headphones (AutoEQ's ParametricEQ.txt), live.",
        subcommands: [EQUseCommand.self])
}

struct EQUseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "use",
        abstract: "Switch the running server's headphone EQ to FILE (a ParametricEQ.txt), or to none.",
        discussion: """
            The file is AutoEQ's ParametricEQ.txt: a 'Preamp: G dB' line and lines like \
            'Filter 1: ON PK Fc 2500 Hz Gain -3.0 dB Q 1.41' (PK, LSC, HSC). The new EQ fades in \
            over 10 ms while everything keeps playing; a malformed file is refused, naming its \
            line, and the EQ in use stays. 'scenesound status' shows the EQ in use.
            """)

    @Argument(help: ArgumentHelp("A ParametricEQ.txt, or none.", valueName: "FILE|none"))
    var file: String

    @OptionGroup var server: ServerOptions

    func run() throws {
        var path: String?
        if file != "none" {
            // The server reads the file: it gets an absolute path.
            let absolute = URL(fileURLWithPath: file).standardizedFileURL.path
            guard FileManager.default.isReadableFile(atPath: absolute) else {
                throw RuntimeError("\(file): no such readable file (give a ParametricEQ.txt, or none)")
            }
            path = absolute
        }
        try server.exchange { connection throws(ClientError) in try connection.useHeadphoneEQ(path: path) }
    }
}
