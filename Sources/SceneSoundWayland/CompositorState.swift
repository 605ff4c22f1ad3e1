import SceneSoundWindows

/// What a compositor reported at one query, in the window model's terms.
struct CompositorState: Equatable {
    /// Bottom to top (`stackingIndex` is the position here).
    var windows: [TrackedWindow]
    /// Logical pixels; exactly one primary (the listener sits in front of it).
    var monitors: [Monitor]
    var activeWindowID: UInt32?
}

enum CompositorError: Error, Equatable, CustomStringConvertible {
    /// The connection is gone or unusable: reconnect.
    case disconnected(String)
    /// A reply that does not parse: one logged line, the last state kept.
    case malformed(String)
    /// The compositor answers but cannot tell windows now (GNOME Shell without our extension):
    /// the message logged once (an empty one: not yet worth a line), the last places kept as
    /// when disconnected, the session kept (asked again on its next event).
    case unavailable(String)

    var description: String {
        switch self {
        case .disconnected(let reason): "disconnected: \(reason)"
        case .malformed(let reason): "malformed reply: \(reason)"
        case .unavailable(let reason): reason
        }
    }
}

/// One connection to a compositor, made by a window source's loop and used only on its thread.
protocol CompositorSession: AnyObject {
    /// Readable when the compositor has sent events.
    var eventDescriptor: Int32 { get }
    /// Consumes what arrived without waiting; true when anything did. Throws when the
    /// connection is gone.
    func readEvents() throws(CompositorError) -> Bool
    /// The windows, outputs and active window now.
    func query() throws(CompositorError) -> CompositorState
    /// Flags a window for attention, where the compositor has a way (a window id from `query`).
    func setDemandsAttention(windowID: UInt32, _ demands: Bool) throws(CompositorError)
    /// Undoes what connecting set up in the compositor (KWin: the loaded script); called once
    /// when the session ends, on the window source's thread.
    func close()
}

extension CompositorSession {
    func close() {}
}

extension CompositorState {
    /// The primary of a compositor's outputs: the one at the origin of its layout, else the
    /// first (compositors have no "primary" of X11's kind; the origin is where the layout starts).
    static func markPrimary(_ monitors: inout [Monitor]) {
        let primary = monitors.firstIndex { $0.rectPixels.xPixels == 0 && $0.rectPixels.yPixels == 0 } ?? 0
        for index in monitors.indices { monitors[index].isPrimary = index == primary }
    }
}
