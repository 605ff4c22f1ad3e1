import Foundation
import Glibc
import Logging
import SceneSoundCaptureSettings

/// The apps `--capture-apps` leaves alone: `capture_exclude` from the flags or config, plus the
/// list `scenesound apps exclude` keeps, re-read whenever the file changes. Told by inotify
/// (its directory is watched: the CLI replaces the file atomically), so nothing polls.
final class ExclusionFollower: @unchecked Sendable {
    private let configured: Set<String>
    private let path: String?
    private let logger: Logger
    private var watch: DispatchSourceRead?
    private(set) var current: Set<String>

    init(configured: [String], logger: Logger, path: String? = CaptureExclusionList.defaultPath()) {
        self.configured = Set(configured)
        self.path = path
        self.logger = logger
        current = self.configured
        current = self.configured.union(readList())
    }

    private func readList() -> Set<String> {
        guard let path, FileManager.default.fileExists(atPath: path) else { return [] }
        do {
            return Set(try CaptureExclusionList.load(path: path).names)
        } catch {
            logger.warning("capture exclusions: cannot read \(path): \(error.localizedDescription)")
            return []
        }
    }

    /// Calls `changed` (on a background queue) with the whole set whenever the file changes.
    func follow(_ changed: @escaping @Sendable (Set<String>) -> Void) {
        guard let path else { return }
        let directory = (path as NSString).deletingLastPathComponent
        // Created if missing, so that there is something to watch before the first exclusion.
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        let events = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE)
        guard descriptor >= 0, inotify_add_watch(descriptor, directory, events) >= 0 else {
            logger.warning("capture exclusions: cannot watch \(directory) (\(String(cString: strerror(errno)))); changes to \(path) are seen at the next start")
            if descriptor >= 0 { close(descriptor) }
            return
        }
        let watch = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: .global())
        watch.setEventHandler { [self] in
            // The events themselves do not matter (a rename and a write look alike to us):
            // drain them, then read the list as it is now.
            var buffer = [UInt8](repeating: 0, count: 4096)
            while read(descriptor, &buffer, buffer.count) > 0 {}
            let names = configured.union(readList())
            guard names != current else { return }
            current = names
            logger.info("capture exclusions now: \(names.sorted().joined(separator: ", "))")
            changed(names)
        }
        watch.setCancelHandler { close(descriptor) }
        watch.resume()
        self.watch = watch
    }
}
