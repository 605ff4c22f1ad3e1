import Foundation
import Synchronization
import SceneSoundDBus
import SceneSoundPlatform
import SceneSoundWindows

/// KWin's windows (Plasma 5.27 and 6), through a KWin script of SceneSound's own: the daemon
/// exports `org.scenesound.KWin1.Report(s)` at `/org/scenesound/KWin` on the session bus,
/// writes the script with its unique bus name in it, and has KWin load and run it; the script
/// sends the whole window state as JSON on every change (events, no polling). Only the current
/// owner of `org.kde.KWin` may call `Report`. KWin restarting (the name changing owners) ends
/// the session; the next one loads the script again. At the end the script is unloaded.
public enum KWinWindowSource {
    public static let objectPath = "/org/scenesound/KWin"
    public static let interface = "org.scenesound.KWin1"
    public static let kwinService = "org.kde.KWin"
    /// The name the script is loaded under (one daemon per user; a stale one is replaced).
    public static let pluginName = "scenesound"

    /// `scriptTemplate`: share/kwin/scenesound.js (`scriptTemplatePath`). `scriptDirectory`: where
    /// the per-run copy is written (the daemon's runtime directory).
    public static func make(environment: [String: String], scriptTemplate: String, scriptDirectory: String,
                            configuration: CompositorWindowSource.Configuration = defaultConfiguration,
                            log: @escaping @Sendable (String) -> Void,
                            onSnapshot: (@Sendable (WindowSnapshot) -> Void)?) -> CompositorWindowSource {
        let address = environment["DBUS_SESSION_BUS_ADDRESS"] ?? ""
        return CompositorWindowSource(description: "KWin on the session bus", configuration: configuration, log: log,
                                      onSnapshot: onSnapshot) { () throws(CompositorError) in
            try KWinSession(busAddress: address, scriptTemplate: scriptTemplate, scriptDirectory: scriptDirectory)
        }
    }

    /// KWin reports every change as it happens, so the timer that sway and Hyprland need while
    /// sounds play is only a slow safety net here (a re-read of the last report costs nothing).
    public static var defaultConfiguration: CompositorWindowSource.Configuration {
        CompositorWindowSource.Configuration(pollWhilePlayingSeconds: 5)
    }

    /// The script shipped with SceneSound: installed where KWin keeps packaged scripts
    /// (`PREFIX/share/kwin/scripts/scenesound/contents/code/main.js` for
    /// `PREFIX/bin/scenesoundd`), else in the source tree the program was built in (tests,
    /// `swift run`).
    public static func scriptTemplatePath(executablePath: String) -> String? {
        let executableDirectory = URL(fileURLWithPath: executablePath).deletingLastPathComponent()
        var candidates = [executableDirectory.deletingLastPathComponent().appendingPathComponent(installedScriptPath).path]
        var directory = executableDirectory
        while directory.path != "/" {
            candidates.append(directory.appendingPathComponent("share/kwin/scenesound.js").path)
            directory = directory.deletingLastPathComponent()
        }
        return candidates.first { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// Below the installation prefix.
    public static let installedScriptPath = "share/kwin/scripts/scenesound/contents/code/main.js"
    static let busNamePlaceholder = "@SCENESOUND_BUS_NAME@"
}

/// One run of the script in one KWin: the session bus connection it reports to, the owner of
/// `org.kde.KWin` it was loaded into.
final class KWinSession: CompositorSession {
    /// What the connection's thread hands the window source's thread.
    private final class Inbox: Sendable {
        struct Values {
            var kwinOwner: String?
            var payload: String?
            var payloadSequence = 0
            var busLost: String?
        }
        let values = Mutex(Values())
        let wakePipe = WakePipe()
        let firstReport = OneShot<Bool>()
    }

    private let bus: DBusConnection
    private let inbox: Inbox
    private let subscriptions: [DBusSubscription]
    private let loadedOwner: String
    private let scriptPath: String
    private var parsedSequence = 0
    private var lastState: CompositorState?
    private var closed = false

    init(busAddress: String, scriptTemplate: String, scriptDirectory: String, firstReportTimeoutSeconds: Double = 5) throws(CompositorError) {
        guard !busAddress.isEmpty else { throw .disconnected("DBUS_SESSION_BUS_ADDRESS is not set: no session bus to find KWin on") }
        let inbox = Inbox()
        let bus: DBusConnection
        do {
            bus = try DBusConnection(address: busAddress) { error in
                inbox.values.withLock { $0.busLost = "the session bus: \(error)" }
                inbox.wakePipe.wake()
            }
        } catch {
            throw .disconnected("the session bus: \(error)")
        }
        var subscriptions: [DBusSubscription] = []
        do {
            subscriptions.append(try bus.watchNameOwner(KWinWindowSource.kwinService) { owner in
                inbox.values.withLock { $0.kwinOwner = owner }
                inbox.wakePipe.wake()
            })
            subscriptions.append(try bus.exportObject(path: KWinWindowSource.objectPath, interface: KWinWindowSource.interface, methods: [
                DBusMethod(name: "Report", inputSignature: "s") { call in
                    inbox.values.withLock { values in
                        values.payload = call.arguments.first?.string
                        values.payloadSequence += 1
                    }
                    inbox.firstReport.fulfill(true)
                    inbox.wakePipe.wake()
                    return .success([])
                },
            ]) { inbox.values.withLock { $0.kwinOwner } })
        } catch {
            bus.close()
            throw .disconnected("the session bus: \(error)")
        }
        guard let owner = inbox.values.withLock({ $0.kwinOwner }) else {
            bus.close()
            throw .disconnected("\(KWinWindowSource.kwinService) is not on the session bus")
        }
        self.bus = bus
        self.inbox = inbox
        self.subscriptions = subscriptions
        loadedOwner = owner
        scriptPath = scriptDirectory + "/kwin-\(getpid()).js"
        // From here a failure ends in deinit's close(): unloaded, disconnected, file removed.
        try writeScript(template: scriptTemplate)
        try loadScript()
        // KWin 5.27 numbers a new script by how many are loaded: after another script was
        // unloaded, ours can get the number (and object path) of one still loaded, and `run` on
        // that path runs the other one. Scripting.start() runs every loaded script not yet running.
        if inbox.firstReport.wait(timeoutSeconds: min(1, firstReportTimeoutSeconds)) == nil {
            _ = try? scripting("start", [])
        }
        guard inbox.firstReport.wait(timeoutSeconds: firstReportTimeoutSeconds) != nil else {
            throw .disconnected("KWin's script sent no report within \(firstReportTimeoutSeconds) s (\(scriptPath))")
        }
    }

    deinit { close() }

    private func writeScript(template: String) throws(CompositorError) {
        do {
            let text = try String(contentsOfFile: template, encoding: .utf8)
                .replacingOccurrences(of: KWinWindowSource.busNamePlaceholder, with: bus.uniqueName)
            try FileManager.default.createDirectory(atPath: (scriptPath as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try text.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        } catch {
            throw .disconnected("cannot write KWin's script \(scriptPath) from \(template): \(error.localizedDescription)")
        }
    }

    /// loadScript(path, name), then run: on `/Scripting/Script<id>` in Plasma 6, on `/<id>` in 5.27.
    private func loadScript() throws(CompositorError) {
        do throws(DBusError) {
            // A script an earlier run left loaded (it crashed): replaced, since KWin refuses a name twice.
            _ = try? scripting("unloadScript", [.string(KWinWindowSource.pluginName)])
            let reply = try scripting("loadScript", [.string(scriptPath), .string(KWinWindowSource.pluginName)])
            guard let id = reply.first?.integer, id >= 0 else {
                throw DBusError.failed("KWin refused to load \(scriptPath) (loadScript answered \(reply))")
            }
            do {
                _ = try bus.call(destination: KWinWindowSource.kwinService, path: "/Scripting/Script\(id)",
                                 interface: "org.kde.kwin.Script", member: "run")
            } catch where error.name == "org.freedesktop.DBus.Error.UnknownObject" {
                _ = try bus.call(destination: KWinWindowSource.kwinService, path: "/\(id)", interface: "org.kde.kwin.Script", member: "run")
            }
        } catch {
            throw .disconnected("loading KWin's script: \(error)")
        }
    }

    private func scripting(_ member: String, _ arguments: [DBusValue]) throws(DBusError) -> [DBusValue] {
        try bus.call(destination: KWinWindowSource.kwinService, path: "/Scripting", interface: "org.kde.kwin.Scripting",
                     member: member, arguments: arguments)
    }

    var eventDescriptor: Int32 { inbox.wakePipe.readDescriptor }

    func readEvents() throws(CompositorError) -> Bool {
        inbox.wakePipe.drain()
        let (owner, sequence, lost) = inbox.values.withLock { ($0.kwinOwner, $0.payloadSequence, $0.busLost) }
        if let lost { throw .disconnected(lost) }
        guard owner == loadedOwner else {
            throw .disconnected(owner == nil ? "KWin left the session bus" : "KWin restarted (now \(owner!))")
        }
        return sequence != parsedSequence
    }

    func query() throws(CompositorError) -> CompositorState {
        let (payload, sequence) = inbox.values.withLock { ($0.payload, $0.payloadSequence) }
        if sequence == parsedSequence, let lastState { return lastState }
        parsedSequence = sequence
        guard let payload else { throw .malformed("KWin's script reported nothing") }
        let state = try KWinReport.state(json: payload)
        lastState = state
        return state
    }

    /// KWin's scripts offer no way to call into them; flagging windows is left to KWin itself.
    func setDemandsAttention(windowID: UInt32, _ demands: Bool) throws(CompositorError) {}

    /// Unloads the script from the KWin it was loaded into (not from a new one, which never had
    /// it), closes the connection, removes the per-run copy.
    func close() {
        guard !closed else { return }
        closed = true
        for subscription in subscriptions { subscription.cancel() }
        if inbox.values.withLock({ $0.kwinOwner }) == loadedOwner {
            _ = try? scripting("unloadScript", [.string(KWinWindowSource.pluginName)])
        }
        bus.close()
        try? FileManager.default.removeItem(atPath: scriptPath)
    }
}
