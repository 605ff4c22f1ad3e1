import Foundation
import Glibc
import Logging
import SceneSoundCaptureSettings

/// The user's choices for `--capture-apps`: the apps it leaves alone (`capture_exclude` from the
/// flags or config, plus the list `scenesound apps exclude` keeps) and the apps' spatial modes
/// (`scenesound apps spatial`), re-read whenever either file changes. Told by inotify (their
/// directory is watched: the CLI replaces the files atomically), so nothing polls.
final class CaptureSettingsFollower: @unchecked Sendable {
    struct Settings: Equatable {
        var excluded: Set<String>
        var spatial: CaptureSpatialChoices
    }

    private let configured: Set<String>
    private let exclusionPath: String?
    private let spatialPath: String?
    private let logger: Logger
    private var watch: DispatchSourceRead?
    private(set) var current: Settings

    init(configured: [String], logger: Logger, exclusionPath: String? = CaptureExclusionList.defaultPath(),
         spatialPath: String? = CaptureSpatialChoices.defaultPath()) {
        self.configured = Set(configured)
        self.exclusionPath = exclusionPath
        self.spatialPath = spatialPath
        self.logger = logger
        current = Settings(excluded: self.configured, spatial: CaptureSpatialChoices())
        current = read()
    }

    private func read() -> Settings {
        Settings(excluded: configured.union(load(exclusionPath, "capture exclusions", CaptureExclusionList.load)?.names ?? []),
                 spatial: load(spatialPath, "apps' spatial modes", CaptureSpatialChoices.load) ?? CaptureSpatialChoices())
    }

    private func load<File>(_ path: String?, _ what: String, _ load: (String) throws -> File) -> File? {
        guard let path, FileManager.default.fileExists(atPath: path) else { return nil }
        do { return try load(path) } catch {
            logger.warning("\(what): cannot read \(path): \(error.localizedDescription)")
            return nil
        }
    }

    /// Calls `changed` (on a background queue) with the whole settings whenever a file changes.
    func follow(_ changed: @escaping @Sendable (Settings) -> Void) {
        let directories = Set([exclusionPath, spatialPath].compactMap { $0.map { ($0 as NSString).deletingLastPathComponent } })
        guard !directories.isEmpty else { return }
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        let events = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE)
        for directory in directories {
            // Created if missing, so that there is something to watch before the first choice.
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            guard descriptor >= 0, inotify_add_watch(descriptor, directory, events) >= 0 else {
                logger.warning("capture settings: cannot watch \(directory) (\(String(cString: strerror(errno)))); changes there are seen at the next start")
                if descriptor >= 0 { close(descriptor) }
                return
            }
        }
        let watch = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: .global())
        watch.setEventHandler { [self] in
            // The events themselves do not matter (a rename and a write look alike to us):
            // drain them, then read the files as they are now.
            var buffer = [UInt8](repeating: 0, count: 4096)
            while Glibc.read(descriptor, &buffer, buffer.count) > 0 {}
            let settings = read()
            guard settings != current else { return }
            if settings.excluded != current.excluded {
                logger.info("capture exclusions now: \(settings.excluded.sorted().joined(separator: ", "))")
            }
            if settings.spatial != current.spatial {
                logger.info("apps' spatial modes now: \(settings.spatial.modeByName.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
            }
            current = settings
            changed(settings)
        }
        watch.setCancelHandler { close(descriptor) }
        watch.resume()
        self.watch = watch
    }
}
