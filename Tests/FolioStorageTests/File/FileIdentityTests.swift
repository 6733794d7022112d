import Testing
import FolioStorage
import FolioTestSupport

/// ``FileOpenMode/createNew`` and ``StorageFile/identity()`` on every implementation of the
/// seam: an exclusive creation refuses a path that is taken, and a handle's identity says
/// whether its path still names the file it opened.
@Suite struct FileIdentityTests {
    @Test(arguments: SeamKind.allCases)
    func createNewRefusesAnExistingPath(_ kind: SeamKind) throws {
        let seam = kind.make()
        defer { seam.remove() }
        let path = seam.child("new")
        let created = try seam.fileSystem.open(path, mode: .createNew)
        try created.write([1, 2, 3], at: 0)
        created.close()
        #expect(throws: StorageError.io(operation: "open", path: path, code: SystemError.exists)) {
            _ = try seam.fileSystem.open(path, mode: .createNew)
        }
        let reopened = try seam.fileSystem.open(path, mode: .readOnly)
        #expect(try reopened.readAll() == [1, 2, 3], "the refused open left the file alone")
        reopened.close()
        let directory = seam.child("directory")
        try seam.fileSystem.createDirectory(directory)
        #expect(throws: StorageError.io(operation: "open", path: directory, code: SystemError.exists)) {
            _ = try seam.fileSystem.open(directory, mode: .createNew)
        }
        #expect(throws: StorageError.self) { _ = try seam.fileSystem.open(seam.child("missing/new"), mode: .createNew) }
    }

    @Test(arguments: SeamKind.allCases)
    func identityIsStableAcrossOpensAndRenames(_ kind: SeamKind) throws {
        let seam = kind.make()
        defer { seam.remove() }
        let path = seam.child("file")
        let writer = try seam.fileSystem.open(path, mode: .create)
        let reader = try seam.fileSystem.open(path, mode: .readOnly)
        defer {
            writer.close()
            reader.close()
        }
        let identity = try writer.identity()
        #expect(try reader.identity() == identity)
        #expect(try seam.fileSystem.identity(of: path) == identity)
        let truncating = try seam.fileSystem.open(path, mode: .truncate)
        #expect(try truncating.identity() == identity, "truncating keeps the file")
        truncating.close()
        let moved = seam.child("moved")
        try seam.fileSystem.rename(path, to: moved)
        #expect(try writer.identity() == identity, "a rename keeps the file")
        #expect(try seam.fileSystem.identity(of: moved) == identity)
    }

    @Test(arguments: SeamKind.allCases)
    func identityChangesWhenThePathIsReplaced(_ kind: SeamKind) throws {
        let seam = kind.make()
        defer { seam.remove() }
        let path = seam.child("file")
        let original = try seam.fileSystem.open(path, mode: .create)
        defer { original.close() }
        let identity = try original.identity()

        // Renamed over.
        let replacement = try seam.fileSystem.open(seam.child("file.tmp"), mode: .createNew)
        defer { replacement.close() }
        try seam.fileSystem.rename(seam.child("file.tmp"), to: path)
        let renamedOver = try seam.fileSystem.identity(of: path)
        #expect(renamedOver != identity)
        #expect(renamedOver == (try replacement.identity()))
        #expect(try original.identity() == identity, "the old handle still has the old file")

        // Removed and created again (the open handles keep both old files alive, so no
        // inode number can be reused meanwhile, as for a caller that holds what it opened).
        try seam.fileSystem.remove(path)
        let recreated = try seam.fileSystem.open(path, mode: .createNew)
        defer { recreated.close() }
        let fresh = try recreated.identity()
        #expect(fresh != identity)
        #expect(fresh != renamedOver)
        #expect(try seam.fileSystem.identity(of: path) == fresh)
    }

    @Test(arguments: SeamKind.allCases)
    func identityOfAClosedHandleThrows(_ kind: SeamKind) throws {
        let seam = kind.make()
        defer { seam.remove() }
        let file = try seam.fileSystem.open(seam.child("file"), mode: .create)
        file.close()
        #expect(throws: StorageError.self) { _ = try file.identity() }
    }
}
