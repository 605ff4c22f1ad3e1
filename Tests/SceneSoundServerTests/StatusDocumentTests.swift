import Foundation
import Testing
import SceneSoundProtocol
import SceneSoundTestSupport

/// The status document end to end: the real daemon's JSON read through the shared schema
/// (a key the type does not know fails), clients with names and pids, measured stream
/// levels, and what `scenesound status` and its map make of them.
@Suite(.serialized) struct StatusDocumentTests {
    typealias Support = SampleTestSupport

    /// A looping 1 kHz tone of amplitude 0.5 (RMS −9.03 dBFS) in `scene` at `volumeDecibels`.
    static func loopTone(_ client: RawClient, scene: String, volumeDecibels: Float) throws -> UInt32 {
        let format = AudioFormat(sampleFormat: .f32le, rateHz: 48000, channels: 1)
        let reply = try client.request(.streamOpen(StreamOpen(kind: .playback, format: format, spatialMode: .off, loop: true,
                                                              volumeDecibels: volumeDecibels, sceneID: scene)))
        guard case .streamOpened(let opened) = reply else { throw TestFailure("STREAM_OPEN: \(reply)") }
        client.credits[opened.streamID] = Int(opened.creditBytes)
        // 0.25 s is 250 whole periods: the loop is seamless.
        try client.write(stream: opened.streamID, pcm: Support.floatBytes(Support.tone(hz: 1000, seconds: 0.25, amplitude: 0.5)),
                         bytesPerFrame: 4)
        let drained = try client.request(.streamDrain(StreamReference(streamID: opened.streamID)))
        guard drained == .ok else { throw TestFailure("STREAM_DRAIN: \(drained)") }
        return opened.streamID
    }

    static let toneDecibels = 20 * log10(0.5 / 2.0.squareRoot())

    @Test func clientsStreamsAndMeasuredLevelsReadThroughTheSharedSchema() throws {
        let daemon = try Daemon()
        let named = try RawClient(socketPath: daemon.socketPath, name: "radio-app")
        let unnamed = try RawClient(socketPath: daemon.socketPath, name: "")
        #expect(try named.request(.scenePlace(ScenePlace(sceneID: "radio", position: ScenePosition(
            azimuthDegrees: 30, elevationDegrees: 0, distanceMetres: 1.5)))) == .ok)
        let loud = try Self.loopTone(named, scene: "radio", volumeDecibels: 0)
        let quiet = try Self.loopTone(named, scene: "kitchen", volumeDecibels: -12)
        let silent = try unnamed.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1), scene: "radio")

        // The levels settle within a few time constants (0.25 s) of the loops starting.
        var status = try HeadTrackingTests.statusDocument(named)
        try waitUntil(timeoutSeconds: 5, "the levels to settle") {
            status = try HeadTrackingTests.statusDocument(named)
            let levels = Dictionary(uniqueKeysWithValues: status.streams.map { ($0.id, $0.levelDecibels) })
            return abs((levels[Int(loud)] ?? 0) - Self.toneDecibels) < 0.3 && abs((levels[Int(quiet)] ?? 0) - Self.toneDecibels + 12) < 0.3
        }
        #expect(status.version == StatusDocument.currentVersion)
        let pid = Int(getpid())  // both clients are this process (SO_PEERCRED)
        #expect(status.clients.map(\.name) == ["radio-app", ""])
        #expect(status.clients.map(\.pid) == [pid, pid])
        #expect(status.clients.map(\.streams) == [2, 1])
        let unnamedID = try #require(status.clients.last?.id)
        let silentStream = try #require(status.streams.first { $0.clientID == unnamedID && $0.id == Int(silent) })
        #expect(silentStream.levelDecibels == -120 && silentStream.state == "idle", "\(silentStream)")

        // What a person reads: the clients, the measured levels.
        let summary = try CommandLineTests.runCLI(["status", "--socket", daemon.socketPath])
        #expect(summary.status == 0, "\(summary.error)")
        for text in ["radio-app", "pid \(pid)", "2 streams", "client \(unnamedID)", "silent", "scene radio", "scene kitchen"] {
            #expect(summary.output.contains(text), "'\(text)' missing from:\n\(summary.output)")
        }
        let shownLevels = summary.output.matches(of: /level (-?[0-9]+\.[0-9]) dB/).compactMap { Double($0.1) }
        #expect(shownLevels.count == 2 && abs(shownLevels[0] - Self.toneDecibels) < 0.5
                && abs(shownLevels[1] - Self.toneDecibels + 12) < 0.5, "\(summary.output)")

        // The map draws the louder scene bigger, sized by its measured level.
        let svg = daemon.directory + "/map.svg"
        #expect(try CommandLineTests.runCLI(["status", "--plot", svg, "--socket", daemon.socketPath]).status == 0)
        let map = try MapSVG(path: svg)
        let radio = try #require(map.sources.first { $0.label.hasPrefix("radio ") }, "\(map.sources)")
        let kitchen = try #require(map.sources.first { $0.label.hasPrefix("kitchen ") }, "\(map.sources)")
        // 6 px at −60 dB to 22 px at 0 dB.
        #expect(abs(radio.radius - (6 + 16 * (Self.toneDecibels + 60) / 60)) < 0.3, "\(radio)")
        #expect(abs(kitchen.radius - (6 + 16 * (Self.toneDecibels - 12 + 60) / 60)) < 0.3, "\(kitchen)")
        #expect(radio.label == "radio -9 dB" && kitchen.label == "kitchen -21 dB", "\(map.sources)")
    }

    /// Seven scenes where two or more share a place: no label overlaps another label, a source
    /// or a monitor.
    @Test func mapLabelsNeverCollide() throws {
        let daemon = try Daemon()
        let client = try RawClient(socketPath: daemon.socketPath)
        let places: [(String, Float, Float)] = [("kettle", 20, 1), ("kettle-timer", 20, 1), ("kettle-radio", 20, 1),
                                                ("podcast", 20.5, 1.02), ("doorbell", -30, 1.2),
                                                ("doorbell-camera-with-a-long-name", -30, 1.2), ("clock", 0, 0.3)]
        for (id, azimuth, distance) in places {
            #expect(try client.request(.scenePlace(ScenePlace(sceneID: id, position: ScenePosition(
                azimuthDegrees: azimuth, elevationDegrees: 0, distanceMetres: distance)))) == .ok)
        }
        _ = try Self.loopTone(client, scene: "kettle", volumeDecibels: 0)
        let svg = daemon.directory + "/map.svg"
        let plot = try CommandLineTests.runCLI(["status", "--plot", svg, "--socket", daemon.socketPath])
        #expect(plot.status == 0, "\(plot.error)")
        let map = try MapSVG(path: svg)
        #expect(map.sources.count == places.count)
        #expect(map.collisions.isEmpty, "\(map.collisions)")
    }
}

/// The sources and labels of a map written by `scenesound status --plot`. A label's box is
/// exact: the map fixes each label's length (`textLength`) and its font size.
struct MapSVG {
    struct Box: CustomStringConvertible {
        var x, y, width, height: Double
        func intersects(_ o: Box) -> Bool { x < o.x + o.width && o.x < x + width && y < o.y + o.height && o.y < y + height }
        var description: String { "(\(x), \(y), \(width)×\(height))" }
    }
    struct Source: CustomStringConvertible {
        var radius: Double
        var circleBox: Box
        var label = ""
        var labelBox = Box(x: 0, y: 0, width: 0, height: 0)
        var description: String { "\(label) r \(radius) at \(circleBox), label at \(labelBox)" }
    }
    var sources: [Source] = []
    /// The monitors' and windows' bars, as drawn (stroke width included).
    var bars: [Box] = []

    /// What a reader could not read: labels over other labels, over sources, or across a
    /// monitor or a window.
    var collisions: [String] {
        var found: [String] = []
        for (i, a) in sources.enumerated() {
            for b in sources[(i + 1)...] where a.labelBox.intersects(b.labelBox) { found.append("'\(a.label)' overlaps '\(b.label)'") }
            for b in sources where a.labelBox.intersects(b.circleBox) { found.append("'\(a.label)' covers the source of '\(b.label)'") }
            for bar in bars where a.labelBox.intersects(bar) { found.append("'\(a.label)' lies across the monitor or window at \(bar)") }
        }
        return found
    }

    init(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        func attribute(_ name: String, _ line: Substring) -> Double? {
            guard let range = line.range(of: " \(name)=\"") else { return nil }
            return Double(line[range.upperBound...].prefix { $0 != "\"" })
        }
        // Labels come in the order of the source circles.
        var labelled = 0
        for line in text.split(separator: "\n") {
            if line.contains("class=\"monitor\"") || line.contains("class=\"window\""),
               let x1 = attribute("x1", line), let x2 = attribute("x2", line), let y = attribute("y1", line),
               let stroke = attribute("stroke-width", line) {
                bars.append(Box(x: min(x1, x2), y: y - stroke / 2, width: abs(x2 - x1), height: stroke))
            } else if line.contains("class=\"source\""), let cx = attribute("cx", line), let cy = attribute("cy", line),
               let r = attribute("r", line) {
                sources.append(Source(radius: r, circleBox: Box(x: cx - r, y: cy - r, width: 2 * r, height: 2 * r)))
            } else if line.contains("class=\"label\""), let x = attribute("x", line), let y = attribute("y", line),
                      let width = attribute("textLength", line), let size = attribute("font-size", line), labelled < sources.count {
                let label = line.split(separator: ">", maxSplits: 1).last?.split(separator: "<").first.map(String.init) ?? ""
                sources[labelled].label = label.replacingOccurrences(of: "&amp;", with: "&")
                // The baseline is at y; the box holds ascenders above and descenders below it.
                sources[labelled].labelBox = Box(x: x, y: y - size, width: width, height: size + 2)
                labelled += 1
            }
        }
    }
}
