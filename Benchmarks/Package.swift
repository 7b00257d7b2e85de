// swift-tools-version: 6.1
import PackageDescription

// Micro-benchmarks of Braid's hot paths, kept apart so that the main package does not depend on package-benchmark.
// Run from this folder: `swift package --disable-sandbox benchmark`.
let package = Package(
    name: "BraidBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        // Named, so that the product reference does not depend on the name of the folder the repository is cloned into.
        .package(name: "Braid", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Digest, positional write path and segment scheduler, through `@_spi(Benchmarks) BenchmarkProbes`.
        .executableTarget(
            name: "BraidBenchmarks",
            dependencies: [
                .product(name: "Braid", package: "Braid"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/BraidBenchmarks",
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
