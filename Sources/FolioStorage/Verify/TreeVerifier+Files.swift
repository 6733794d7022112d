// The checks of the files beside the trees: the root file and its slots, the info file,
// and the current snapshot file's header and length.

extension TreeVerifier {
    /// The root file: its size, that every slot holding something decodes, and that the
    /// newest is not older than the durable root; then that the info file decodes.
    mutating func checkRootFile(layout: StoreLayout, fileSystem: any FileSystem, durable: RootRecord) {
        do throws(StorageError) {
            let handle = try fileSystem.open(layout.root, mode: .readOnly)
            defer { handle.close() }
            let bytes = try handle.readAll()
            guard bytes.count == RootRecord.fileSize || bytes.count == RootRecord.versionOneFileSize else {
                problem(
                    0, nil,
                    "root file is \(bytes.count) bytes, expected \(RootRecord.fileSize) "
                        + "(or \(RootRecord.versionOneFileSize) for format version 1)", file: layout.root)
                return
            }
            // Every slot that holds something decodes; the newest may hold a newer generation
            // than the one checked (a reader that has not refreshed), never an older one than
            // the newest durable root.
            var newest: UInt64 = 0
            for slot in 0..<2 where !RootRecord.slotIsEmpty(bytes, slot: slot) {
                do throws(StorageError) {
                    newest = max(newest, try RootRecord.decodeSlot(bytes, slot: slot, file: layout.root).generation)
                } catch {
                    problem(error, tree: nil, at: UInt64(RootRecord.slotOffset(slot, fileLength: bytes.count)))
                }
            }
            if newest > 0 && newest < durable.generation {
                problem(
                    0, nil,
                    "the newest root slot holds generation \(newest), older than the durable generation \(durable.generation)",
                    file: layout.root)
            }
        } catch {
            problem(0, nil, "cannot read the root file: \(error)", file: layout.root)
        }
        do throws(StorageError) {
            let info = try fileSystem.open(layout.info, mode: .readOnly)
            defer { info.close() }
            _ = try InfoFile.decode(try info.readAll(), path: layout.info)
        } catch {
            problem(0, nil, "info file: \(error)", file: layout.info)
        }
    }

    /// The store opened at the older root slot: the generation the newer slot names could
    /// not be read (its slot is damaged, which `checkRootFile` reports, or its snapshot file
    /// cannot be opened, reported here), so the newest commit is out of reach even if
    /// everything else is sound.
    mutating func checkUnusableCurrentSlot(_ opened: RootRecord, layout: StoreLayout, fileSystem: any FileSystem) {
        guard let handle = try? fileSystem.open(layout.root, mode: .readOnly) else { return }
        defer { handle.close() }
        guard let bytes = try? handle.readAll(),
            let current = (0..<2).compactMap({ try? RootRecord.decodeSlot(bytes, slot: $0, file: layout.root) })
                .filter({ $0.generation > opened.generation }).max(by: { $0.generation < $1.generation })
        else {
            return  // a damaged newest slot: already reported by checkRootFile
        }
        let reason: String
        do throws(StorageError) {
            let file = try Store.openSnapshot(
                current.snapshotFile, layout: layout, fileSystem: fileSystem, writable: false)
            let size = try file.handle.size()
            reason =
                size < current.committedLength
                ? "it is \(size) bytes but \(current.committedLength) are committed"
                : "it could not be read when the store was opened"
        } catch {
            reason = "\(error)"
        }
        problem(
            0, nil,
            "the newest root slot names generation \(current.generation) in \(StoreLayout.snapshotName(current.snapshotFile)), "
                + "which cannot be used (\(reason)); the store opened at the previous root, generation \(opened.generation), "
                + "and that is the generation checked", file: layout.root)
    }

    /// The current snapshot file: its header decodes and it holds every committed byte.
    mutating func checkFile(_ record: RootRecord) {
        do throws(StorageError) {
            _ = try SnapshotHeader.decode(try pages.file.handle.read(at: 0, count: SnapshotHeader.size), file: file)
            let size = try pages.file.handle.size()
            if size < record.committedLength {
                problem(size, nil, "file is \(size) bytes but \(record.committedLength) are committed")
            }
        } catch {
            problem(error, tree: nil, at: 0)
        }
    }
}
