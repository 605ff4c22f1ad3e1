/// One monitor: where it sits in the desktop's pixels (X11's root window, a compositor's
/// logical layout) and how large it physically is.
public struct Monitor: Equatable, Sendable {
    /// Where the physical size came from, weakest last; `status` shows it so a user can tell
    /// why the map looks off (a monitor that reports no size gets the fallback).
    public enum PhysicalSizeSource: String, Equatable, Sendable {
        case randr, coreScreen, waylandOutput, assumed96DPI
    }

    public var name: String
    public var rectPixels: PixelRect
    public var widthMillimetres: Double
    public var heightMillimetres: Double
    public var isPrimary: Bool
    public var physicalSizeSource: PhysicalSizeSource

    public init(name: String, rectPixels: PixelRect, widthMillimetres: Double, heightMillimetres: Double,
                isPrimary: Bool, physicalSizeSource: PhysicalSizeSource = .randr) {
        self.name = name
        self.rectPixels = rectPixels
        self.widthMillimetres = widthMillimetres
        self.heightMillimetres = heightMillimetres
        self.isPrimary = isPrimary
        self.physicalSizeSource = physicalSizeSource
    }

    public var millimetresPerPixelX: Double { widthMillimetres / Double(max(rectPixels.widthPixels, 1)) }
    public var millimetresPerPixelY: Double { heightMillimetres / Double(max(rectPixels.heightPixels, 1)) }
}
