import Foundation
@testable import SceneSoundCapture
import SceneSoundTestSupport
import Testing

/// The daemon's end of the link to its guard process.
struct CaptureGuardLinkTests {
    /// A guard still sweeping when the link closes is reaped as it exits: no zombie stays
    /// behind a long-running daemon (before, one stayed for each capture restart whose guard
    /// had not yet exited at the close).
    @Test func aGuardStillRunningAtCloseIsReapedWhenItExits() throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("slow-guard-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: script, contents: Data("#!/bin/sh\nsleep 0.3\n".utf8),
                                               attributes: [.posixPermissions: 0o755]))
        defer { try? FileManager.default.removeItem(atPath: script) }
        let link = try CaptureGuardLink.spawn(executable: script, session: "test", serverAddress: nil, hangSeconds: 1)
        let proc = "/proc/\(link.pid)"
        link.close()
        #expect(FileManager.default.fileExists(atPath: proc), "the guard still runs as the link closes")
        try waitUntil(timeoutSeconds: 5, "the guard reaped") { !FileManager.default.fileExists(atPath: proc) }
    }
}
