// The desktop: the display, its monitors, and the scenes placed on it. Part of the status document (StatusDocument.swift).

extension StatusDocument {
    public struct Display: Codable, Equatable, Sendable {
        public var connected: Bool
        /// Top-level windows tracked; absent without a display.
        public var windows: Int?
        /// `0x…`, as xwininfo prints it.
        public var activeWindow: String?
        /// An EWMH window manager runs.
        public var windowManager: Bool?
        /// The active window's own scene: `x11:0x…`, or `wayland:…` for a native Wayland window.
        public var activeWindowScene: String?

        public init(connected: Bool, windows: Int? = nil, activeWindow: String? = nil, windowManager: Bool? = nil,
                    activeWindowScene: String? = nil) {
            self.connected = connected
            self.windows = windows
            self.activeWindow = activeWindow
            self.windowManager = windowManager
            self.activeWindowScene = activeWindowScene
        }

        enum CodingKeys: String, CodingKey {
            case connected, windows, activeWindow = "active_window", windowManager = "window_manager"
            case activeWindowScene = "active_window_scene"
        }
    }

    /// A monitor where the listener sees it: x right, y up, z back from the head.
    public struct Monitor: Codable, Equatable, Sendable {
        public var name: String
        /// x, y, width, height on the X screen.
        public var rectPixels: [Int]
        public var widthMillimetres: Double
        public var heightMillimetres: Double
        public var primary: Bool
        public var leftMetres: Double
        public var rightMetres: Double
        public var topMetres: Double
        public var bottomMetres: Double
        public var zMetres: Double

        public init(name: String, rectPixels: [Int], widthMillimetres: Double, heightMillimetres: Double, primary: Bool,
                    leftMetres: Double, rightMetres: Double, topMetres: Double, bottomMetres: Double, zMetres: Double) {
            self.name = name
            self.rectPixels = rectPixels
            self.widthMillimetres = widthMillimetres
            self.heightMillimetres = heightMillimetres
            self.primary = primary
            self.leftMetres = leftMetres
            self.rightMetres = rightMetres
            self.topMetres = topMetres
            self.bottomMetres = bottomMetres
            self.zMetres = zMetres
        }

        enum CodingKeys: String, CodingKey {
            case name, rectPixels = "rect_pixels", widthMillimetres = "width_millimetres"
            case heightMillimetres = "height_millimetres", primary, leftMetres = "left_metres"
            case rightMetres = "right_metres", topMetres = "top_metres", bottomMetres = "bottom_metres", zMetres = "z_metres"
        }
    }

    public struct Scene: Codable, Equatable, Sendable {
        public var id: String
        /// `none` (straight ahead), `window`, `fixed` or `program` (the window of a process).
        public var kind: String
        /// The window it follows (`0x…`).
        public var window: String?
        /// For `program` scenes.
        public var pid: Int?
        /// The window's title (`_NET_WM_NAME`, else `WM_NAME`) and application (`WM_CLASS`'s class).
        public var title: String?
        public var application: String?
        /// `visible`, `minimized`, `onOtherDesktop`, `unmapped` or `gone`.
        public var state: String?
        public var rectPixels: [Int]?
        public var widthMetres: Double?
        public var azimuthDegrees: Double
        public var elevationDegrees: Double
        public var distanceMetres: Double
        /// x (right), y (up), z (back).
        public var positionMetres: [Double]
        /// Streams rendering at it now: clients' streams, plays, captured apps' streams.
        public var streams: Int?
        /// Why it stays when nothing plays at it: `placed` (by hand, until unbound), `bound` (to a
        /// window, until unbound or the window closes), `window` (its window is open),
        /// `closed_window` (its window closed less than a minute ago); absent: freed when its
        /// last stream ends.
        public var kept: String?

        public init(id: String, kind: String, window: String? = nil, pid: Int? = nil, title: String? = nil,
                    application: String? = nil, state: String? = nil, rectPixels: [Int]? = nil, widthMetres: Double? = nil,
                    azimuthDegrees: Double, elevationDegrees: Double, distanceMetres: Double, positionMetres: [Double],
                    streams: Int? = nil, kept: String? = nil) {
            self.id = id
            self.kind = kind
            self.window = window
            self.pid = pid
            self.title = title
            self.application = application
            self.state = state
            self.rectPixels = rectPixels
            self.widthMetres = widthMetres
            self.azimuthDegrees = azimuthDegrees
            self.elevationDegrees = elevationDegrees
            self.distanceMetres = distanceMetres
            self.positionMetres = positionMetres
            self.streams = streams
            self.kept = kept
        }

        /// What a person recognises: "XTerm — notes.txt" for a window's own scene, "radio (XTerm —
        /// notes.txt)" for a name bound to a window, else the scene id.
        public var label: String {
            guard let window = windowName else { return id }
            return SceneID.isWindowScene(id) ? window : "\(id) (\(window))"
        }

        /// The window as "XTerm — notes.txt" (application — title), either alone, or nil.
        public var windowName: String? {
            switch (application?.nonEmpty, title?.nonEmpty) {
            case let (application?, title?): application == title ? title : "\(application) — \(title)"
            case let (application?, nil): application
            case let (nil, title?): title
            case (nil, nil): nil
            }
        }

        enum CodingKeys: String, CodingKey {
            case id, kind, window, pid, title, application, state, rectPixels = "rect_pixels", widthMetres = "width_metres"
            case azimuthDegrees = "azimuth_degrees", elevationDegrees = "elevation_degrees"
            case distanceMetres = "distance_metres", positionMetres = "position_metres", streams, kept
        }
    }
}

private extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
