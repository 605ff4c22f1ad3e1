/// A rectangle in the desktop's pixels (x right, y down): X11's root-window pixels, a Wayland
/// compositor's logical pixels.
public struct PixelRect: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var xPixels: Int
    public var yPixels: Int
    public var widthPixels: Int
    public var heightPixels: Int

    public init(xPixels: Int, yPixels: Int, widthPixels: Int, heightPixels: Int) {
        self.xPixels = xPixels
        self.yPixels = yPixels
        self.widthPixels = widthPixels
        self.heightPixels = heightPixels
    }

    /// The centre in continuous pixel coordinates: a 1920-wide screen's centre is 960.0.
    public var centreXPixels: Double { Double(xPixels) + Double(widthPixels) / 2 }
    public var centreYPixels: Double { Double(yPixels) + Double(heightPixels) / 2 }

    public func contains(xPixels x: Double, yPixels y: Double) -> Bool {
        x >= Double(xPixels) && x < Double(xPixels + widthPixels)
            && y >= Double(yPixels) && y < Double(yPixels + heightPixels)
    }

    /// Euclidean distance from a point to the nearest point of the rectangle (0 inside).
    func distancePixels(toX x: Double, y: Double) -> Double {
        let dx = max(Double(xPixels) - x, 0, x - Double(xPixels + widthPixels))
        let dy = max(Double(yPixels) - y, 0, y - Double(yPixels + heightPixels))
        return (dx * dx + dy * dy).squareRoot()
    }

    public var description: String { "\(widthPixels)x\(heightPixels)+\(xPixels)+\(yPixels)" }
}
