import Foundation

/// The built executables (the test bundle sits next to them).
public enum BuiltProducts {
    public static var directory: URL { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent() }
    public static var guardExecutable: String { directory.appendingPathComponent("scenesound-capture-guard").path }
    public static var testHost: String { directory.appendingPathComponent("scenesound-capture-test-host").path }
}

/// A fresh path in the temporary directory (the test run's own, `scripts/run-tests`) ending in `name`.
public func temporaryFile(_ name: String) -> URL {
    URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("test-\(getpid())-\(UInt32.random(in: 0 ... .max))-\(name)")
}
