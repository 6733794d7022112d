import FolioStorage
/// Writes. Each updates every index of the datastore in the same commit. Outside
/// ``Persistence/perform(_:)`` each call is its own durable transaction; inside, it joins
/// the transaction (and an error thrown out of `perform` undoes it).
extension Datastore where Access == ReadWrite {
    /// Stores `instance`, inserting it or replacing the instance with the same identifier;
    /// returns the instance it replaced, or nil if there was none or if the replaced record
    /// no longer decodes (replacing such a record is how to repair it). A unique-index
    /// conflict throws and changes nothing.
    ///
    /// ```swift
    /// let replaced = try await books.persist(book)  // nil when the book is new
    /// ```
    @discardableResult
    nonisolated(nonsending) public func persist(_ instance: Instance) async throws(FolioError) -> Instance? {
        // Encoded before the transaction begins (withWrite(beforehand:_:) says why).
        let schema = self.schema
        let encode = { () throws(FolioError) in try EncodedRecord(instance, schema: schema) }
        return try await withWrite(beforehand: encode) { (transaction, encoded) throws(FolioError) -> Instance? in
            let (identifier, previous) = try IndexMaintenance.store(encoded, schema: schema, in: transaction)
            guard let previous else { return nil }
            // The old record's index entries were removed through the keys stored in its
            // header, so it need not decode to be replaced: only the returned value is lost.
            return try schema.decodeIfReadable(previous, identifier: identifier, core: core)
        }
    }

    /// Deletes the instance with `identifier` and returns it; throws
    /// ``FolioError/instanceNotFound(datastore:identifier:)`` if there is none.
    ///
    /// ```swift
    /// let deleted = try await books.delete(book.id)  // throws instanceNotFound if there is none
    /// ```
    @discardableResult
    nonisolated(nonsending) public func delete(_ identifier: Identifier) async throws(FolioError) -> Instance {
        guard let deleted = try await deleteIfPresent(identifier) else {
            throw .instanceNotFound(datastore: key, identifier: String(describing: identifier))
        }
        return deleted
    }

    /// Deletes the instance with `identifier` if there is one; returns it.
    @discardableResult
    nonisolated(nonsending) public func deleteIfPresent(_ identifier: Identifier) async throws(FolioError) -> Instance?
    {
        let key = identifier.keyBytes
        return try await withWrite { (transaction) throws(FolioError) -> Instance? in
            // Decode before deleting, so a record that does not decode is not deleted by
            // a call that promises to return it; `deleteWithoutDecoding` deletes such records.
            guard
                let bytes = try FolioError.wrap({ () throws(StorageError) in
                    try transaction.get(key, in: schema.recordsTree)
                })
            else { return nil }
            let instance = try schema.decode(bytes[...], identifier: key, core: core)
            try IndexMaintenance.delete(key, schema: schema, in: transaction)
            return instance
        }
    }

    /// Deletes the record with `identifier` without decoding it, and its index entries;
    /// returns whether there was one. The way to remove a record that no longer decodes
    /// (`delete(_:)` refuses such a record, since it would have to return it).
    ///
    /// ```swift
    /// do {
    ///     _ = try await books.load(id)
    /// } catch .decodingFailed {
    ///     try await books.deleteWithoutDecoding(id)
    /// }
    /// ```
    @discardableResult
    nonisolated(nonsending) public func deleteWithoutDecoding(_ identifier: Identifier) async throws(FolioError) -> Bool
    {
        let key = identifier.keyBytes
        return try await withWrite { (transaction) throws(FolioError) -> Bool in
            try IndexMaintenance.delete(key, schema: schema, in: transaction) != nil
        }
    }

    /// Deletes every instance whose identifier lies in `range`; returns how many.
    @discardableResult
    nonisolated(nonsending) public func delete(_ range: some IndexRange<Identifier>) async throws(FolioError) -> Int {
        try await deleteRecords(in: schema.recordsTree, range: KeyRange.entries(in: range, suffixed: false), index: nil)
    }

    /// Deletes every instance: `delete(...)`. Returns how many.
    @discardableResult
    nonisolated(nonsending) public func delete(_ all: UnboundedRange) async throws(FolioError) -> Int {
        try await deleteRecords(in: schema.recordsTree, range: .all, index: nil)
    }

    /// Deletes every instance whose value in an index lies in `range`; returns how many.
    @discardableResult
    nonisolated(nonsending) public func delete<I: ValueIndexDeclaration>(
        _ range: some IndexRange<I.Value>, from index: KeyPath<Format, I>
    ) async throws(FolioError) -> Int
    where I.Instance == Instance {
        let declared = schema.index(index)
        return try await deleteRecords(
            in: declared.tree, range: KeyRange.entries(in: range, suffixed: declared.suffixedRanges), index: declared)
    }

    /// Deletes every instance whose value in a one-to-many or many-to-many index is `value`.
    @discardableResult
    nonisolated(nonsending) public func delete<I: MultiValueIndexDeclaration>(
        _ value: I.Value, from index: KeyPath<Format, I>
    ) async throws(FolioError) -> Int
    where I.Instance == Instance {
        let declared = schema.index(index)
        return try await deleteRecords(
            in: declared.tree, range: KeyRange.entries(of: value, suffixed: true), index: declared)
    }

    nonisolated(nonsending) private func deleteRecords(
        in tree: String, range: KeyRange, index: SchemaIndex<Instance>?
    ) async throws(FolioError) -> Int {
        try await withWrite { (transaction) throws(FolioError) -> Int in
            // The identifiers first (the cursor iterates the tree as it was when it was
            // taken), then every record and index changed in one pass each.
            var cursor = transaction.cursor(in: tree, range: range)
            var identifiers: [[UInt8]] = []
            if index == nil {
                while let key = try FolioError.wrap({ () throws(StorageError) in try cursor.nextKey() }) {
                    identifiers.append(key)
                }
            }
            while index != nil, let entry = try FolioError.wrap({ () throws(StorageError) in try cursor.next() }) {
                guard let decoded = IndexEntry.decode(entry.value) else {
                    throw .corruptRecord(datastore: key, detail: "an index entry is malformed")
                }
                identifiers.append(decoded.identifier)
            }
            return try IndexMaintenance.deleteAll(identifiers, schema: schema, in: transaction)
        }
    }
}
