// swift-tools-version:6.1
// Folio's benchmark harness: a separate package, so that the root package keeps no
// dependencies. It depends on the root package by path and on GRDB.swift for comparison.
import PackageDescription

let package = Package(
    name: "FolioBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `name:` because a path dependency's identity is otherwise its directory's name,
        // which is whatever the clone is called ("folio", "bench", ...).
        .package(name: "Folio", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // Instructions per decoded record under callgrind (Sources/decode-probe/main.swift).
        .executableTarget(
            name: "decode-probe",
            dependencies: [
                .product(name: "Folio", package: "Folio"), .product(name: "FolioStorage", package: "Folio"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        // Observe case 3 alone, profiled from the commit to the last delivery
        // (Sources/live-probe/main.swift).
        .executableTarget(name: "live-probe", dependencies: [.product(name: "Folio", package: "Folio")]),
        // The longest commit pause while an automatic compaction of a ~100 MiB store runs
        // (Sources/compaction-pause/main.swift).
        .executableTarget(
            name: "compaction-pause", dependencies: [.product(name: "FolioStorage", package: "Folio")]),
        .executableTarget(
            name: "folio-bench",
            dependencies: [
                .product(name: "Folio", package: "Folio"),
                .product(name: "FolioStorage", package: "Folio"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: [
                // Async functions run in their caller's isolation unless marked
                // @concurrent: the harness runs in one task, off the main actor (main.swift).
                .enableUpcomingFeature("NonisolatedNonsendingByDefault")
            ]),
    ],
    swiftLanguageModes: [.v6]
)
