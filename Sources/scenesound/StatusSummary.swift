import Foundation

/// The status document as a few readable lines. Renders what is present and skips what is
/// not, so that older and newer servers both work.
struct StatusSummary {
    let document: [String: Any]

    init(_ document: [String: Any]) { self.document = document }

    var rendered: String {
        var lines: [String] = []
        func section(_ title: String, _ parts: [String?]) {
            let present = parts.compactMap { $0 }
            if !present.isEmpty { lines.append(title.padding(toLength: 9, withPad: " ", startingAt: 0) + present.joined(separator: ", ")) }
        }
        let server = object("server")
        section("server", [text(server, "version"), number(server, "pid").map { "pid \(integer($0))" },
                           number(server, "uptime_seconds").map { "up \(duration($0))" },
                           number(server, "clients").map { "\(integer($0)) client\(integer($0) == "1" ? "" : "s")" }])
        let output = object("output")
        section("output", [
            text(output, "kind").map { kind in text(output, "sink").map { "\(kind) → \($0)" } ?? kind },
            number(output, "rate_hz").map { "\(integer($0)) Hz" },
            number(output, "block_frames").map { "block \(integer($0))" },
            number(output, "latency_seconds").map { String(format: "latency %.1f ms", $0 * 1000) },
            bool(output, "connected").map { $0 ? "connected" : "DISCONNECTED" },
            number(output, "underruns").map { "\(integer($0)) underruns" },
            number(output, "reconnects").map { "\(integer($0)) reconnects" },
        ])
        let hrtf = object("hrtf")
        section("hrtf", [text(hrtf, "path"), number(hrtf, "measurements").map { "\(integer($0)) measurements" },
                         number(hrtf, "filter_taps").map { "\(integer($0)) taps" }])
        let head = object("head")
        section("head", [
            number(head, "yaw_degrees").map { String(format: "yaw %.1f°", $0) },
            number(head, "pitch_degrees").map { String(format: "pitch %.1f°", $0) },
            number(head, "roll_degrees").map { String(format: "roll %.1f°", $0) },
            (head?["position_metres"] as? [Any]).map { "position (" + $0.map { ($0 as? NSNumber).map { String(format: "%.2f", $0.doubleValue) } ?? "?" }.joined(separator: ", ") + ") m" },
            head.map { _ in number(head, "pose_age_seconds").map { String(format: "pose %.1f s old", $0) } ?? "no pose received" },
        ])
        let render = object("render")
        section("render", [number(render, "load").map { String(format: "load %.1f %%", $0 * 100) },
                           number(render, "block_deadline_seconds").map { String(format: "block deadline %.2f ms", $0 * 1000) }])

        if let scenes = document["scenes"] as? [[String: Any]] {
            lines.append("scenes   \(scenes.count)")
            let rows = scenes.map(sceneRow)
            if !rows.isEmpty { lines.append(indented(rows)) }
        }
        if let streams = document["streams"] as? [[String: Any]] {
            lines.append("streams  \(streams.count)")
            let rows = streams.map(streamRow)
            if !rows.isEmpty { lines.append(indented(rows)) }
        }
        return lines.isEmpty ? "the server sent an empty status" : lines.joined(separator: "\n")
    }

    private func sceneRow(_ scene: [String: Any]) -> [String] {
        var cells: [String?] = [text(scene, "id") ?? "?", text(scene, "kind"), text(scene, "window")]
        cells.append(number(scene, "azimuth_degrees").map { String(format: "az %.1f°", $0) })
        cells.append(number(scene, "elevation_degrees").map { String(format: "el %.1f°", $0) })
        cells.append(number(scene, "distance_metres").map { String(format: "%.2f m", $0) })
        return cells.map { $0 ?? "" }
    }

    private func streamRow(_ stream: [String: Any]) -> [String] {
        var cells: [String?] = [number(stream, "id").map { "#" + integer($0) } ?? "#?", text(stream, "client"), text(stream, "kind")]
        cells.append(text(stream, "scene").map { "scene " + ($0.isEmpty ? "–" : $0) })
        cells += [text(stream, "state"), text(stream, "spatial")]
        cells.append(number(stream, "volume_db").map { String(format: "%.1f dB", $0) })
        cells.append(number(stream, "buffered_seconds").map { String(format: "buffered %.3f s", $0) })
        return cells.map { $0 ?? "" }
    }

    private func indented(_ rows: [[String]]) -> String {
        TextTable(header: nil, rows: rows, indent: "  ").rendered
    }

    private func object(_ key: String) -> [String: Any]? { document[key] as? [String: Any] }

    private func text(_ object: [String: Any]?, _ key: String) -> String? {
        guard let value = object?[key] else { return nil }
        if let string = value as? String { return string }
        return nil
    }

    /// Numbers only (JSON booleans are NSNumbers too, but are not numbers here).
    private func number(_ object: [String: Any]?, _ key: String) -> Double? {
        guard let value = object?[key] as? NSNumber, !isBoolean(value) else { return nil }
        return value.doubleValue
    }

    private func bool(_ object: [String: Any]?, _ key: String) -> Bool? {
        guard let value = object?[key] as? NSNumber, isBoolean(value) else { return nil }
        return value.boolValue
    }

    /// JSONSerialization gives booleans as NSNumbers of type `c` (char).
    private func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }

    private func integer(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    private func duration(_ seconds: Double) -> String {
        seconds < 60 ? String(format: "%.1f s", seconds)
            : seconds < 3600 ? String(format: "%d min %d s", Int(seconds) / 60, Int(seconds) % 60)
            : String(format: "%d h %d min", Int(seconds) / 3600, Int(seconds) % 3600 / 60)
    }
}
