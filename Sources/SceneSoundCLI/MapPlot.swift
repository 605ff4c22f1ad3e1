import Foundation
import SceneSoundProtocol
import SceneSoundView

/// `scenesound status --plot map.svg`: a top-down map of the listener and where things sound,
/// drawn from the status document. Seen from above, the screen is at the top: x (right) runs
/// left to right, −z (towards the screen) runs up. A source's size is its streams' measured
/// level; labels name windows as people know them and are laid out so that none overlap.
struct MapPlot {
    let status: StatusDocument

    private let sizePixels = SceneGeometry.mapSizePixels
    private static let labelFontPixels = 12.0
    /// Labels are drawn at a fixed advance per character (`textLength`), so their boxes are
    /// known exactly and can be kept apart.
    private static let labelAdvancePixels = 7.0

    /// Metres shown: the screen plane and a margin either side of the listener.
    /// The same as the live view's (`scenesound view`): `SceneGeometry`.
    private var metresAcross: Double { SceneGeometry.metresAcross(status: status) }

    struct Source {
        let label: String
        let x: Double, z: Double
        let widthMetres: Double
        let visible: Bool
        /// The loudest of its streams; nil when none plays in it.
        let levelDecibels: Double?
    }

    var sources: [Source] {
        status.scenes.compactMap { scene in
            guard scene.positionMetres.count == 3 else { return nil }
            let levels = status.streams.filter { $0.scene == scene.id }.map(\.levelDecibels)
            return Source(label: scene.label, x: scene.positionMetres[0], z: scene.positionMetres[2],
                          widthMetres: scene.widthMetres ?? 0, visible: (scene.state ?? "visible") == "visible",
                          levelDecibels: levels.max())
        }
    }

    /// Map coordinates: the listener in the lower middle.
    private func point(x: Double, z: Double) -> (Double, Double) {
        let scale = sizePixels / metresAcross
        return (sizePixels / 2 + x * scale, sizePixels * SceneGeometry.listenerYFraction + z * scale)
    }

    /// Radius from the level: 4 px for a scene with nothing playing, 6 px (−60 dB and below)
    /// to 22 px (0 dB) for one with streams.
    static func radius(levelDecibels: Double?) -> Double { SceneGeometry.radiusPixels(levelDecibels: levelDecibels) }

    struct Box {
        var x: Double, y: Double, width: Double, height: Double
        func intersects(_ other: Box) -> Bool {
            x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
        }
    }

    /// Places each label beside its circle: right, left, above or below, else further down or
    /// up in steps of a line (to its right, left or centred), clear of every circle, monitor and
    /// window and of every label already placed. Below the
    /// map there is always room, so the search ends; the picture grows to hold it.
    static func layOutLabels(circles: [(x: Double, y: Double, r: Double)], widths: [Double], sizePixels: Double,
                             reserved: [Box]) -> [Box] {
        let height = labelFontPixels + 2
        let obstacles = circles.map { Box(x: $0.x - $0.r, y: $0.y - $0.r, width: 2 * $0.r, height: 2 * $0.r) } + reserved
        var placed: [Box] = []
        for (circle, width) in zip(circles, widths) {
            let gap = 4.0
            let beside = [
                Box(x: circle.x + circle.r + gap, y: circle.y - height / 2, width: width, height: height),
                Box(x: circle.x - circle.r - gap - width, y: circle.y - height / 2, width: width, height: height),
                Box(x: circle.x - width / 2, y: circle.y - circle.r - gap - height, width: width, height: height),
                Box(x: circle.x - width / 2, y: circle.y + circle.r + gap, width: width, height: height),
            ]
            let shifted = (1...Int(4 * sizePixels / height)).flatMap { step -> [Box] in
                let dy = Double(step) * height
                return [circle.x + circle.r + gap, circle.x - circle.r - gap - width, circle.x - width / 2].flatMap { x in
                    [Box(x: x, y: circle.y - height / 2 + dy, width: width, height: height),
                     Box(x: x, y: circle.y - height / 2 - dy, width: width, height: height)]
                }
            }
            func fits(_ box: Box) -> Bool {
                box.x >= 0 && box.x + box.width <= sizePixels && box.y >= 28
                    && !obstacles.contains(where: box.intersects) && !placed.contains(where: box.intersects)
            }
            // The last resort, beneath everything placed so far, always fits.
            let bottom = ([sizePixels] + placed.map { $0.y + $0.height } + obstacles.map { $0.y + $0.height }).max()!
            let fallback = Box(x: max(0, min(sizePixels - width, circle.x - width / 2)), y: bottom + 2, width: width, height: height)
            placed.append((beside + shifted).first(where: fits) ?? fallback)
        }
        return placed
    }

    var svg: String {
        let yaw = status.head.yawDegrees * .pi / 180
        let (lx, ly) = point(x: 0, z: 0)
        var body = ""
        var reserved = [Box(x: lx - 14, y: ly - 14, width: 28, height: 28)]
        for monitor in status.monitors {
            let (x1, y1) = point(x: monitor.leftMetres, z: monitor.zMetres)
            let (x2, _) = point(x: monitor.rightMetres, z: monitor.zMetres)
            body += ##"<line class="monitor" x1="\##(f(x1))" y1="\##(f(y1))" x2="\##(f(x2))" y2="\##(f(y1))" stroke="\##(SceneGeometry.Colour.monitor)" stroke-width="6" stroke-linecap="butt"/>"## + "\n"
            let name = monitor.name + (monitor.primary ? " (primary)" : "")
            body += ##"<text class="monitor-name" x="\##(f(x1))" y="\##(f(y1 - 10))" font-family="sans-serif" font-size="11" fill="#555">\##(escape(name))</text>"## + "\n"
            reserved.append(Box(x: x1, y: y1 - 22, width: Double(name.count) * 7, height: 14))
            // The monitor itself: a label across it would hide where the screen is.
            reserved.append(Box(x: x1, y: y1 - 5, width: x2 - x1, height: 10))
        }
        // The listener: a head with its nose along the gaze (yaw + = left).
        let noseX = lx - sin(yaw) * 28, noseY = ly - cos(yaw) * 28
        body += ##"<circle class="listener" cx="\##(f(lx))" cy="\##(f(ly))" r="14" fill="\##(SceneGeometry.Colour.listener)"/>"## + "\n"
        body += ##"<line class="gaze" x1="\##(f(lx))" y1="\##(f(ly))" x2="\##(f(noseX))" y2="\##(f(noseY))" stroke="\##(SceneGeometry.Colour.listener)" stroke-width="4"/>"## + "\n"

        let sources = self.sources
        let circles = sources.map { source -> (x: Double, y: Double, r: Double) in
            let (x, y) = point(x: source.x, z: source.z)
            return (x, y, Self.radius(levelDecibels: source.levelDecibels))
        }
        let labels = sources.map { source in
            source.label + (source.levelDecibels.map { $0 <= -120 ? " (silent)" : String(format: " %.0f dB", $0) } ?? "")
        }
        // Windows to scale, as wide as they are on the screen; labels keep off them too.
        for (source, circle) in zip(sources, circles) where source.widthMetres > 0 {
            let half = source.widthMetres / 2 * sizePixels / metresAcross
            body += ##"<line class="window" x1="\##(f(circle.x - half))" y1="\##(f(circle.y))" x2="\##(f(circle.x + half))" y2="\##(f(circle.y))" stroke="\##(SceneGeometry.Colour.window)" stroke-width="10" opacity="0.7"/>"## + "\n"
            reserved.append(Box(x: circle.x - half, y: circle.y - 5, width: 2 * half, height: 10))
        }
        let boxes = Self.layOutLabels(circles: circles, widths: labels.map { Double($0.count) * Self.labelAdvancePixels },
                                      sizePixels: sizePixels, reserved: reserved)
        // Circles and leader lines first, every label over them.
        for (index, source) in sources.enumerated() {
            let circle = circles[index], box = boxes[index]
            let colour = source.levelDecibels == nil ? SceneGeometry.Colour.silent : source.visible ? SceneGeometry.Colour.sounding : SceneGeometry.Colour.muffled
            body += ##"<circle class="source" cx="\##(f(circle.x))" cy="\##(f(circle.y))" r="\##(f(circle.r))" fill="\##(colour)" opacity="0.85"/>"## + "\n"
            // A label moved away from its circle is tied to it by a thin line.
            let nearest = (x: min(max(circle.x, box.x), box.x + box.width), y: min(max(circle.y, box.y), box.y + box.height))
            if hypot(nearest.x - circle.x, nearest.y - circle.y) > circle.r + 8 {
                body += ##"<line class="leader" x1="\##(f(circle.x))" y1="\##(f(circle.y))" x2="\##(f(nearest.x))" y2="\##(f(nearest.y))" stroke="#888" stroke-width="1"/>"## + "\n"
            }
        }
        // In the order of the circles; a halo of the background keeps lines off the letters.
        for (label, box) in zip(labels, boxes) {
            body += ##"<text class="label" x="\##(f(box.x))" y="\##(f(box.y + Self.labelFontPixels))" textLength="\##(f(box.width))" lengthAdjust="spacingAndGlyphs" font-family="sans-serif" font-size="\##(f(Self.labelFontPixels))" fill="#222" stroke="#fbfaf7" stroke-width="3" paint-order="stroke">\##(escape(label))</text>"## + "\n"
        }
        let height = max(sizePixels, (boxes.map { $0.y + $0.height }.max() ?? 0) + 8)
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(sizePixels))" height="\(Int(height))" viewBox="0 0 \(Int(sizePixels)) \(Int(height))">
            <title>SceneSound map</title>
            <rect width="100%" height="100%" fill="#fbfaf7"/>
            <text x="12" y="22" font-family="sans-serif" font-size="14" fill="#333">SceneSound — seen from above (\(String(format: "%.2f", metresAcross)) m across)</text>

            """ + body + "</svg>\n"
    }

    private func f(_ v: Double) -> String { String(format: "%.1f", v) }

    private func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
