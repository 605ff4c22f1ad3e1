import Foundation
import SceneSoundProtocol

/// The status document as a few readable lines and tables: every value shown is a field of
/// the shared `StatusDocument`, so the server and this summary cannot drift apart.
struct StatusSummary {
    let document: StatusDocument

    init(_ document: StatusDocument) { self.document = document }

    var rendered: String {
        var lines: [String] = []
        func section(_ title: String, _ parts: [String?]) {
            lines.append(title.padding(toLength: 9, withPad: " ", startingAt: 0) + parts.compactMap { $0 }.joined(separator: ", "))
        }
        let server = document.server, output = document.output, hrtf = document.hrtf, head = document.head
        section("server", [server.software, "pid \(server.pid)", "up \(duration(server.uptimeSeconds))",
                           "\(document.clients.count) client\(document.clients.count == 1 ? "" : "s")"])
        section("output", [
            output.target.map { "\(output.kind) → \($0)" } ?? output.kind,
            "\(Int(output.rateHz)) Hz", "block \(output.blockFrames)",
            output.graphQuantumFrames.flatMap { $0 == output.blockFrames ? nil : "graph quantum raised to \($0)" },
            output.latencySeconds.map { String(format: "latency %.1f ms", $0 * 1000) },
            output.connected ? "connected" : "DISCONNECTED",
            "\(output.underruns) underruns", "\(output.reconnects) reconnects",
            output.renderThreadScheduling.map { "render thread \($0)" },
            output.lastError.map { "last error: \($0)" },
        ])
        section("hrtf", [hrtf.path, "\(hrtf.measurements) measurements"]
                + (hrtf.measurementDistanceMetres.map { [String(format: "at %.2f m", $0)] } ?? []) + ["\(hrtf.filterTaps) taps"])
        section("eq", document.headphoneEQ.map { eq in
            [eq.path, String(format: "preamp %.1f dB", eq.preampDecibels), "\(eq.filters) filter\(eq.filters == 1 ? "" : "s")"]
        } ?? ["none"])
        if let rendering = document.rendering {
            section("device", [
                document.outputDevice.map { device in
                    device.description.map { "\(device.key) (\($0))" } ?? device.key
                } ?? "unknown",
                "\(rendering.method)\(rendering.speakerLayout.map { " \($0)" } ?? "") \(rendering.spatial)",
                "because \(rendering.reason)",
            ])
        }
        section("head", [
            String(format: "yaw %.1f°", head.yawDegrees), String(format: "pitch %.1f°", head.pitchDegrees),
            String(format: "roll %.1f°", head.rollDegrees),
            "position (" + head.positionMetres.map { String(format: "%.2f", $0) }.joined(separator: ", ") + ") m",
            head.poseAgeSeconds.map { String(format: "pose %.1f s old", $0) } ?? "no pose received",
            head.tracker.map { String(format: "tracker %@ %.0f/s", $0, head.trackerPosesPerSecond ?? 0) },
            head.tracking.flatMap { $0 == "full" ? nil : "tracking \($0)" },
            head.trackerChoice.flatMap { $0 == "any" ? nil : "following \($0) only" },
            head.predictionSeconds.map { String(format: "prediction %.1f ms", $0 * 1000) },
        ])
        section("render", [String(format: "load %.1f %%", document.render.load * 100),
                           String(format: "block deadline %.2f ms", document.render.blockDeadlineSeconds * 1000),
                           "\(document.render.hrtfVoices) HRTF + \(document.render.busVoices) bus voices"])

        lines.append("clients  \(document.clients.count)")
        if !document.clients.isEmpty {
            lines.append(indented(document.clients.map { client in
                [client.displayName, client.pid.map { "pid \($0)" } ?? "pid ?", "\(client.streams) stream\(client.streams == 1 ? "" : "s")"]
            }))
        }
        var scenes = "scenes   \(document.scenes.count)"
        if let slots = document.sceneSlots {
            scenes += " (of \(slots.capacity) slots; \(slots.freed) freed since start"
                + (slots.refused > 0 ? ", \(slots.refused) refused: every slot was in use)" : ")")
        }
        lines.append(scenes)
        if !document.scenes.isEmpty { lines.append(indented(document.scenes.map(sceneRow))) }
        lines.append("streams  \(document.streams.count)")
        if !document.streams.isEmpty { lines.append(indented(document.streams.map(streamRow))) }
        if let plays = document.plays, !plays.isEmpty {
            lines.append("sounds   \(plays.count) (system and alert sounds from the server's cache)")
            lines.append(indented(plays.map { play in
                ["#\(play.id)", play.kind, "scene " + (document.scenes.first { $0.id == play.scene }?.label ?? play.scene),
                 play.levelDecibels <= -120 ? "silent" : String(format: "level %.1f dB", play.levelDecibels)]
            }))
        }
        return lines.joined(separator: "\n")
    }

    private func sceneRow(_ scene: StatusDocument.Scene) -> [String] {
        [scene.label, scene.kind, scene.window ?? "", scene.state ?? "",
         String(format: "az %.1f°", scene.azimuthDegrees), String(format: "el %.1f°", scene.elevationDegrees),
         String(format: "%.2f m", scene.distanceMetres)]
    }

    private func streamRow(_ stream: StatusDocument.Stream) -> [String] {
        let client = document.clients.first { $0.id == stream.clientID }?.displayName ?? "client \(stream.clientID)"
        let scene = stream.scene.isEmpty ? "–" : document.scenes.first { $0.id == stream.scene }?.label ?? stream.scene
        return ["#\(stream.id)", client, stream.kind, "scene " + scene, stream.state, stream.spatial,
                String(format: "%.1f dB", stream.volumeDecibels),
                stream.levelDecibels <= -120 ? "silent" : String(format: "level %.1f dB", stream.levelDecibels),
                String(format: "buffered %.3f s", stream.bufferedSeconds)]
    }

    private func indented(_ rows: [[String]]) -> String {
        TextTable(header: nil, rows: rows, indent: "  ").rendered
    }

    private func duration(_ seconds: Double) -> String {
        seconds < 60 ? String(format: "%.1f s", seconds)
            : seconds < 3600 ? String(format: "%d min %d s", Int(seconds) / 60, Int(seconds) % 60)
            : String(format: "%d h %d min", Int(seconds) / 3600, Int(seconds) % 3600 / 60)
    }
}
