import Foundation

/// One updating line on stderr while `play` runs — only when stderr is a terminal, so that
/// scripts and logs never see it. Elapsed time is wall-clock time since the first write,
/// never ahead of what has been sent.
final class PlaybackProgress: @unchecked Sendable {
    private let totalSeconds: Double?
    private let lock = NSLock()
    private var startTime: Date?
    private var sentSeconds = 0.0
    private var timer: Thread?
    private var running = false

    static var isEnabled: Bool { isatty(STDERR_FILENO) != 0 }

    init(totalSeconds: Double?) {
        self.totalSeconds = totalSeconds
    }

    /// Starts the line (no-op unless stderr is a terminal).
    func start() {
        guard Self.isEnabled else { return }
        lock.lock()
        startTime = Date()
        running = true
        lock.unlock()
        let thread = Thread { [self] in
            while isRunning {
                draw()
                Thread.sleep(forTimeInterval: 0.25)
            }
        }
        timer = thread
        thread.start()
    }

    func sent(seconds: Double) {
        lock.lock()
        sentSeconds += seconds
        lock.unlock()
    }

    /// Draws the final state and ends the line.
    func finish(playedEverything: Bool) {
        guard Self.isEnabled, isRunning else { return }
        lock.lock()
        running = false
        if playedEverything, let startTime { sentSeconds = max(sentSeconds, Date().timeIntervalSince(startTime)) }
        lock.unlock()
        draw(finalSeconds: playedEverything ? (totalSeconds ?? sentSeconds) : nil)
        FileHandle.standardError.write(Data("\n".utf8))
    }

    private var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return running
    }

    private func draw(finalSeconds: Double? = nil) {
        lock.lock()
        let elapsed = finalSeconds ?? min(startTime.map { Date().timeIntervalSince($0) } ?? 0, sentSeconds)
        lock.unlock()
        var line = "\r\u{1B}[Kplaying " + String(format: "%.1f", elapsed)
        if let totalSeconds { line += String(format: " / %.1f s", totalSeconds) } else { line += " s" }
        FileHandle.standardError.write(Data(line.utf8))
    }
}
