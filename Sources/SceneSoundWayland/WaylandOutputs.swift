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
    /// known; the rest keep their 96 dpi.
    public static func applyPhysicalSizes(_ outputs: [WaylandOutput], to monitors: inout [Monitor]) {
        for index in monitors.indices {
            let monitor = monitors[index]
            let match = outputs.first { $0.name != nil && $0.name == monitor.name }
                ?? outputs.first { $0.xPixels == monitor.rectPixels.xPixels && $0.yPixels == monitor.rectPixels.yPixels }
            guard let match, match.hasPhysicalSize else { continue }
            monitors[index].widthMillimetres = Double(match.widthMillimetres)
            monitors[index].heightMillimetres = Double(match.heightMillimetres)
            monitors[index].physicalSizeSource = .waylandOutput
        }
    }
}
