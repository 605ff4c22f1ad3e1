import Foundation
import SceneSoundWindows

/// Which windows were active, in order, so that a sound whose process owns no window (a
/// sandboxed or helper process, an audio process beside the window's rather than above it)
/// can still be placed at its app's window: the one the user last worked in. Windows are
/// tied to an app by their process's binary (`_NET_WM_PID`) and their `WM_CLASS`.
/// Event-loop confined; fed every window snapshot.
struct AppWindowHistory {
    /// What a captured stream says about its app.
    struct App: Equatable {
        /// `application.process.binary` (or the stream's process's executable).
        var binary: String?
        /// `application.name`.
        var name: String?
    }

    /// Order of the last activation per window; a higher number is more recent.
    private var activations: [UInt32: UInt64] = [:]
    private var counter: UInt64 = 0
    /// The executable of each window's process, read once per process.
    private var binaries: [Int32: String] = [:]
    private var lastActive: UInt32?
    private var lastIdentities: Set<WindowIdentity> = []
    private let binaryOfProcess: (Int32) -> String?

    private struct WindowIdentity: Hashable {
        var id: UInt32
        var pid: Int32?
        var className: String?
    }

    init(binaryOfProcess: @escaping (Int32) -> String? = ProcessBinary.name) {
        self.binaryOfProcess = binaryOfProcess
    }

    /// Takes a snapshot in. True when windows appeared or closed, changed owner or class, or
    /// the active one changed (moves alone do not change which window a sound belongs to).
    mutating func record(_ snapshot: WindowSnapshot) -> Bool {
        let identities = Set(snapshot.windows.map { WindowIdentity(id: $0.id, pid: $0.pid, className: $0.applicationName) })
        let ids = Set(snapshot.windows.map(\.id))
        let pids = Set(snapshot.windows.compactMap(\.pid))
        for gone in Set(binaries.keys).subtracting(pids) { binaries[gone] = nil }
        for gone in Set(activations.keys).subtracting(ids) { activations[gone] = nil }
        for pid in pids where binaries[pid] == nil { binaries[pid] = binaryOfProcess(pid) ?? "" }
        let active = snapshot.activeWindowID.flatMap { ids.contains($0) ? $0 : nil }
        let changed = identities != lastIdentities || active != lastActive
        if let active, active != lastActive {
            counter += 1
            activations[active] = counter
        }
        lastActive = active
        lastIdentities = identities
        return changed
    }

    /// The app's most recently active window among those open in `snapshot`; of its windows
    /// never seen active (they were before the daemon started), the topmost. nil if no open
    /// window belongs to the app.
    func mostRecentlyActiveWindow(of app: App, in snapshot: WindowSnapshot) -> TrackedWindow? {
        let theirs = snapshot.windows.filter { belongs($0, to: app) }
        return theirs.max { a, b in
            (activations[a.id] ?? 0, a.stackingIndex) < (activations[b.id] ?? 0, b.stackingIndex)
        }
    }

    /// The same program when a name the stream gives (binary, application name) equals one
    /// the window gives (its process's binary, its `WM_CLASS`), case aside.
    func belongs(_ window: TrackedWindow, to app: App) -> Bool {
        let binary = window.pid.flatMap { binaries[$0] ?? binaryOfProcess($0) }
        let windowNames = Set([binary, window.applicationName].compactMap { $0?.lowercased() }.filter { !$0.isEmpty })
        return [app.binary, app.name].contains { $0.map { windowNames.contains($0.lowercased()) } ?? false }
    }
}

/// A process's executable, as libpulse names it in `application.process.binary`: the base
/// name of /proc/PID/exe (another user's processes hide it: then /proc/PID/comm).
enum ProcessBinary {
    static func name(_ pid: Int32) -> String? {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe") {
            // A replaced executable reads "/usr/bin/app (deleted)".
            let base = (path.hasSuffix(" (deleted)") ? String(path.dropLast(10)) : path).split(separator: "/").last
            if let base { return String(base) }
        }
        guard let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else { return nil }
        let name = comm.trimmingCharacters(in: .whitespacesAndNewlines)
        return name.isEmpty ? nil : name
    }
}
