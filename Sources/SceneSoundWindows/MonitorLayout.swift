/// Turns what the X server reports into a usable monitor list: RandR monitors with their
/// physical size, falling back per monitor to the core screen's millimetres, then to 96 dpi
/// (docs/ARCHITECTURE.md "Conventions"). Pure, so every fallback is unit-tested without a server.
public enum MonitorLayout {
    public static let assumedDotsPerInch = 96.0
    static let millimetresPerInch = 25.4

    /// The core screen as the X connection setup describes it.
    public struct CoreScreen: Equatable, Sendable {
        public var widthPixels: Int
        public var heightPixels: Int
        public var widthMillimetres: Int
        public var heightMillimetres: Int

        public init(widthPixels: Int, heightPixels: Int, widthMillimetres: Int, heightMillimetres: Int) {
            self.widthPixels = widthPixels
            self.heightPixels = heightPixels
            self.widthMillimetres = widthMillimetres
            self.heightMillimetres = heightMillimetres
        }
    }

    /// - Parameter randrMonitors: as RandR reports them; a size ≤ 0 means "unknown" (a
    ///   monitor defined without millimetres, or a projector that reports none).
    public static func resolve(randrMonitors: [Monitor], coreScreen: CoreScreen) -> [Monitor] {
        let (coreScaleX, coreSourceX) = scale(millimetres: coreScreen.widthMillimetres, pixels: coreScreen.widthPixels)
        let (coreScaleY, coreSourceY) = scale(millimetres: coreScreen.heightMillimetres, pixels: coreScreen.heightPixels)
        let coreSource: Monitor.PhysicalSizeSource =
            coreSourceX == .coreScreen && coreSourceY == .coreScreen ? .coreScreen : .assumed96DPI

        var monitors = randrMonitors.filter { $0.rectPixels.widthPixels > 0 && $0.rectPixels.heightPixels > 0 }
        if monitors.isEmpty {
            monitors = [Monitor(
                name: "screen",
                rectPixels: PixelRect(xPixels: 0, yPixels: 0,
                                      widthPixels: coreScreen.widthPixels, heightPixels: coreScreen.heightPixels),
                widthMillimetres: coreScaleX * Double(coreScreen.widthPixels),
                heightMillimetres: coreScaleY * Double(coreScreen.heightPixels),
                isPrimary: true, physicalSizeSource: coreSource)]
            return monitors
        }
        for index in monitors.indices where monitors[index].widthMillimetres <= 0 || monitors[index].heightMillimetres <= 0 {
            // Both axes from the fallback, so a monitor never mixes a reported width with a
            // guessed height (that would distort its aspect).
            monitors[index].widthMillimetres = coreScaleX * Double(monitors[index].rectPixels.widthPixels)
            monitors[index].heightMillimetres = coreScaleY * Double(monitors[index].rectPixels.heightPixels)
            monitors[index].physicalSizeSource = coreSource
        }
        // Exactly one primary: the listener sits in front of it. Without one, the first
        // monitor (RandR lists the primary first when there is one).
        let primaryIndex = monitors.firstIndex(where: \.isPrimary) ?? 0
        for index in monitors.indices { monitors[index].isPrimary = index == primaryIndex }
        return monitors
    }

    /// A compositor's output that reports no millimetres: 96 dots per inch of its own pixels,
    /// which are `scale` logical pixels each (a 2× output's 960 logical pixels are 1920 real ones).
    public static func assumedMillimetres(logicalPixels: Int, scale: Double) -> Double {
        Double(logicalPixels) * max(scale, 0.1) * millimetresPerInch / assumedDotsPerInch
    }

    private static func scale(millimetres: Int, pixels: Int) -> (Double, Monitor.PhysicalSizeSource) {
        if millimetres > 0 && pixels > 0 { return (Double(millimetres) / Double(pixels), .coreScreen) }
        return (millimetresPerInch / assumedDotsPerInch, .assumed96DPI)
    }
}
