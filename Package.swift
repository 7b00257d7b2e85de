// swift-tools-version: 6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Braid",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Braid", targets: ["Braid"]),
        .library(name: "BraidBench", targets: ["BraidBench"]),
        .executable(name: "braid", targets: ["braid"]),
        .executable(name: "braid-test-server", targets: ["braid-test-server"]),
        .executable(name: "braid-embed-example", targets: ["braid-embed-example"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // C faces of the system libraries: libcurl (typed setopt wrappers), OpenSSL's EVP digests and libxml2.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        // Linux I/O calls Swift's Glibc module leaves out (sync_file_range, renameat2, fallocate's hole punching).
        .target(name: "CLinuxIO"),
        // libxml2's pull reader for Metalink and S3 listings (FoundationXML would bring all of Foundation and ICU),
        // and libarchive's streaming reader, for unpacking an archive while it downloads (--extract): loaded when a
        // download first needs them rather than at every start. `libxml2` links to /usr/include/libxml2.
        .target(name: "COnDemand", cSettings: [.headerSearchPath("libxml2")]),

        // The engine: planning, transfer, on-disk state and verification.
        .target(
            name: "Braid",
            dependencies: [
                "CCurl",
                "CLinuxIO",
                "COnDemand",
                "COpenSSL",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // `braid bench`: the run schedule, the measured runs, statistics, recommendation, table/JSON/CSV/SVG.
        .target(
            name: "BraidBench",
            dependencies: ["Braid"],
            swiftSettings: strictSettings
        ),

        // JSON as the daemon reads and answers it and `braid --json` writes it: the value, its writer (escaping
        // what a terminal would not show as itself) and its reader (Foundation's JSONDecoder, with a depth limit).
        .target(
            name: "BraidJSON",
            dependencies: ["Braid"],
            swiftSettings: strictSettings
        ),

        // `braid daemon`: aria2's JSON-RPC over HTTP and WebSocket (swift-nio), the session file, and the page,
        // driving downloads through the library's DownloadManager.
        .target(
            name: "BraidDaemon",
            dependencies: [
                "Braid",
                "BraidJSON",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.embedInCode("Page/page.html")],
            swiftSettings: strictSettings
        ),

        // The command line: argument parsing and printing over the libraries.
        .executableTarget(
            name: "braid",
            dependencies: [
                "Braid",
                "BraidBench",
                "BraidDaemon",
                "BraidJSON",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // An app embedding the library through its public API only: download, pause, resume, verify.
        .executableTarget(
            name: "braid-embed-example",
            dependencies: ["Braid"],
            path: "Examples/braid-embed-example",
            swiftSettings: strictSettings
        ),

        // A deterministic, fault-injecting HTTP server for tests and manual runs.
        .target(name: "BraidTestServer", dependencies: ["COpenSSL"], swiftSettings: strictSettings),
        // Test plumbing shared by the test suites and benchmarks: a real nginx on a free port, child processes.
        .target(name: "BraidTestSupport", swiftSettings: strictSettings),
        .executableTarget(
            name: "braid-test-server",
            dependencies: ["BraidTestServer"],
            swiftSettings: strictSettings
        ),

        .testTarget(
            name: "BraidTests",
            dependencies: ["Braid", "BraidTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "BraidDaemonTests",
            dependencies: [
                "BraidDaemon", "BraidJSON", "Braid", "BraidTestServer", "BraidTestSupport",
                // The server's tests talk to it through real NIO clients (WebSocket, raw TCP).
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "BraidJSONTests",
            dependencies: ["BraidJSON"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "BraidBenchTests",
            dependencies: ["BraidBench", "Braid"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "BraidFixtureTests",
            dependencies: ["BraidTestServer", "BraidTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "BraidIntegrationTests",
            dependencies: ["Braid", "BraidBench", "BraidTestServer", "BraidTestSupport"],
            swiftSettings: strictSettings
        ),
    ]
)
