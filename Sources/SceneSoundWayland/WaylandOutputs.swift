import CWaylandOutputs
import SceneSoundWindows

/// Each output's physical size, from `wl_output`'s geometry event over a short Wayland
/// connection of the daemon's own: what sway's, Hyprland's and KWin's own interfaces do not
/// say. Headless and virtual outputs report 0 or −1 mm: unknown, so 96 dpi stays.
public struct WaylandOutput: Equatable, Sendable {
    public var name: String?
    public var xPixels: Int
    public var yPixels: Int
    public var widthMillimetres: Int
    public var heightMillimetres: Int
    public var modeWidthPixels: Int
    public var modeHeightPixels: Int
    public var scale: Int

    public init(name: String?, xPixels: Int, yPixels: Int, widthMillimetres: Int, heightMillimetres: Int,
                modeWidthPixels: Int, modeHeightPixels: Int, scale: Int) {
        self.name = name
        self.xPixels = xPixels
        self.yPixels = yPixels
        self.widthMillimetres = widthMillimetres
        self.heightMillimetres = heightMillimetres
        self.modeWidthPixels = modeWidthPixels
        self.modeHeightPixels = modeHeightPixels
        self.scale = scale
    }

    /// ≤ 0 mm on either side: the compositor does not know.
    public var hasPhysicalSize: Bool { widthMillimetres > 0 && heightMillimetres > 0 }
}

public enum WaylandOutputs {
    /// The outputs of display `display` (a name in `$XDG_RUNTIME_DIR` or an absolute socket path);
    /// nil when there is no such display.
    public static func read(display: String) -> [WaylandOutput]? {
        var buffer = [scenesound_wl_output](repeating: scenesound_wl_output(), count: 16)
        let count = display.withCString { scenesound_read_wayland_outputs($0, &buffer, Int32(buffer.count)) }
        guard count >= 0 else { return nil }
        return buffer.prefix(Int(count)).map { output in
            let name = withUnsafeBytes(of: output.name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            return WaylandOutput(name: name.isEmpty ? nil : name, xPixels: Int(output.x), yPixels: Int(output.y),
                                 widthMillimetres: Int(output.width_mm), heightMillimetres: Int(output.height_mm),
                                 modeWidthPixels: Int(output.mode_width), modeHeightPixels: Int(output.mode_height),
                                 scale: Int(output.scale))
        }
    }

    /// Gives each monitor the millimetres of its `wl_output` (same name, else same origin), where
    /// known; the rest keep their 96 dpi. Returns whether every monitor had a `wl_output`.
    @discardableResult
    public static func applyPhysicalSizes(_ outputs: [WaylandOutput], to monitors: inout [Monitor]) -> Bool {
        var everyMonitorFound = true
        for index in monitors.indices {
            let monitor = monitors[index]
            let match = outputs.first { $0.name != nil && $0.name == monitor.name }
                ?? outputs.first { $0.xPixels == monitor.rectPixels.xPixels && $0.yPixels == monitor.rectPixels.yPixels }
            if match == nil { everyMonitorFound = false }
            guard let match, match.hasPhysicalSize else { continue }
            monitors[index].widthMillimetres = Double(match.widthMillimetres)
            monitors[index].heightMillimetres = Double(match.heightMillimetres)
            monitors[index].physicalSizeSource = .waylandOutput
        }
        return everyMonitorFound
    }
}

/// The outputs' millimetres for a window source's monitors, read again only when the monitors
/// the compositor reports change (one plugged in or out, moved, or given another mode): a
/// Wayland round trip then, none while the desk stays as it is. A monitor that no `wl_output`
/// matches (its compositor told of it before advertising the output) is looked for once more
/// at the next query.
struct WaylandOutputsCache {
    private struct Placement: Equatable {
        var name: String
        var rectPixels: PixelRect
    }

    private let read: () -> [WaylandOutput]?
    private var outputs: [WaylandOutput] = []
    /// The monitors `outputs` were read for; nil: read at the next query.
    private var readFor: [Placement]?
    private var mayLookAgain = false
    private(set) var readCount = 0

    init(read: @escaping () -> [WaylandOutput]?) { self.read = read }

    mutating func applyPhysicalSizes(to monitors: inout [Monitor]) {
        let placements = monitors.map { Placement(name: $0.name, rectPixels: $0.rectPixels) }
        let changed = placements != readFor
        if changed || mayLookAgain {
            outputs = read() ?? []
            readCount += 1
            mayLookAgain = changed
            readFor = placements
        }
        if WaylandOutputs.applyPhysicalSizes(outputs, to: &monitors) { mayLookAgain = false }
    }
}
