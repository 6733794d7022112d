import FolioStorage

// The observer behind a datastore's change stream.

/// ``Datastore/observe(after:bufferLimit:)``: every change, with old and new values.
final class EventsObserver<Format: DatastoreFormat>: HubObserver {
    typealias Event = DatastoreEvent<Format.Instance, Format.Identifier>
    let schema: DatastoreSchema<Format>
    let core: PersistenceCore
    let channel: EventChannel<Event>
    let resumeAfter: ObservationToken?

    init(schema: DatastoreSchema<Format>, core: PersistenceCore, bufferLimit: Int, resumeAfter: ObservationToken?) {
        self.schema = schema
        self.core = core
        channel = EventChannel(policy: .signalOverflow(limit: max(1, bufferLimit)))
        self.resumeAfter = resumeAfter
    }

    var observedTree: String { schema.recordsTree }

    func start(at view: ReadView, hub: ObservationHub) {
        guard let token = resumeAfter, token.generation < view.generation else { return }
        let replayed = hub.replayHistory(after: token, upTo: view) { batch in
            for commit in batch {
                if commit.changes.isChangedWholesale(schema.recordsTree) {
                    channel.push(.reload(token: ObservationToken(generation: commit.generation)))
                    continue
                }
                let entries = commit.changes.changes(in: schema.recordsTree)
                guard !entries.isEmpty else { continue }
                apply(
                    CommitDelta(
                        tree: schema.recordsTree, token: ObservationToken(generation: commit.generation),
                        before: commit.before, after: commit.after, entries: entries))
            }
        }
        // History not (fully) replayable: say so rather than miss changes silently.
        if !replayed { channel.push(.reload(token: ObservationToken(generation: view.generation))) }
    }

    func apply(_ delta: CommitDelta) {
        for entry in delta.entries {
            guard let identifier = schema.identifier(from: entry.key) else {
                channel.push(
                    .failure(
                        .corruptRecord(datastore: schema.key, detail: "a changed identifier does not decode"),
                        token: delta.token))
                continue
            }
            var change = Change<Format.Instance, Format.Identifier>(
                kind: .created, identifier: identifier, oldValue: nil,
                newValue: nil, token: delta.token)
            var failure: FolioError?
            switch entry.kind {
            case .created: change.kind = .created
            case .updated: change.kind = .updated
            case .deleted: change.kind = .deleted
            }
            if entry.kind != .created {
                switch schema.decodeOld(entry.key, in: delta, core: core) {
                case .success(let old)?: change.oldValue = old
                case .failure(let error)?: failure = error
                case nil: break
                }
            }
            if entry.kind != .deleted {
                switch schema.decodeNew(entry.key, in: delta, core: core) {
                case .success(let new)?: change.newValue = new
                case .failure(let error)?: failure = error
                case nil: break
                }
            }
            if let failure {
                channel.push(.failure(failure, token: delta.token))
            } else {
                channel.push(.change(change))
            }
        }
    }

    func reload(at view: ReadView) {
        channel.push(.reload(token: ObservationToken(generation: view.generation)))
    }
}
