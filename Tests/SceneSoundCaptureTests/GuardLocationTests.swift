import Foundation
import SceneSoundCapture
import Testing

/// Where the daemon finds its guard: beside itself in a build tree, in `../libexec/scenesound/`
/// of an installed prefix (the packages' layout), and nowhere else.
struct GuardLocationTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("guard-location-\(UUID().uuidString)").path

    func makeExecutable(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: path, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755]))
    }

    @Test func foundBesideTheDaemonFirstThenInLibexec() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let daemon = root + "/usr/bin/scenesoundd"
        try makeExecutable(daemon)
        #expect(AppCapture.Configuration.guardExecutable(forDaemonAt: daemon) == nil)
        try makeExecutable(root + "/usr/libexec/scenesound/scenesound-capture-guard")
        #expect(AppCapture.Configuration.guardExecutable(forDaemonAt: daemon) == root + "/usr/libexec/scenesound/scenesound-capture-guard")
        try makeExecutable(root + "/usr/bin/scenesound-capture-guard")
        #expect(AppCapture.Configuration.guardExecutable(forDaemonAt: daemon) == root + "/usr/bin/scenesound-capture-guard")
    }

    @Test func aGuardThatIsNotExecutableIsNotTaken() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let daemon = root + "/bin/scenesoundd"
        try makeExecutable(daemon)
        try FileManager.default.createDirectory(atPath: root + "/libexec/scenesound", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: root + "/libexec/scenesound/scenesound-capture-guard", contents: Data()))
        #expect(AppCapture.Configuration.guardExecutable(forDaemonAt: daemon) == nil)
    }
}
