import Foundation
import Synchronization
import SceneSoundDBus
import SceneSoundPlatform
import SceneSoundWindows

/// GNOME Shell's windows through SceneSound's extension (docs/GNOME-EXTENSION.md): its
/// `GetState` on the Shell's bus name, again on each `Changed` signal (the extension sends one
/// for every change, coalesced, so nothing is polled). The Shell leaving the bus or restarting
/// (a new owner of `org.gnome.Shell`) ends the session: the source keeps the last places and
/// reconnects. Without the extension enabled the Shell answers that our object is unknown: one
/// logged line says how to enable it, and the session waits for it (the extension signals once
/// when enabled) with native windows straight ahead.
public enum GnomeShellWindowSource {
    public static let extensionUUID = "scenesound-windows@scenesound.org"
    public static let busName = "org.gnome.Shell"
    public static let objectPath = "/org/scenesound/Windows"
    public static let interface = "org.scenesound.Windows1"

    /// What the daemon logs, once, when GNOME Shell runs without the extension.
    public static let notEnabledMessage = "SceneSound's extension is not enabled, so native Wayland windows play straight ahead: "
        + "run `gnome-extensions enable \(extensionUUID)` (on Wayland, a newly installed extension is found only after logging out and in again)"

    /// A Shell that has just taken its bus name loads its extensions a moment later: our object
    /// missing in that time says nothing yet (the extension signals once it is enabled).
    public static let startupGraceSeconds = 10.0

    /// No timer: the extension signals every change.
    public static func make(environment: [String: String],
                            configuration: CompositorWindowSource.Configuration = .init(pollWhilePlayingSeconds: nil),
                            startupGraceSeconds: Double = startupGraceSeconds,
                            log: @escaping @Sendable (String) -> Void,
                            onSnapshot: (@Sendable (WindowSnapshot) -> Void)?) -> CompositorWindowSource {
        CompositorWindowSource(description: "GNOME Shell", configuration: configuration, log: log,
                               onSnapshot: onSnapshot) { () throws(CompositorError) in
            try GnomeShellSession(environment: environment, startupGraceSeconds: startupGraceSeconds)
        }
    }
}

final class GnomeShellSession: CompositorSession {
    private let connection: DBusConnection
    private let events = SessionEvents()
    private var subscriptions: [DBusSubscription] = []
    /// The Shell's unique name when the session began: another owner is another Shell.
    private let shellOwner: String
    private let startupGraceSeconds: Double
    private let started = Date()
    private var graceCheckScheduled = false
    /// Our object answered in this session: its disappearance is the extension disabled, no
    /// longer a Shell still starting.
    private var objectAnswered = false

    /// What the D-Bus thread saw, for the window source's thread; each report wakes it.
    private final class SessionEvents: Sendable {
        struct Seen {
            var changed = false
            var owner: String??  // nil: no report; .some(nil): the name was released
            var lostBus: String?
        }
        let seen = Mutex(Seen())
        let wakePipe = WakePipe()

        func record(_ update: (inout Seen) -> Void) {
            seen.withLock { update(&$0) }
            wakePipe.wake()
        }
    }

    init(environment: [String: String], startupGraceSeconds: Double) throws(CompositorError) {
        self.startupGraceSeconds = startupGraceSeconds
        let events = self.events
        do {
            connection = try DBusConnection.sessionBus(environment: environment) { error in
                events.record { $0.lostBus = "the session bus closed (\(error))" }
            }
        } catch {
            throw .disconnected("\(error)")
        }
        let owner: String?
        do {
            owner = try connection.nameOwner(GnomeShellWindowSource.busName)
        } catch {
            connection.close()
            throw .disconnected("\(error)")
        }
        guard let owner else {
            connection.close()
            throw .disconnected("\(GnomeShellWindowSource.busName) is not on the session bus")
        }
        shellOwner = owner
        do {
            subscriptions.append(try connection.addSignalMatch(sender: GnomeShellWindowSource.busName, path: GnomeShellWindowSource.objectPath,
                                                               interface: GnomeShellWindowSource.interface, member: "Changed") { _ in
                events.record { $0.changed = true }
            })
            subscriptions.append(try connection.watchNameOwner(GnomeShellWindowSource.busName) { owner in
                events.record { $0.owner = .some(owner) }
            })
        } catch {
            connection.close()
            throw .disconnected("\(error)")
        }
    }

    deinit {
        for subscription in subscriptions { subscription.cancel() }
        connection.close()
    }

    var eventDescriptor: Int32 { events.wakePipe.readDescriptor }

    func readEvents() throws(CompositorError) -> Bool {
        events.wakePipe.drain()
        let seen = events.seen.withLock { seen in
            defer { seen.changed = false }
            return seen
        }
        if let lost = seen.lostBus { throw .disconnected(lost) }
        if let owner = seen.owner, owner != shellOwner {
            throw .disconnected(owner == nil ? "GNOME Shell left the session bus" : "GNOME Shell restarted")
        }
        return seen.changed
    }

    func query() throws(CompositorError) -> CompositorState {
        let reply: [DBusValue]
        do {
            reply = try connection.call(destination: shellOwner, path: GnomeShellWindowSource.objectPath,
                                        interface: GnomeShellWindowSource.interface, member: "GetState", timeoutSeconds: 2)
        } catch where Self.isMissingObject(error) {
            let graceLeft = startupGraceSeconds - Date().timeIntervalSince(started)
            guard graceLeft <= 0 || objectAnswered else {
                // Asked again once the grace is over, unless the extension signals first.
                if !graceCheckScheduled {
                    graceCheckScheduled = true
                    let events = self.events
                    DispatchQueue.global().asyncAfter(deadline: .now() + graceLeft) { events.record { $0.changed = true } }
                }
                throw .unavailable("")
            }
            throw .unavailable(GnomeShellWindowSource.notEnabledMessage)
        } catch {
            throw .disconnected("GetState: \(error)")
        }
        objectAnswered = true
        guard let json = reply.first?.string else { throw .malformed("GetState answered \(reply), not a string") }
        return try GnomeShellState.state(json: Array(json.utf8))
    }

    /// The Shell runs, our object is not there: the extension is not enabled (or not installed).
    static func isMissingObject(_ error: DBusError) -> Bool {
        [DBusError.unknownMethodName, "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownInterface"]
            .contains(error.name)
    }

    /// Read-only by design: the extension offers no way to flag a window.
    func setDemandsAttention(windowID: UInt32, _ demands: Bool) throws(CompositorError) {}
}
