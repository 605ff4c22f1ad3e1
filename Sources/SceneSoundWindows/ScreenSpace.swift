import SceneSoundDSP

/// Maps root-window pixels to the listener's space (docs/ARCHITECTURE.md "Conventions"): metres, listener
/// at the origin, +x right, +y up, −z towards the screen. The listener sits
/// `listenerDistanceMetres` in front of the primary monitor's centre; every monitor lies in the
/// plane z = −listenerDistanceMetres, placed by its pixel origin and scaled by its own
/// millimetres per pixel, so a window on a second monitor lands where that monitor physically is
/// rather than where a single stretched screen would put it.
///
/// Pure and immutable: build one per monitor layout and share it.
public struct ScreenSpace: Sendable {
    public static let defaultListenerDistanceMetres = 0.6

    public let monitors: [Monitor]
    public let listenerDistanceMetres: Double
    private let primary: Monitor
    private let horizontal: AxisScale
    private let vertical: AxisScale

    /// - Parameter monitors: as `MonitorLayout.resolve` returns them (non-empty, one primary).
    ///   An empty list means "no display": one 1920x1080 monitor at 96 dpi is assumed.
    public init(monitors: [Monitor], listenerDistanceMetres: Double = ScreenSpace.defaultListenerDistanceMetres) {
        let usable = monitors.isEmpty ? MonitorLayout.resolve(
            randrMonitors: [],
            coreScreen: .init(widthPixels: 1920, heightPixels: 1080, widthMillimetres: 0, heightMillimetres: 0)) : monitors
        self.monitors = usable
        self.listenerDistanceMetres = listenerDistanceMetres
        primary = usable.first(where: \.isPrimary) ?? usable[0]
        horizontal = AxisScale(spans: usable.map {
            AxisScale.Span(startPixels: $0.rectPixels.xPixels, lengthPixels: $0.rectPixels.widthPixels,
                           millimetresPerPixel: $0.millimetresPerPixelX, isPrimary: $0.isPrimary)
        }, primaryMillimetresPerPixel: primary.millimetresPerPixelX)
        vertical = AxisScale(spans: usable.map {
            AxisScale.Span(startPixels: $0.rectPixels.yPixels, lengthPixels: $0.rectPixels.heightPixels,
                           millimetresPerPixel: $0.millimetresPerPixelY, isPrimary: $0.isPrimary)
        }, primaryMillimetresPerPixel: primary.millimetresPerPixelY)
    }

    /// The monitor a point belongs to: the one containing it, else the nearest (a window
    /// dragged partly off-screen keeps the scale of the monitor it left).
    public func monitor(atXPixels x: Double, yPixels y: Double) -> Monitor {
        if let inside = monitors.first(where: { $0.rectPixels.contains(xPixels: x, yPixels: y) }) { return inside }
        return monitors.min { $0.rectPixels.distancePixels(toX: x, y: y) < $1.rectPixels.distancePixels(toX: x, y: y) }!
    }

    /// The position of a pixel point (continuous coordinates: 960.0 is the middle of 1920 pixels).
    public func position(xPixels x: Double, yPixels y: Double) -> Vector3 {
        let monitor = monitor(atXPixels: x, yPixels: y)
        let xMillimetres = offsetMillimetres(pixel: x, axis: horizontal,
                                             start: monitor.rectPixels.xPixels, scale: monitor.millimetresPerPixelX,
                                             primaryCentre: primary.rectPixels.centreXPixels)
        let yMillimetres = offsetMillimetres(pixel: y, axis: vertical,
                                             start: monitor.rectPixels.yPixels, scale: monitor.millimetresPerPixelY,
                                             primaryCentre: primary.rectPixels.centreYPixels)
        // Pixel y grows downwards, space y upwards.
        return Vector3(x: xMillimetres / 1000, y: -yMillimetres / 1000, z: -listenerDistanceMetres)
    }

    /// The position of a window: its centre.
    public func position(of rect: PixelRect) -> Vector3 {
        position(xPixels: rect.centreXPixels, yPixels: rect.centreYPixels)
    }

    /// The physical width of a window, at the scale of the monitor holding its centre.
    public func widthMetres(of rect: PixelRect) -> Double {
        let monitor = monitor(atXPixels: rect.centreXPixels, yPixels: rect.centreYPixels)
        return Double(rect.widthPixels) * monitor.millimetresPerPixelX / 1000
    }

    /// Where a stereo stream's two channels sound from: the centres of the window's left and
    /// right thirds, i.e. a third of its width either side of its centre.
    public func stereoPositions(of rect: PixelRect) -> (left: Vector3, right: Vector3) {
        let centre = position(of: rect)
        let offset = widthMetres(of: rect) / 3
        return (Vector3(x: centre.x - offset, y: centre.y, z: centre.z),
                Vector3(x: centre.x + offset, y: centre.y, z: centre.z))
    }

    /// Millimetres from the primary monitor's centre along one axis: the physical run from the
    /// primary's centre to the monitor's edge, then the rest at the monitor's own scale.
    private func offsetMillimetres(pixel: Double, axis: AxisScale, start: Int,
                                   scale: Double, primaryCentre: Double) -> Double {
        axis.millimetres(from: primaryCentre, to: Double(start)) + (pixel - Double(start)) * scale
    }
}

/// One axis of the layout as a piecewise-constant millimetres-per-pixel function: each pixel
/// column (or row) has the scale of the monitor covering it (the primary wins where monitors
/// overlap, then list order); gaps and the outside have the primary's scale.
struct AxisScale: Sendable {
    struct Span: Sendable {
        var startPixels: Int
        var lengthPixels: Int
        var millimetresPerPixel: Double
        var isPrimary: Bool
    }

    /// Sorted breakpoints and the scale that holds from each breakpoint to the next.
    private let breakpoints: [Double]
    private let scales: [Double]
    private let outsideScale: Double

    init(spans: [Span], primaryMillimetresPerPixel: Double) {
        outsideScale = primaryMillimetresPerPixel
        let ordered = spans.filter(\.isPrimary) + spans.filter { !$0.isPrimary }
        let edges = Set(spans.flatMap { [Double($0.startPixels), Double($0.startPixels + $0.lengthPixels)] }).sorted()
        breakpoints = edges
        scales = edges.indices.dropLast().map { index in
            let middle = (edges[index] + edges[index + 1]) / 2
            return ordered.first { middle >= Double($0.startPixels) && middle < Double($0.startPixels + $0.lengthPixels) }?
                .millimetresPerPixel ?? primaryMillimetresPerPixel
        }
    }

    /// ∫ scale from `a` to `b` (negative when b < a).
    func millimetres(from a: Double, to b: Double) -> Double {
        integral(upTo: b) - integral(upTo: a)
    }

    /// ∫ scale from the first breakpoint to `p`, extended with the outside scale on both ends.
    private func integral(upTo p: Double) -> Double {
        guard let first = breakpoints.first else { return p * outsideScale }
        if p <= first { return (p - first) * outsideScale }
        var total = 0.0
        for index in scales.indices {
            let low = breakpoints[index], high = breakpoints[index + 1]
            if p <= high { return total + (p - low) * scales[index] }
            total += (high - low) * scales[index]
        }
        return total + (p - breakpoints[breakpoints.count - 1]) * outsideScale
    }
}
