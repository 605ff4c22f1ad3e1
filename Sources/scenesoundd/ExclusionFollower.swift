import Foundation
import Logging
import SceneSoundCaptureSettings

/// The apps `--capture-apps` leaves alone: `capture_exclude` from the flags or config, plus the
/// list `scenesound apps exclude` keeps, re-read once a second when the file changes.
final class ExclusionFollower: @unchecked Sendable {
    private let configured: Set<String>
    private let path: String?
    private let logger: Logger
    private var lastModified: Date?
    private var timer: DispatchSourceTimer?
    private(set) var current: Set<String>

    init(configured: [String], logger: Logger, path: String? = CaptureExclusionList.defaultPath()) {
        self.configured = Set(configured)
        self.path = path
        self.logger = logger
        current = self.configured
        current = self.configured.union(readList())
    }

    private func modificationDate() -> Date? {
        guard let path else { return nil }
        return (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    private func readList() -> Set<String> {
        lastModified = modificationDate()
        guard let path else { return [] }
        do {
            return Set(try CaptureExclusionList.load(path: path).names)
        } catch {
            logger.warning("capture exclusions: cannot read \(path): \(error.localizedDescription)")
            return []
        }
    }

    /// Calls `changed` (on a background queue) with the whole set whenever the file changes.
    func follow(_ changed: @escaping @Sendable (Set<String>) -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [self] in
            guard modificationDate() != lastModified else { return }
            let names = configured.union(readList())
            guard names != current else { return }
            current = names
            logger.info("capture exclusions now: \(names.sorted().joined(separator: ", "))")
            changed(names)
        }
        timer.resume()
        self.timer = timer
    }
}
