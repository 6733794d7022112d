import FolioStorage
import FolioTestSupport

/// Every implementation of the file seam the engine or its tests run on, for tests of the
/// seam's contract that each must honour alike.
enum SeamKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case posix
    case memory
    case powerLoss
    /// A ``RecordingFileSystem`` over the real file system.
    case recordingPOSIX
    /// A ``FaultInjectingFileSystem`` (with no fault planned) over a power-loss file system.
    case faultInjectingPowerLoss

    var description: String { rawValue }

    /// A fresh file system of this kind and an empty directory in it; `remove()` deletes
    /// what the test created on disk.
    func make() -> SeamUnderTest {
        switch self {
        case .posix: return SeamUnderTest(onDisk: POSIXFileSystem())
        case .memory: return SeamUnderTest(inMemory: MemoryFileSystem())
        case .powerLoss: return SeamUnderTest(inMemory: PowerLossFileSystem())
        case .recordingPOSIX: return SeamUnderTest(onDisk: RecordingFileSystem(wrapping: POSIXFileSystem()))
        case .faultInjectingPowerLoss:
            return SeamUnderTest(inMemory: FaultInjectingFileSystem(wrapping: PowerLossFileSystem()))
        }
    }
}

/// A file system and a directory to work in.
struct SeamUnderTest {
    let fileSystem: any FileSystem
    let directory: String
    private let temporary: TemporaryDirectory?

    init(onDisk fileSystem: any FileSystem) {
        let temporary = TemporaryDirectory("folio-seam")
        self.fileSystem = fileSystem
        self.directory = temporary.path
        self.temporary = temporary
    }

    init(inMemory fileSystem: any FileSystem) {
        try! fileSystem.createDirectory("/seam")
        self.fileSystem = fileSystem
        self.directory = "/seam"
        self.temporary = nil
    }

    func child(_ name: String) -> String { StoragePath.join(directory, name) }

    func remove() { temporary?.remove() }
}
