import ArgumentParser
import Foundation
import SceneSoundClient
import SceneSoundProtocol

struct SceneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scene",
        abstract: "Place, bind, unbind and list scenes (where sounds tagged with a scene id play).",
        subcommands: [ScenePlaceCommand.self, SceneBindCommand.self, SceneUnbindCommand.self, SceneListCommand.self])
}

struct ScenePlaceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "place",
        abstract: "Put a scene at a fixed direction and distance (replaces any window binding).",
        discussion: "Azimuth is counter-clockwise from straight ahead (+90 = left), elevation up (SOFA convention).")

    @Argument(help: ArgumentHelp("The scene id.", valueName: "ID"))
    var sceneID: String

    @Option(name: .customLong("azimuth"), parsing: .unconditional, help: ArgumentHelp("Degrees, -360 to 360.", valueName: "DEG"))
    var azimuthDegrees: Float

    @Option(name: .customLong("elevation"), parsing: .unconditional, help: ArgumentHelp("Degrees, -90 to 90.", valueName: "DEG"))
    var elevationDegrees: Float = 0

    @Option(name: .customLong("distance"), parsing: .unconditional, help: ArgumentHelp("Metres, 0.01 to 1000.", valueName: "M"))
    var distanceMetres: Float = 1

    @OptionGroup var server: ServerOptions

    func validate() throws {
        try validateSceneID(sceneID, option: "scene id")
        try check(azimuthDegrees, in: ProtocolLimits.azimuthDegreesRange, "--azimuth", unit: "degrees")
        try check(elevationDegrees, in: ProtocolLimits.elevationDegreesRange, "--elevation", unit: "degrees")
        try check(distanceMetres, in: ProtocolLimits.distanceMetresRange, "--distance", unit: "metres")
    }

    private func check(_ value: Float, in range: ClosedRange<Float>, _ option: String, unit: String) throws {
        guard value.isFinite, range.contains(value) else {
            throw ValidationError("\(option) \(value) is out of range (accepted: \(range.lowerBound) to \(range.upperBound) \(unit))")
        }
    }

    func run() throws {
        let position = ScenePosition(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees, distanceMetres: distanceMetres)
        try server.exchange { connection throws(ClientError) in try connection.placeScene(sceneID, at: position) }
    }
}

struct SceneBindCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bind",
        abstract: "Anchor a scene to an X11 window; its sounds then follow the window.")

    @Argument(help: ArgumentHelp("The scene id.", valueName: "ID"))
    var sceneID: String

    @Option(name: .customLong("window"), help: ArgumentHelp("The window: an X11 id (0x… or decimal), a native Wayland window (wayland:ID), or the active one.", valueName: "XID|wayland:ID|active"))
    var window: WindowSelection

    @OptionGroup var server: ServerOptions

    func validate() throws {
        try validateSceneID(sceneID, option: "scene id")
    }

    func run() throws {
        let windowID = try window.resolveWindowID(server: server)
        try server.exchange { connection throws(ClientError) in try connection.bindScene(sceneID, toWindow: windowID) }
    }
}

struct SceneUnbindCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unbind",
        abstract: "Remove a scene's placement or window binding; the server frees it once nothing plays there.")

    @Argument(help: ArgumentHelp("The scene id.", valueName: "ID"))
    var sceneID: String

    @OptionGroup var server: ServerOptions

    func validate() throws {
        try validateSceneID(sceneID, option: "scene id")
    }

    func run() throws {
        try server.exchange { connection throws(ClientError) in try connection.unbindScene(sceneID) }
    }
}

struct SceneListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the scenes the server knows, with where each is now.")

    @Flag(help: "Print one JSON array.")
    var json = false

    @OptionGroup var server: ServerOptions

    func run() throws {
        let connection = try server.connect()
        defer { connection.close() }
        let scenes = try withClientErrors { () throws(ClientError) in try connection.listScenes() }
        if json {
            print(Self.json(scenes))
            return
        }
        // The windows' titles and applications come from the status.
        let windowNames = Dictionary(try connection.statusDocument().scenes.compactMap { scene in
            scene.windowName.map { (scene.id, $0) }
        }, uniquingKeysWith: { first, _ in first })
        print(Self.table(scenes, windowNames: windowNames))
    }

    static func anchorName(_ anchor: SceneAnchor) -> String {
        switch anchor {
        case .none: "none"
        case .window: "window"
        case .position: "position"
        }
    }

    static func json(_ scenes: [SceneListEntry]) -> String {
        let objects: [[String: Any]] = scenes.map { scene in
            [
                "id": scene.sceneID,
                "anchor": anchorName(scene.anchor),
                "window": scene.anchor == .window ? "0x" + String(scene.windowID, radix: 16) : NSNull(),
                "azimuth_degrees": Double(scene.position.azimuthDegrees),
                "elevation_degrees": Double(scene.position.elevationDegrees),
                "distance_metres": Double(scene.position.distanceMetres),
            ]
        }
        let data = try! JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    static func table(_ scenes: [SceneListEntry], windowNames: [String: String]) -> String {
        guard !scenes.isEmpty else { return "no scenes" }
        let rows = scenes.map { scene in
            [scene.sceneID,
             scene.anchor == .window ? "window 0x" + String(scene.windowID, radix: 16) : anchorName(scene.anchor),
             windowNames[scene.sceneID] ?? "",
             String(format: "%.1f°", scene.position.azimuthDegrees),
             String(format: "%.1f°", scene.position.elevationDegrees),
             String(format: "%.2f m", scene.position.distanceMetres)]
        }
        return TextTable(header: ["SCENE", "ANCHOR", "WINDOW", "AZIMUTH", "ELEVATION", "DISTANCE"], rows: rows).rendered
    }
}

/// Left-aligned columns, two spaces apart, each line after `indent`.
struct TextTable {
    var header: [String]?
    let rows: [[String]]
    var indent = ""

    var rendered: String {
        let all = (header.map { [$0] } ?? []) + rows
        guard let columns = all.first?.count else { return "" }
        let widths = (0..<columns).map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            let line = row.enumerated().map { column, cell in
                cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
            return indent + String(line.reversed().drop(while: { $0 == " " }).reversed())
        }.joined(separator: "\n")
    }
}
