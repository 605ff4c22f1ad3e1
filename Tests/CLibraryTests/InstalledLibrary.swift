import Foundation

/// libscenesound built and installed into a temporary prefix with `make install` (once per
/// test run: the library's optimised build is the slow part; built where `make lib` builds it,
/// so that `make deb` after `make test` finds it up to date), and the C and C++ consumers
/// compiled strictly against the installed tree through pkg-config.
struct InstalledLibrary: Sendable {
    let prefix: String
    let programs: String

    /// The environment a consumer needs: the library's directory and the pkg-config path.
    var environment: [String: String] {
        ["LD_LIBRARY_PATH": prefix + "/lib", "PKG_CONFIG_PATH": prefix + "/lib/pkgconfig"]
    }

    var library: String { prefix + "/lib/libscenesound.so.0" }

    func program(_ name: String) -> String { programs + "/" + name }

    static let shared: Result<InstalledLibrary, InstallFailure> = Result { () throws(InstallFailure) in try InstalledLibrary() }

    private init() throws(InstallFailure) {
        let root = Paths.temporaryDirectory("clib")
        prefix = root + "/prefix"
        programs = root + "/programs"
        try Self.check("make install", try? run("make", ["--no-print-directory", "install", "PREFIX=" + prefix,
                                                         "BINARIES=" + Paths.binaries],
                                                directory: Paths.repository))
        try? FileManager.default.createDirectory(atPath: programs, withIntermediateDirectories: true)
        let pkgConfig = try Self.check("pkg-config", try? run("pkg-config", ["--cflags", "--libs", "scenesound"],
                                                              environment: environment))
        let flags = pkgConfig.output.split(whereSeparator: \.isWhitespace).map(String.init)
        let strictC = ["-std=c99", "-Wall", "-Wextra", "-Werror"]
        let examples = Paths.repository + "/examples/c/"
        let consumers = Paths.repository + "/Tests/CLibraryTests/Consumers/"
        let builds: [(compiler: String, source: String, name: String, options: [String])] = [
            ("cc", examples + "alert-on-window.c", "alert-on-window", strictC + ["-lm"]),
            ("cc", examples + "synth.c", "synth", strictC + ["-lm", "-lpthread"]),
            ("cc", consumers + "misuse.c", "misuse", strictC),
            ("cc", consumers + "surround-map.c", "surround-map", strictC),
            ("c++", consumers + "consumer.cpp", "consumer", ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic"]),
        ]
        for build in builds {
            // pkg-config's flags after the source, so -l comes after the objects that need it.
            try Self.check("\(build.compiler) \(build.name)",
                           try? run(build.compiler, [build.source, "-o", programs + "/" + build.name] + flags + build.options))
        }
    }

    struct InstallFailure: Error, CustomStringConvertible {
        let description: String
    }

    @discardableResult
    private static func check(_ step: String, _ result: ProcessResult?) throws(InstallFailure) -> ProcessResult {
        guard let result, result.status == 0 else {
            throw InstallFailure(description: "\(step) failed: \(result?.text ?? "could not start")")
        }
        return result
    }
}
