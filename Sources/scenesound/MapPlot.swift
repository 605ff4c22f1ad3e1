import Foundation

/// `scenesound status --plot map.svg`: a top-down map of the listener and where things sound,
/// drawn from the status document. Seen from above, the screen is at the top: x (right) runs
/// left to right, −z (towards the screen) runs up.
struct MapPlot {
    let status: [String: Any]

    /// Metres shown: the screen plane and a margin either side of the listener.
    private let sizePixels = 640.0
    private var metresAcross: Double {
        let extents = monitors.flatMap { [abs($0.leftMetres), abs($0.rightMetres)] } + sources.map { abs($0.x) * 1.1 }
        return max(1.6, 2.4 * (extents.max() ?? 0.5))
    }

    struct MonitorLine { let name: String; let leftMetres: Double; let rightMetres: Double; let zMetres: Double; let primary: Bool }
    struct Source { let id: String; let x: Double; let z: Double; let widthMetres: Double; let state: String; let levelDecibels: Double?; let window: String? }

    private var monitors: [MonitorLine] {
        (status["monitors"] as? [[String: Any]] ?? []).compactMap { m in
            guard let left = m["left_metres"] as? Double, let right = m["right_metres"] as? Double else { return nil }
            return MonitorLine(name: m["name"] as? String ?? "", leftMetres: left, rightMetres: right,
                               zMetres: m["z_metres"] as? Double ?? -0.6, primary: m["primary"] as? Bool ?? false)
        }
    }

    private var sources: [Source] {
        let streams = status["streams"] as? [[String: Any]] ?? []
        return (status["scenes"] as? [[String: Any]] ?? []).compactMap { scene in
            guard let id = scene["id"] as? String else { return nil }
            let position = scene["position_metres"] as? [Double]
                ?? Self.cartesian(azimuth: scene["azimuth_degrees"] as? Double ?? 0, distance: scene["distance_metres"] as? Double ?? 1)
            guard position.count == 3 else { return nil }
            let levels = streams.filter { $0["scene"] as? String == id }.compactMap { $0["level_db"] as? Double }
            return Source(id: id, x: position[0], z: position[2], widthMetres: scene["width_metres"] as? Double ?? 0,
                          state: scene["state"] as? String ?? (scene["kind"] as? String ?? ""),
                          levelDecibels: levels.max(), window: scene["window"] as? String)
        }
    }

    private static func cartesian(azimuth: Double, distance: Double) -> [Double] {
        let a = azimuth * .pi / 180
        return [-sin(a) * distance, 0, -cos(a) * distance]
    }

    /// Map coordinates: the listener in the lower middle.
    private func point(x: Double, z: Double) -> (Double, Double) {
        let scale = sizePixels / metresAcross
        return (sizePixels / 2 + x * scale, sizePixels * 0.72 + z * scale)
    }

    var svg: String {
        let head = status["head"] as? [String: Any] ?? [:]
        let yaw = (head["yaw_degrees"] as? Double ?? 0) * .pi / 180
        let (lx, ly) = point(x: 0, z: 0)
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(sizePixels))" height="\(Int(sizePixels))" viewBox="0 0 \(Int(sizePixels)) \(Int(sizePixels))">
            <title>SceneSound map</title>
            <rect width="100%" height="100%" fill="#fbfaf7"/>
            <text x="12" y="22" font-family="sans-serif" font-size="14" fill="#333">SceneSound — seen from above (\(String(format: "%.2f", metresAcross)) m across)</text>

            """
        for monitor in monitors {
            let (x1, y1) = point(x: monitor.leftMetres, z: monitor.zMetres)
            let (x2, _) = point(x: monitor.rightMetres, z: monitor.zMetres)
            out += ##"<line class="monitor" x1="\##(f(x1))" y1="\##(f(y1))" x2="\##(f(x2))" y2="\##(f(y1))" stroke="#555" stroke-width="6" stroke-linecap="butt"/>"## + "\n"
            out += ##"<text x="\##(f(x1))" y="\##(f(y1 - 10))" font-family="sans-serif" font-size="11" fill="#555">\##(escape(monitor.name))\##(monitor.primary ? " (primary)" : "")</text>"## + "\n"
        }
        // The listener: a head with its nose along the gaze (yaw + = left).
        let noseX = lx - sin(yaw) * 28, noseY = ly - cos(yaw) * 28
        out += ##"<circle class="listener" cx="\##(f(lx))" cy="\##(f(ly))" r="14" fill="#2d6cdf"/>"## + "\n"
        out += ##"<line class="gaze" x1="\##(f(lx))" y1="\##(f(ly))" x2="\##(f(noseX))" y2="\##(f(noseY))" stroke="#2d6cdf" stroke-width="4"/>"## + "\n"
        for source in sources {
            let (sx, sy) = point(x: source.x, z: source.z)
            let half = source.widthMetres / 2 * sizePixels / metresAcross
            if half > 0 {
                out += ##"<line class="window" x1="\##(f(sx - half))" y1="\##(f(sy))" x2="\##(f(sx + half))" y2="\##(f(sy))" stroke="#e0a030" stroke-width="10" opacity="0.7"/>"## + "\n"
            }
            // Louder sources are drawn bigger: radius from 6 px (−60 dB) to 22 px (0 dB).
            let level = source.levelDecibels ?? -60
            let radius = 6 + 16 * max(0, min(1, (level + 60) / 60))
            let colour = source.state == "visible" || source.state == "fixed" || source.state == "none" ? "#d9452b" : "#999"
            out += ##"<circle class="source" cx="\##(f(sx))" cy="\##(f(sy))" r="\##(f(radius))" fill="\##(colour)" opacity="0.85"/>"## + "\n"
            let label = source.id + (source.levelDecibels.map { String(format: " %.0f dB", $0) } ?? "")
            out += ##"<text x="\##(f(sx + radius + 4))" y="\##(f(sy + 4))" font-family="sans-serif" font-size="12" fill="#222">\##(escape(label))</text>"## + "\n"
        }
        out += "</svg>\n"
        return out
    }

    private func f(_ v: Double) -> String { String(format: "%.1f", v) }

    private func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
