import FolioStorage
/// One committed change to one instance of a datastore.
public struct Change<Instance: Sendable, Identifier: Sendable>: Sendable {
    /// How the instance changed.
    public enum Kind: Sendable, Equatable {
        /// The instance did not exist before the commit.
        case created
        /// The instance existed before and after the commit.
        case updated
        /// The commit deleted the instance.
        case deleted
    }

    /// How the instance changed.
    public var kind: Kind
    /// The instance's identifier.
    public var identifier: Identifier
    /// The instance before the commit (nil when created).
    public var oldValue: Instance?
    /// The instance after the commit (nil when deleted).
    public var newValue: Instance?
    /// The commit that made the change.
    public var token: ObservationToken
}

/// What ``Datastore/observe(after:bufferLimit:)`` yields.
public enum DatastoreEvent<Instance: Sendable, Identifier: Sendable>: Sendable {
    /// A committed change, in commit order (changes of one commit in identifier order).
    case change(Change<Instance, Identifier>)
    /// A changed record could not be decoded (old or new value): reported, not dropped.
    case failure(FolioError, token: ObservationToken)
    /// Events were missed: the consumer fell more than the buffer limit behind, a
    /// read-only observer could not replay history that compaction removed, or the commit
    /// `token` changed more records of the datastore than a commit lists
    /// (`PersistenceOptions.changeRecordKeyLimit`: it changed wholesale, and its records'
    /// changes are not reported one by one). Re-read the datastore (its state is at least
    /// as new as `token`); events continue after this one (some may already be reflected
    /// in what you re-read).
    case reload(token: ObservationToken)
}

/// What ``Datastore/observe(_:bufferLimit:)`` yields for one instance.
public enum InstanceEvent<Instance: Sendable>: Sendable {
    /// The instance's value: first its current value, then after each change (and after
    /// a commit that changed the datastore wholesale, which may repeat an unchanged value).
    case value(Instance)
    /// The instance was deleted (or did not exist); the sequence ends after this.
    case deleted
    /// A new value could not be decoded.
    case failure(FolioError)
}
