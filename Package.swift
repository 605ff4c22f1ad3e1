// swift-tools-version: 6.1
import PackageDescription

// Dependency arrows point one way: DSP ← Engine ← Server; the C-library shims and the
// modules wrapping them (Media, SOFA, Pulse, X11) plug in at the edges.
let package = Package(
    name: "SceneSound",
    products: [
        .executable(name: "scenesound", targets: ["scenesound"]),
        .executable(name: "scenesoundd", targets: ["scenesoundd"]),
        .executable(name: "scenesound-capture-guard", targets: ["scenesound-capture-guard"]),
        // The Swift client, for other packages: no unsafe build settings anywhere in it.
        .library(name: "SceneSoundClient", targets: ["SceneSoundClient"]),
        // For the nested Benchmarks package only, which depends on this one by path (SwiftPM
        // accepts unsafe flags from path dependencies, not from remote ones): the render
        // modules are built with the flags below, so no remote package could use them.
        .library(name: "SceneSoundDSP", targets: ["SceneSoundDSP"]),
        .library(name: "SceneSoundEngine", targets: ["SceneSoundEngine"]),
        .library(name: "SceneSoundSOFA", targets: ["SceneSoundSOFA"]),
        .library(name: "SceneSoundPlatform", targets: ["SceneSoundPlatform"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // `make docs`: the Swift client's API documentation (DocC).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // System libraries (Debian -dev packages, installed by scripts/deps).
        .systemLibrary(name: "CMySofa", pkgConfig: "libmysofa"),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile"),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr"),
        .systemLibrary(name: "CPulse", pkgConfig: "libpulse"),
        .systemLibrary(name: "CPipeWire", pkgConfig: "libpipewire-0.3"),
        .systemLibrary(name: "CXCB", pkgConfig: "xcb"),
        // OSC head poses: liblo's message parser.
        .systemLibrary(name: "CLiblo", pkgConfig: "liblo"),
        // sd-bus (libsystemd): the session bus, for the KWin and GNOME Shell window backends.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd"),
        // cpuid: which render kernels this CPU runs.
        .systemLibrary(name: "CCPUFeatures"),

        // Threads, clocks, waits and reconnect backoff: the thin POSIX layer the other modules
        // share (`package` access; no Foundation, since the C library links only the stdlib).
        .target(name: "SceneSoundPlatform"),
        // Pure-Swift signal processing: no Foundation, no I/O.
        .target(name: "SceneSoundDSP", swiftSettings: dspSettings),
        // Audio files (libsndfile) and sample-rate conversion (libsoxr).
        .target(name: "SceneSoundMedia", dependencies: ["CSndFile", "CSoxr"]),
        // SOFA (AES69) HRTF sets through libmysofa, prepared by the DSP module, cached on disk.
        .target(name: "SceneSoundSOFA", dependencies: ["CMySofa", "SceneSoundDSP", "SceneSoundMedia"]),
        // The DSP module's hot kernels built again for AVX2 + FMA, used when the CPU has them.
        .target(name: "SceneSoundDSPAVX2", dependencies: ["SceneSoundDSP"], swiftSettings: avx2Settings),
        // The same for AVX-512 (Skylake-server's set: F, CD, BW, DQ, VL).
        .target(name: "SceneSoundDSPAVX512", dependencies: ["SceneSoundDSP"], swiftSettings: avx512Settings),
        // Voices, anchors, head pose and the render loop; device-independent.
        .target(name: "SceneSoundEngine", dependencies: ["SceneSoundDSP", "SceneSoundDSPAVX2", "SceneSoundDSPAVX512", "CCPUFeatures",
                                                         "SceneSoundPlatform"],
                swiftSettings: dspSettings),
        .target(name: "SceneSoundPulse", dependencies: ["CPulse", "SceneSoundPlatform"]),
        .target(name: "SceneSoundProtocol"),
        // The status document as JSON text, one encoder and decoder for the server, the CLI and
        // the tests: apart from SceneSoundProtocol, which stays free of Foundation.
        .target(name: "SceneSoundStatusJSON", dependencies: ["SceneSoundProtocol"]),
        // SceneSound as one real-time node of the PipeWire graph (issue 28), in C (libpipewire's
        // loop and filter API are macros): a pw_filter with 8 outputs and a fixed input port pool,
        // its own links, reconnection, park sink and metadata targets, and one view of the
        // registry. The daemon's PipeWire output (PipeWireOutput) is this node.
        // One view of PipeWire's registry (nodes, ports, links), kept by the graph node and the capture's recordings.
        .target(name: "CPipeWireRegistry", dependencies: ["CPipeWire"]),
        .target(name: "CPipeWireGraph", dependencies: ["CPipeWire", "CPipeWireRegistry"]),
        .target(name: "SceneSoundPipeWire", dependencies: ["CPipeWireGraph", "SceneSoundPlatform"]),
        // Output backends: pipewire, pulse, wav, null. They own the thread that drives the engine.
        .target(name: "SceneSoundOutputs", dependencies: ["SceneSoundEngine", "SceneSoundMedia", "SceneSoundPulse", "SceneSoundPipeWire",
                                                          "SceneSoundPlatform"]),
        // The daemon's heart: the Unix socket (SwiftNIO), sessions, streams, scenes, status.
        .target(name: "SceneSoundServer", dependencies: [
            "SceneSoundEngine", "SceneSoundProtocol", "SceneSoundStatusJSON", "SceneSoundMedia", "SceneSoundOutputs", "SceneSoundWindows", "SceneSoundPlatform",
            "SceneSoundPulse",  // OutputDevice, the sink as libpulse describes it
            "CLiblo",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "scenesoundd", dependencies: [
            "SceneSoundServer", "SceneSoundCapture", "SceneSoundCaptureGraph", "SceneSoundCaptureSettings", "scenesound-capture-guard", "SceneSoundOutputs", "SceneSoundSOFA", "SceneSoundEngine", "SceneSoundDSP",
            "SceneSoundWindows", "SceneSoundX11", "SceneSoundWayland", "SceneSoundDBus",
            "SceneSoundPipeWire", "SceneSoundProtocol", "SceneSoundCLI",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "TOMLKit", package: "TOMLKit"),
        ]),
        // Sources/SceneSoundClient/*.swift is the protocol client the C library is built from
        // (standard library only); Idioms/ adds the Apple-style API, which decodes files and
        // finds theme sounds.
        .target(name: "SceneSoundClient", dependencies: ["SceneSoundProtocol", "SceneSoundPlatform", "SceneSoundMedia", "SceneSoundThemes"]),
        // freedesktop Sound Theme and Sound Naming lookup (pure Swift, Foundation for files).
        .target(name: "SceneSoundThemes"),
        // libscenesound.so.0, the C API over the client (built by packaging/build-lib.sh, `make lib`).
        .target(name: "SceneSoundC", dependencies: ["SceneSoundClient", "SceneSoundProtocol", "SceneSoundPlatform"]),
        // The one window model (snapshots, monitors, pixels to metres) and the `WindowSource`
        // interface every window backend implements; knows no X11 and no compositor.
        .target(name: "SceneSoundWindows", dependencies: ["SceneSoundDSP", "SceneSoundProtocol", "SceneSoundPlatform"]),
        // The X11 window source, through XCB.
        .target(name: "SceneSoundX11", dependencies: ["CXCB", "SceneSoundWindows", "SceneSoundPlatform"]),
        // The session bus over sd-bus: calls, signal matches, exported objects that answer one
        // peer only, name owners; one thread of its own.
        .target(name: "SceneSoundDBus", dependencies: ["CSystemd", "SceneSoundPlatform"]),
        // Wayland compositors' window sources, each over the compositor's own IPC (sway, Hyprland;
        // KWin through a script of ours reporting over D-Bus).
        .target(name: "SceneSoundWayland", dependencies: ["SceneSoundWindows", "SceneSoundProtocol", "SceneSoundPlatform", "SceneSoundDBus",
                                                           "CWaylandOutputs"]),
        // The outputs' physical sizes over a Wayland connection of the daemon's own (libwayland's
        // listeners are C function-pointer structs: in C).
        .target(name: "CWaylandOutputs", linkerSettings: [.linkedLibrary("wayland-client")]),
        // examples/swift: two XCB windows, a looping tone anchored to each.
        .executableTarget(name: "scenesound-two-windows", dependencies: ["CXCB", "SceneSoundClient", "SceneSoundProtocol"],
                          path: "examples/swift"),
        // Takes over other apps' playback streams (libpulse: PulseAudio and pipewire-pulse), and
        // the guard process that undoes it when the daemon dies or hangs.
        .target(name: "SceneSoundCapture", dependencies: ["CPulse", "SceneSoundPulse", "SceneSoundPlatform"]),
        // The capture on PipeWire's graph: apps linked into a node's input sets (the capture
        // itself never imports the node; the daemon and the capture's tests wire them here).
        .target(name: "SceneSoundCaptureGraph", dependencies: ["SceneSoundCapture", "SceneSoundPipeWire"]),
        // The apps the user excluded from the capture: a file the CLI writes and the daemon follows.
        .target(name: "SceneSoundCaptureSettings"),
        .executableTarget(name: "scenesound-capture-guard", dependencies: ["SceneSoundCapture", "SceneSoundCaptureGraph"]),
        // `scenesound view`'s web server: the page, its WebSocket, the token, Host and Origin
        // rules, and the model the page draws from the status document (NIO's HTTP/1 and
        // WebSocket codecs). Knows no client: the CLI carries out what the page asks.
        .target(name: "SceneSoundView", dependencies: [
            "SceneSoundProtocol",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
        ], resources: [.embedInCode("Page/index.html"), .embedInCode("Page/view.css"), .embedInCode("Page/view.js")]),
        // The `scenesound` command line's verbs, as a library: the `scenesound` program runs it,
        // and so does scenesoundd when called by that name (one binary in the packages).
        .target(name: "SceneSoundCLI", dependencies: [
            "SceneSoundEngine", "SceneSoundSOFA", "SceneSoundMedia", "SceneSoundClient", "SceneSoundThemes", "SceneSoundPlatform",
            "SceneSoundCaptureSettings", "SceneSoundStatusJSON", "SceneSoundProtocol", "SceneSoundView",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "scenesound", dependencies: ["SceneSoundCLI"]),

        .testTarget(name: "SceneSoundPlatformTests", dependencies: ["SceneSoundPlatform"]),
        .testTarget(name: "SceneSoundDSPTests", dependencies: ["SceneSoundDSP", "SceneSoundKernelConformance"]),
        .testTarget(name: "SceneSoundDSPAVX2Tests", dependencies: ["SceneSoundDSPAVX2", "SceneSoundDSP", "CCPUFeatures",
                                                                  "SceneSoundKernelConformance"]),
        .testTarget(name: "SceneSoundDSPAVX512Tests", dependencies: ["SceneSoundDSPAVX512", "SceneSoundDSP", "CCPUFeatures",
                                                                    "SceneSoundKernelConformance"]),
        // The render kernels' conformance checks, run on each kernel table by the three suites above.
        .target(name: "SceneSoundKernelConformance", dependencies: ["SceneSoundDSP"], path: "Tests/SceneSoundKernelConformance"),
        .testTarget(name: "SceneSoundMediaTests", dependencies: ["SceneSoundMedia"]),
        .testTarget(name: "SceneSoundSOFATests", dependencies: ["SceneSoundSOFA"]),
        .testTarget(name: "SceneSoundEngineTests", dependencies: ["SceneSoundEngine", "SceneSoundSOFA", "SceneSoundMedia", "CCPUFeatures", "SceneSoundTestSupport"]),
        // Runs the real binaries (built as dependencies) as a user would.
        .testTarget(name: "IntegrationTests", dependencies: ["scenesound", "SceneSoundDSP", "SceneSoundMedia", "SceneSoundSOFA"]),
        .testTarget(name: "SceneSoundPulseTests", dependencies: ["SceneSoundPulse", "SceneSoundDSP", "SceneSoundTestSupport"]),
        .testTarget(name: "SceneSoundPipeWireTests", dependencies: ["SceneSoundPipeWire", "SceneSoundTestSupport", "SceneSoundDSP",
                                                                   "scenesound-graph-test-host"]),
        // A process holding the graph node, parking apps, that the graph node tests SIGKILL.
        .executableTarget(name: "scenesound-graph-test-host", dependencies: ["SceneSoundPipeWire"], path: "Tests/GraphTestHost"),
        .testTarget(name: "SceneSoundProtocolTests", dependencies: ["SceneSoundProtocol"]),
        .testTarget(name: "SceneSoundServerTests", dependencies: [
            "scenesoundd", "scenesound", "scenesound-two-windows", "scenesound-capture-guard", "SceneSoundServer", "SceneSoundTestSupport", "SceneSoundProtocol", "SceneSoundDSP", "SceneSoundMedia",
            // The in-process protocol tests: sessions on EmbeddedChannels over a real engine.
            "SceneSoundEngine", "SceneSoundSOFA", "SceneSoundOutputs", "SceneSoundWindows", "SceneSoundX11",
            // The KWin tests call the daemon's D-Bus object as a stranger would.
            "SceneSoundDBus",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
        ]),
        .testTarget(name: "SceneSoundClientTests", dependencies: ["SceneSoundClient", "SceneSoundTestSupport", "SceneSoundStatusJSON",
                                                                 "SceneSoundMedia", "scenesoundd"],
                    exclude: ["Consumer"]),
        .testTarget(name: "SceneSoundThemesTests", dependencies: ["SceneSoundThemes"]),
        // Builds libscenesound into a temporary prefix and runs C, C++ and Python clients against a live daemon.
        .testTarget(name: "CLibraryTests", dependencies: ["scenesoundd", "scenesound", "SceneSoundC", "SceneSoundTestSupport", "SceneSoundDSP"],
                    exclude: ["Consumers"]),
        // Real X servers, window managers and windows for tests, started and stopped by PID.
        // Optimised as the render kernels are: it reads minutes of recordings (ToneLevels) and
        // writes long test files, which unoptimised took a minute of each capture suite.
        .target(name: "SceneSoundTestSupport", dependencies: ["SceneSoundProtocol", "SceneSoundStatusJSON"], path: "Tests/SceneSoundTestSupport",
                swiftSettings: dspSettings),
        .testTarget(name: "SceneSoundWindowsTests", dependencies: ["SceneSoundWindows", "SceneSoundProtocol", "SceneSoundDSP", "SceneSoundTestSupport"]),
        .testTarget(name: "SceneSoundWaylandTests", dependencies: ["SceneSoundWayland", "SceneSoundWindows", "SceneSoundProtocol", "SceneSoundTestSupport"]),
        .testTarget(name: "SceneSoundDBusTests", dependencies: ["SceneSoundDBus", "SceneSoundTestSupport"]),
        .testTarget(name: "SceneSoundX11Tests", dependencies: ["SceneSoundX11", "SceneSoundWindows", "SceneSoundTestSupport"]),
        // The view's rules, and the real page in a headless Chromium against a real daemon.
        .testTarget(name: "SceneSoundViewTests", dependencies: ["SceneSoundView", "SceneSoundProtocol", "SceneSoundStatusJSON",
                                                               "SceneSoundTestSupport", "scenesound", "scenesoundd"],
                    exclude: ["browser_scenario.py"]),
        .testTarget(name: "SceneSoundCaptureSettingsTests", dependencies: ["SceneSoundCaptureSettings"]),
        // A process running the capture that the capture tests kill, stop and hang.
        .executableTarget(name: "scenesound-capture-test-host", dependencies: ["SceneSoundCapture", "SceneSoundCaptureGraph", "SceneSoundPipeWire"],
                          path: "Tests/CaptureTestHost"),
        // The capture on PipeWire's graph: apps' ports linked into the daemon's node, against a real PipeWire.
        .testTarget(name: "SceneSoundCaptureGraphTests", dependencies: [
            "SceneSoundCaptureGraph", "SceneSoundCapture", "SceneSoundTestSupport", "scenesoundd", "scenesound",
        ]),
        .testTarget(name: "SceneSoundCaptureTests", dependencies: [
            "SceneSoundCapture", "SceneSoundCaptureGraph", "SceneSoundPipeWire", "SceneSoundProtocol", "SceneSoundPulse", "SceneSoundTestSupport", "scenesound-capture-guard",
            "scenesound-capture-test-host", "scenesoundd", "scenesound", "SceneSoundDSP", "SceneSoundSOFA",
        ]),
    ]
)

// The render kernels are optimised even in debug builds: the tests render seconds of
// audio, and an unoptimised FIR loop is fifty times slower. Run-time exclusivity checks are
// turned off property by property (`@exclusivity(unchecked)`) on the render thread's own
// state, which only that thread touches, and stay on everywhere else.
var dspSettings: [SwiftSetting] { [.unsafeFlags(["-O"])] }

// Haswell's instruction set: AVX2 and FMA (x86-64-v3). Only SceneSoundDSPAVX2 gets it; the
// engine runs that code only after cpuid says the CPU has it.
var avx2Settings: [SwiftSetting] {
    #if arch(x86_64)
    return [.unsafeFlags(["-O", "-target-cpu", "haswell"])]
    #else
    return dspSettings
    #endif
}

// Skylake-server's instruction set: AVX-512 F, CD, BW, DQ and VL (x86-64-v4), with AVX2 and
// FMA. Only SceneSoundDSPAVX512 gets it; the engine runs that code only after cpuid says the
// CPU has it and the OS saves the registers.
var avx512Settings: [SwiftSetting] {
    #if arch(x86_64)
    return [.unsafeFlags(["-O", "-target-cpu", "skylake-avx512"])]
    #else
    return dspSettings
    #endif
}
