import FolioStorage
/// Records read from a datastore, in order, as an `AsyncSequence`.
///
/// Nothing is read until iteration starts; then one committed snapshot is pinned (or the
/// enclosing transaction used), and records are fetched a leaf page at a time and decoded
/// one by one: memory does not grow with the size of the range.
///
/// ```swift
/// for try await book in books.load("a"..<"b", from: \.title) { print(book.title) }
/// let firstTen = try await books.load(..., limit: 10).collect()
/// ```
///
/// A negative limit or offset throws ``FolioError/invalidArgument(name:reason:)`` from the
/// first `next()`, whatever else the query asks (a limit of 0 included).
public struct Records<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = FolioError

    let open: @Sendable () async throws(FolioError) -> RecordStream<Element>
    let limit: Int?
    let offset: Int

    init(limit: Int?, offset: Int = 0, open: @escaping @Sendable () async throws(FolioError) -> RecordStream<Element>) {
        self.open = open
        self.limit = limit
        self.offset = offset
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(open: open, remaining: limit ?? Int.max, offset: offset)
    }

    /// Iterates records one at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let open: @Sendable () async throws(FolioError) -> RecordStream<Element>
        var stream: RecordStream<Element>?
        var remaining: Int
        /// The caller's offset, checked here too: a limit of 0 ends the sequence before it
        /// opens the stream, which is where the query checks it.
        let offset: Int

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(FolioError) -> Element? {
            guard remaining > 0 else {
                // Only a caller's limit is ever negative (the count stops at 0): an error,
                // never read as "no records"; so is a negative offset.
                if remaining < 0 || offset < 0 { _ = try ResultWindow(limit: remaining, offset: offset) }
                return nil
            }
            if stream == nil { stream = try await open() }
            guard let element = try stream!.next() else {
                remaining = 0
                return nil
            }
            remaining -= 1
            return element
        }

        public mutating func next() async throws(FolioError) -> Element? {
            try await next(isolation: nil)
        }
    }

    /// Every record of the sequence, in an array.
    nonisolated(nonsending) public func collect() async throws(FolioError) -> [Element] {
        var result: [Element] = []
        var iterator = makeAsyncIterator()
        // In the caller's isolation: the plain `next()` would hop to the global executor and
        // back for every element (two thread switches per record, measured as most of the
        // time of collecting a scan).
        while let element = try await iterator.next(isolation: #isolation) { result.append(element) }
        return result
    }
}

/// Where a `Records` sequence takes its elements from: a cursor over a tree and how each
/// entry becomes an element, or any producer (a query's filtered or sorted results).
///
/// `@unchecked Sendable`: it only crosses from the task that opens it to the iterator that
/// drives it, one task at a time (an iterator is never shared); what its closures capture
/// (read views, the write transaction, coders) is itself thread-safe.
struct RecordStream<Element>: @unchecked Sendable {
    private let produce: () throws(FolioError) -> Element?

    /// A stream of `transform` applied to each entry of `cursor`, read in place: the key and
    /// value are slices of the page that holds them.
    init(
        cursor: Cursor,
        transform: @escaping (_ key: ArraySlice<UInt8>, _ value: ArraySlice<UInt8>) throws(FolioError) -> Element
    ) {
        let position = CursorPosition(cursor)
        produce = { () throws(FolioError) -> Element? in
            guard let entry = try FolioError.wrap({ () throws(StorageError) in try position.cursor.nextSlices() })
            else {
                return nil
            }
            return try transform(entry.key, entry.value)
        }
    }

    init(next: @escaping () throws(FolioError) -> Element?) {
        produce = next
    }

    mutating func next() throws(FolioError) -> Element? {
        try produce()
    }
}

/// A cursor a stream's closure advances (a cursor is a value; the closure needs one place).
final class CursorPosition {
    var cursor: Cursor
    init(_ cursor: Cursor) { self.cursor = cursor }
}
