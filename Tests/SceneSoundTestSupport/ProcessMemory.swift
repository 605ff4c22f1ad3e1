import Foundation

/// A process's memory as the kernel counts it (/proc/PID/status), in kB; 0 when unreadable.
public enum ProcessMemory {
    /// `VmRSS`: everything resident, mapped libraries' pages and shared buffers included.
    public static let resident = "VmRSS"
    /// `RssAnon`: the process's own memory (heap and stacks), which is what a leak grows.
    public static let own = "RssAnon"

    public static func kilobytes(_ pid: pid_t, _ field: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}
