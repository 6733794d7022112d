import Synchronization
import FolioStorage

// The observer behind one instance's values.

/// ``Datastore/observe(_:bufferLimit:)``: one instance, until it is deleted.
final class InstanceObserver<Format: DatastoreFormat>: HubObserver {
    let schema: DatastoreSchema<Format>
    let core: PersistenceCore
    let identifier: [UInt8]
    let channel: EventChannel<InstanceEvent<Format.Instance>>
    private let ended = Atomic<Bool>(false)

    init(schema: DatastoreSchema<Format>, core: PersistenceCore, identifier: [UInt8], bufferLimit: Int) {
        self.schema = schema
        self.core = core
        self.identifier = identifier
        channel = EventChannel(policy: .restartFromNewest(limit: max(1, bufferLimit)))
    }

    var observedTree: String { schema.recordsTree }

    func start(at view: ReadView, hub: ObservationHub) {
        reload(at: view)
    }

    func apply(_ delta: CommitDelta) {
        guard !ended.load(ordering: .relaxed) else { return }
        guard let position = binarySearch(delta.entries) else { return }
        if delta.entries[position].kind == .deleted {
            end()
            return
        }
        switch schema.decodeNew(identifier, in: delta, core: core) {
        case .success(let value)?: channel.push(.value(value))
        case .failure(let error)?: channel.push(.failure(error))
        case nil: break
        }
    }

    private func binarySearch(_ entries: [ChangeRecord.Entry]) -> Int? {
        let position = partitionPoint(entries.count) { KeyBytes.compare(entries[$0].key, identifier) >= 0 }
        return position < entries.count && entries[position].key == identifier ? position : nil
    }

    func reload(at view: ReadView) {
        guard !ended.load(ordering: .relaxed) else { return }
        do throws(FolioError) {
            guard
                let bytes = try FolioError.wrap({ () throws(StorageError) in
                    try view.get(identifier, in: schema.recordsTree)
                })
            else {
                end()
                return
            }
            channel.push(.value(try schema.decode(bytes[...], identifier: identifier, core: core)))
        } catch {
            channel.push(.failure(error))
        }
    }

    private func end() {
        guard !ended.exchange(true, ordering: .relaxed) else { return }
        channel.push(.deleted)
        channel.finish()
    }
}
