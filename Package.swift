// swift-tools-version:6.0
// Folio has no package dependencies: only the Swift toolchain (standard library,
// Foundation, Dispatch, Synchronization, Observation, Glibc/Darwin; SwiftUI on Apple
// platforms, for one property wrapper). Benchmarks/ is a separate package.
import PackageDescription

let package = Package(
    name: "Folio",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Folio", targets: ["Folio"]),
        .library(name: "FolioStorage", targets: ["FolioStorage"]),
        .executable(name: "folio", targets: ["folio"]),
        // Test tool: kill-test workloads and second-process helpers. Not linked into apps.
        .executable(name: "folio-torture", targets: ["folio-torture"]),
    ],
    targets: [
        // The vocabulary the engine and the API share: key components and their byte
        // encoding (Docs/Keys.md), and the storage error they throw. Re-exported by both
        // products, so `import Folio` brings key conformances (`Int: KeyComponent`) and
        // errors and nothing else of the engine.
        .target(name: "FolioKeys"),
        // Folio's JSON coder: Encoder and Decoder over UTF-8 bytes in place, output Foundation
        // reads to equal values (Docs/JSON.md). Re-exported by Folio; no dependency.
        .target(name: "FolioJSON"),
        // The byte-level engine: files, pages, B+tree, commits, recovery, compaction.
        .target(name: "FolioStorage", dependencies: ["FolioKeys"]),
        // What a Swift developer imports: persistences, datastores, formats, indexes,
        // migrations, transactions and observation over Codable values.
        .target(name: "Folio", dependencies: ["FolioKeys", "FolioJSON", "FolioStorage"]),
        // Test-only file systems (recording, fault-injecting, power-loss) and reference models.
        .target(name: "FolioTestSupport", dependencies: ["FolioStorage"]),
        // The worked example of Docs/Guide.md (books and authors), compiled and run by tests
        // and by `folio demo`, so the guide cannot rot. Not a product.
        .target(name: "LibraryExample", dependencies: ["Folio"]),
        .executableTarget(name: "folio", dependencies: ["Folio", "LibraryExample"]),
        // Shares the kill-test workload (TransferWorkload) with the tests through FolioTestSupport.
        .executableTarget(
            name: "folio-torture", dependencies: ["FolioStorage", "Folio", "LibraryExample", "FolioTestSupport"]),
        .testTarget(name: "FolioJSONTests", dependencies: ["FolioJSON", "FolioTestSupport"]),
        .testTarget(name: "FolioStorageTests", dependencies: ["FolioStorage", "FolioTestSupport"]),
        .testTarget(name: "FolioTestSupportTests", dependencies: ["FolioStorage", "FolioTestSupport"]),
        .testTarget(name: "FolioTests", dependencies: ["Folio", "FolioStorage", "FolioTestSupport", "LibraryExample"]),
        // Runs the built `folio` executable as a process (Docs/CLI.md).
        .testTarget(
            name: "FolioCLITests", dependencies: ["FolioTestSupport", "Folio", "FolioStorage", "LibraryExample"]),
    ],
    swiftLanguageModes: [.v6]
)
