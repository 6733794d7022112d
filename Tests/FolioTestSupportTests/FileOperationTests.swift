import FolioStorage
import FolioTestSupport
import Testing

@Suite struct FileOperationTests {
    @Test func descriptionsAreCompactAndComplete() {
        #expect(
            FileOperation.write(path: "snapshots/1.folio", offset: 4096, count: 8192).description
                == "write snapshots/1.folio @4096 +8192")
        #expect(FileOperation.read(path: "root", offset: 0, count: 64).description == "read root @0 +64")
        #expect(FileOperation.truncate(path: "data", length: 128).description == "truncate data to 128")
        #expect(FileOperation.open(path: "root.tmp", mode: .truncate).description == "open root.tmp (truncate)")
        #expect(FileOperation.rename(from: "root.tmp", to: "root").description == "rename root.tmp→root")
        #expect(FileOperation.syncDirectory(path: ".").description == "syncdir .")
        #expect(FileOperation.createDirectory(path: "snapshots").description == "mkdir snapshots")
    }

    @Test func summariesDropArguments() {
        #expect(FileOperation.write(path: "snapshot", offset: 4096, count: 8192).summary == "write snapshot")
        #expect(FileOperation.open(path: "root", mode: .readOnly).summary == "open root")
        #expect(FileOperation.truncate(path: "data", length: 5).summary == "truncate data")
    }

    @Test func pathsBecomeRelativeToARoot() {
        let operation = FileOperation.rename(from: "/s/root.tmp", to: "/s/root")
        #expect(operation.relative(to: "/s") == .rename(from: "root.tmp", to: "root"))
        #expect(operation.relative(to: "/s/") == .rename(from: "root.tmp", to: "root"))
        #expect(FileOperation.syncDirectory(path: "/s").relative(to: "/s") == .syncDirectory(path: "."))
        #expect(FileOperation.sync(path: "/s/a/b").relative(to: "/s") == .sync(path: "a/b"))
        // A sibling that merely shares the prefix is not inside the root.
        #expect(FileOperation.sync(path: "/store2/x").relative(to: "/store") == .sync(path: "/store2/x"))
        #expect(FileOperation.sync(path: "/x").relative(to: "/") == .sync(path: "x"))
    }

    @Test func mutatingCallsAreTheOnesPersistentFaultsBlock() {
        #expect(FileOperation.open(path: "p", mode: .create).isMutating)
        #expect(FileOperation.open(path: "p", mode: .truncate).isMutating)
        #expect(!FileOperation.open(path: "p", mode: .readWrite).isMutating)
        #expect(!FileOperation.open(path: "p", mode: .readOnly).isMutating)
        #expect(FileOperation.lock(path: "p").isMutating)
        #expect(!FileOperation.read(path: "p", offset: 0, count: 1).isMutating)
        #expect(!FileOperation.list(path: "p").isMutating)
        #expect(FileOperation.Kind.allCases.filter { !$0.canFail } == [.close, .itemKind, .unlock])
    }
}
