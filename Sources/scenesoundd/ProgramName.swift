/// The names this binary answers to. The Debian packages install scenesoundd once and make
/// `scenesound` and the capture guard links to it: the Swift runtime and Foundation, linked in
/// statically, are most of each program's size, and three copies of them tripled the package
/// (docs/PACKAGING.md). A build from source installs the same way; `swift build` still makes
/// three programs, which run the same code.
enum ProgramName: Equatable {
    case daemon, commandLine, captureGuard

    init(invokedAs path: String) {
        switch path.split(separator: "/").last.map(String.init) ?? path {
        case "scenesound": self = .commandLine
        case "scenesound-capture-guard": self = .captureGuard
        default: self = .daemon
        }
    }
}
