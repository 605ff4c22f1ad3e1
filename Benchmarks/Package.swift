// swift-tools-version: 6.1
import PackageDescription

// SceneSound's benchmarks (package-benchmark), kept out of the main package so that its
// build and tests never pull in the benchmark tooling. Run with `make bench`.
let package = Package(
    name: "SceneSoundBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        // Named, so that the products resolve whatever the clone's folder is called.
        .package(name: "SceneSound", path: ".."),
        // MallocInterposer: counts every malloc, so the render benchmarks can prove that the
        // render thread never allocates.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The engine's render block (Engine.render and SpatialRenderer.render) with N moving sources.
        .executableTarget(
            name: "RenderBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SceneSoundEngine", package: "SceneSound"),
                .product(name: "SceneSoundDSP", package: "SceneSound"),
                .product(name: "SceneSoundSOFA", package: "SceneSound"),
                .product(name: "SceneSoundPlatform", package: "SceneSound"),
            ],
            path: "Benchmarks/RenderBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The DSP kernels one at a time: FIR convolution, fractional delay, crossfade, a voice,
        // the ambisonic bus's encode / rotate / decode (portable and AVX2 builds).
        .executableTarget(
            name: "KernelBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SceneSoundDSP", package: "SceneSound"),
                .product(name: "SceneSoundEngine", package: "SceneSound"),
                .product(name: "SceneSoundSOFA", package: "SceneSound"),
            ],
            path: "Benchmarks/KernelBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
