import Foundation
import FolioStorage

// Opening a persistence: on disk for writing or for reading only, in memory, again after
// closing, and as a read-only view of an open one.

extension Persistence where Access == ReadWrite {
    /// Opens (creating if needed, with its directory) the store at `path` for reading and
    /// writing. Other processes (an app's extensions, widgets and helpers) may open it for
    /// writing too: their writes take turns, each holding the store's lock only while it
    /// writes, and a write that finds another process's turn in progress waits up to
    /// ``PersistenceOptions/busyTimeout`` for it. Idle, this persistence holds no lock.
    ///
    /// It follows the other processes' commits by itself, as a read-only persistence does
    /// (``Persistence/init(readingFrom:options:)-(String,_)``): reads see them and observers receive
    /// them. Throws if another process is in the middle of a write when it opens (after
    /// waiting up to the busy timeout), or if this process has the store open for writing
    /// already.
    public init(at path: String, options: PersistenceOptions = PersistenceOptions()) throws(FolioError) {
        let store = try FolioError.wrap { () throws(StorageError) in
            try Store.open(at: path, options: options.storeOptions(POSIXFileSystem()))
        }
        do throws(StorageError) {
            try store.startFollowing()
        } catch {
            store.close()
            throw .storage(error)
        }
        self.init(
            core: PersistenceCore(
                store: store, durability: options.durability, recordCache: options.recordCache,
                valueCache: options.valueCache))
    }

    /// Opens the store at `url` (a file URL) for reading and writing.
    public init(at url: URL, options: PersistenceOptions = PersistenceOptions()) throws(FolioError) {
        try self.init(at: url.path, options: options)
    }

    /// A persistence held in memory: the same engine and behaviour as on disk (transactions,
    /// indexes, migrations, observation), for tests and previews. Nothing is kept after the
    /// process ends.
    public static func inMemory(options: PersistenceOptions = PersistenceOptions()) -> Persistence<ReadWrite> {
        let fileSystem = MemoryFileSystem()
        do throws(StorageError) {
            let store = try Store.open(at: "/store", options: options.storeOptions(fileSystem))
            return Persistence(
                core: PersistenceCore(
                    store: store, durability: options.durability, recordCache: options.recordCache,
                    valueCache: options.valueCache))
        } catch {
            // An empty in-memory file system cannot fail to create a store.
            preconditionFailure("in-memory store creation failed: \(error)")
        }
    }

    /// Closes this persistence and opens the same store again, with the same options, as a
    /// new persistence: what the next launch of an app does. Works for in-memory
    /// persistences too (the store lives on in memory until the last persistence over it
    /// is gone), so a test can write with one release's formats, reopen, and read with the
    /// next release's, migrations included; declaring a datastore again with a different
    /// format is refused only within one persistence.
    public nonisolated func reopened() throws(FolioError) -> Persistence<ReadWrite> {
        let options = core.store.openOptions
        let path = core.store.path
        close()
        let store = try FolioError.wrap { () throws(StorageError) in try Store.open(at: path, options: options) }
        // On disk, as the first open did: other processes may write (in memory, none can).
        if options.fileSystem is POSIXFileSystem {
            do throws(StorageError) {
                try store.startFollowing()
            } catch {
                store.close()
                throw .storage(error)
            }
        }
        return Persistence(
            core: PersistenceCore(
                store: store, durability: core.durability, recordCache: core.recordCacheLimits,
                valueCache: core.valueCacheLimits))
    }

    /// A read-only persistence over the same store, sharing this one's engine: for testing
    /// read-only code in one process. Writes through it do not compile. It is this process:
    /// its ``values`` include the values set here and not yet committed, which a read-only
    /// persistence in another process sees once they are.
    public nonisolated func readOnly() -> Persistence<ReadOnly> {
        Persistence<ReadOnly>(sharing: core)
    }
}

extension Persistence where Access == ReadOnly {
    /// Opens the store at `path` for reading only: no lock is taken and nothing is written,
    /// so it works beside a writer in another process and on a read-only volume.
    ///
    /// It stays current by itself: it watches the store's directory (inotify on Linux, a
    /// dispatch source on Apple platforms, polling every 100 ms where neither works) and
    /// moves to each new commit, so reads see the writer's commits and observers receive
    /// them. A read in progress keeps its snapshot even if the writer compacts meanwhile.
    public init(readingFrom path: String, options: PersistenceOptions = PersistenceOptions()) throws(FolioError) {
        let store = try FolioError.wrap { () throws(StorageError) in
            try Store.openReadOnly(at: path, options: options.storeOptions(POSIXFileSystem(), createIfMissing: false))
        }
        try FolioError.wrap { () throws(StorageError) in try store.startFollowing() }
        self.init(
            core: PersistenceCore(
                store: store, durability: options.durability, recordCache: options.recordCache,
                valueCache: options.valueCache))
    }

    /// Opens the store at `url` (a file URL) for reading only.
    public init(readingFrom url: URL, options: PersistenceOptions = PersistenceOptions()) throws(FolioError) {
        try self.init(readingFrom: url.path, options: options)
    }

    init(sharing core: PersistenceCore) {
        self.init(core: PersistenceCore(sharingReadOnly: core))
    }
}
