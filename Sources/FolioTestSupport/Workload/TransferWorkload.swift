import FolioStorage

/// The bank-transfer workload of the crash, power-loss and fault tests (Docs/Durability.md
/// §5): accounts whose balances always add up to the same total, and a ledger with one
/// entry per transaction.
///
/// The state after `n` transactions is a pure function of (`seed`, `n`), so a test that
/// learns `n` from a store (tree `meta`, key `count`) can rebuild exactly what the store
/// must hold, whatever generation it is at (compactions add generations, not transactions):
///
/// - transaction 1 opens `accounts` accounts with `initialBalance` each;
/// - transaction `n >= 2` moves a seeded amount between two seeded accounts and appends
///   ledger entry `n` (from, to, amount and a 48-byte seeded memo);
/// - every transaction sets `meta/count` to `n`; if `blobEvery > 0`, every transaction
///   whose number is a multiple of it also replaces `blobs/blob` with `blobBytes` seeded
///   bytes (large values: overflow pages, and commits of more than one append chunk);
/// - if `wholesaleEvery > 0`, every transaction whose number is a multiple of it also
///   rewrites every key `0 ..< wholesaleKeys` of tree `stamps` with a value naming the
///   transaction: with a store whose `changeRecordKeyLimit` is below `wholesaleKeys`, its
///   commit records that tree as changed wholesale, and the first one makes the store
///   format version 3 (Docs/Format.md §18.2).
///
/// Keys: accounts and ledger entries use `KeyEncoding.encode(Int64(number))`; balances and
/// the count are little-endian `Int64`/`UInt64`.
public struct TransferWorkload: Sendable, Equatable {
    public static let accountsTree = "accounts"
    public static let ledgerTree = "ledger"
    public static let metaTree = "meta"
    public static let blobTree = "blobs"
    public static let stampTree = "stamps"
    public static let countKey: [UInt8] = Array("count".utf8)
    public static let blobKey: [UInt8] = Array("blob".utf8)

    public var seed: UInt64
    public var accounts: Int
    public var initialBalance: Int64
    public var blobEvery: Int
    public var blobBytes: Int
    public var wholesaleEvery: Int
    public var wholesaleKeys: Int

    public init(
        seed: UInt64, accounts: Int = 100, initialBalance: Int64 = 1_000_000, blobEvery: Int = 0, blobBytes: Int = 0,
        wholesaleEvery: Int = 0, wholesaleKeys: Int = 0
    ) {
        precondition(accounts >= 2)
        self.seed = seed
        self.accounts = accounts
        self.initialBalance = initialBalance
        self.blobEvery = blobEvery
        self.blobBytes = blobBytes
        self.wholesaleEvery = wholesaleEvery
        self.wholesaleKeys = wholesaleKeys
    }

    /// The sum of all balances after transaction 1, forever.
    public var total: Int64 { Int64(accounts) * initialBalance }

    public static func accountKey(_ account: Int) -> [UInt8] { KeyEncoding.encode(Int64(account)) }
    public static func ledgerKey(_ number: Int) -> [UInt8] { KeyEncoding.encode(Int64(number)) }

    /// One transfer: `amount` from account `from` to account `to`.
    public struct Transfer: Sendable, Equatable {
        public var from: Int
        public var to: Int
        public var amount: Int64
        public var memo: [UInt8]

        /// The ledger value: u32 from, u32 to, i64 amount, 48-byte memo (64 bytes, LE).
        public var ledgerValue: [UInt8] {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(64)
            withUnsafeBytes(of: UInt32(from).littleEndian) { bytes += $0 }
            withUnsafeBytes(of: UInt32(to).littleEndian) { bytes += $0 }
            withUnsafeBytes(of: amount.littleEndian) { bytes += $0 }
            return bytes + memo
        }
    }

    /// Transaction `number`'s transfer (`number >= 2`).
    public func transfer(_ number: Int) -> Transfer {
        var rng = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(number) &* 0xD1B5_4A32_D192_ED03)
        let from = rng.index(accounts)
        let to = (from + 1 + rng.index(accounts - 1)) % accounts
        let amount = Int64(1 + rng.index(1_000))
        let memo = (0..<48).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        return Transfer(from: from, to: to, amount: amount, memo: memo)
    }

    /// True if transaction `number` also replaces the blob.
    public func writesBlob(_ number: Int) -> Bool { blobEvery > 0 && blobBytes > 0 && number % blobEvery == 0 }

    /// True if transaction `number` also rewrites every key of tree `stamps`.
    public func writesStamps(_ number: Int) -> Bool {
        wholesaleEvery > 0 && wholesaleKeys > 0 && number % wholesaleEvery == 0
    }

    /// The number of the first transaction that rewrites tree `stamps`, if any.
    public var firstWholesale: Int? { wholesaleEvery > 0 && wholesaleKeys > 0 ? wholesaleEvery : nil }

    /// The stamps transaction `number` writes: key `i` holds `number` and `i`, so a stamp
    /// left from another transaction, or a key torn from its transaction, shows.
    public func stamps(_ number: Int) -> [(key: [UInt8], value: [UInt8])] {
        (0..<wholesaleKeys).map { (Self.ledgerKey($0), Self.encode(Int64(number)) + Self.encode(Int64($0))) }
    }

    /// The blob transaction `number` writes.
    public func blob(_ number: Int) -> [UInt8] {
        var rng = SplitMix64(seed: seed ^ (UInt64(number) &* 0xA24B_AED4_963E_E407))
        var bytes = [UInt8](repeating: 0, count: blobBytes)
        // Each word's bytes least significant first. A word at a time: the kill tests' parent
        // rebuilds a blob for every past generation it reads back, in debug builds.
        bytes.withUnsafeMutableBytes { raw in
            var index = 0
            while index + 8 <= raw.count {
                raw.storeBytes(of: rng.next().littleEndian, toByteOffset: index, as: UInt64.self)
                index += 8
            }
            var word = rng.next()
            while index < raw.count {
                raw[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        // The transaction number in the first bytes, so a blob from the wrong transaction
        // is told apart at a glance.
        withUnsafeBytes(of: UInt64(number).littleEndian) { header in
            for i in 0..<min(8, bytes.count) { bytes[i] = header[i] }
        }
        return bytes
    }

    public static func encode(_ value: Int64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    public static func decodeInt64(_ bytes: [UInt8]) -> Int64? {
        guard bytes.count == 8 else { return nil }
        var value: Int64 = 0
        for (index, byte) in bytes.enumerated() { value |= Int64(byte) << (8 * index) }
        return value
    }

    /// Performs transaction `number` in `transaction`, which must hold the state after
    /// `number - 1` transactions (checked: a wrong count throws ``Mismatch``).
    /// Begins a write transaction holding transaction `number`, ready to commit; rolls it
    /// back if the workload fails.
    public func begin(_ number: Int, in store: Store) throws -> WriteTransaction {
        let transaction = try store.beginWrite()
        do {
            try perform(number, in: transaction)
        } catch {
            transaction.rollback()
            throw error
        }
        return transaction
    }

    public func perform(_ number: Int, in transaction: WriteTransaction) throws {
        let current = try Self.count(in: transaction)
        guard current == number - 1 else {
            throw Mismatch("transaction \(number) performed on a store holding \(current) transactions")
        }
        if number == 1 {
            for account in 0..<accounts {
                try transaction.put(Self.encode(initialBalance), for: Self.accountKey(account), in: Self.accountsTree)
            }
        } else {
            let transfer = transfer(number)
            let fromKey = Self.accountKey(transfer.from), toKey = Self.accountKey(transfer.to)
            guard let from = try transaction.get(fromKey, in: Self.accountsTree).flatMap(Self.decodeInt64),
                let to = try transaction.get(toKey, in: Self.accountsTree).flatMap(Self.decodeInt64)
            else {
                throw Mismatch("transaction \(number): account \(transfer.from) or \(transfer.to) is missing")
            }
            try transaction.put(Self.encode(from - transfer.amount), for: fromKey, in: Self.accountsTree)
            try transaction.put(Self.encode(to + transfer.amount), for: toKey, in: Self.accountsTree)
            try transaction.put(transfer.ledgerValue, for: Self.ledgerKey(number), in: Self.ledgerTree)
        }
        try transaction.put(Self.encode(Int64(number)), for: Self.countKey, in: Self.metaTree)
        if writesBlob(number) { try transaction.put(blob(number), for: Self.blobKey, in: Self.blobTree) }
        if writesStamps(number) {
            for (key, value) in stamps(number) { try transaction.put(value, for: key, in: Self.stampTree) }
        }
    }

    /// The number of transactions a store holds (0 for a store without the workload's trees).
    public static func count(in view: ReadView) throws -> Int {
        guard let bytes = try view.get(countKey, in: metaTree) else { return 0 }
        guard let value = decodeInt64(bytes), value >= 0 else { throw Mismatch("meta/count holds \(bytes)") }
        return Int(value)
    }

    /// The number of transactions a transaction's base plus its own writes hold.
    public static func count(in transaction: WriteTransaction) throws -> Int {
        guard let bytes = try transaction.get(countKey, in: metaTree) else { return 0 }
        guard let value = decodeInt64(bytes), value >= 0 else { throw Mismatch("meta/count holds \(bytes)") }
        return Int(value)
    }

    /// The balances after `count` transactions.
    public func balances(after count: Int) -> [Int64] {
        guard count >= 1 else { return [] }
        var balances = [Int64](repeating: initialBalance, count: accounts)
        if count >= 2 {
            for number in 2...count {
                let transfer = transfer(number)
                balances[transfer.from] -= transfer.amount
                balances[transfer.to] += transfer.amount
            }
        }
        return balances
    }

    /// Exactly what a store must hold after `count` transactions: the reference model.
    public func expectedContents(after count: Int) -> TreeModel {
        var model = TreeModel()
        guard count >= 1 else { return model }
        let balances = balances(after: count)
        // Keys are built in ascending order (the key encoding preserves integer order), so
        // the model's sorted arrays are filled directly.
        model.trees[Self.accountsTree] = balances.indices.map { (Self.accountKey($0), Self.encode(balances[$0])) }
        model.trees[Self.metaTree] = [(Self.countKey, Self.encode(Int64(count)))]
        if count >= 2 {
            model.trees[Self.ledgerTree] = (2...count).map { (Self.ledgerKey($0), transfer($0).ledgerValue) }
        }
        if let last = (1...count).last(where: writesBlob) {
            model.trees[Self.blobTree] = [(Self.blobKey, blob(last))]
        }
        if let last = (1...count).last(where: writesStamps) {
            model.trees[Self.stampTree] = stamps(last)
        }
        return model
    }

    /// What `view` holds of the workload's: every tree but the store's declared history
    /// (`folio/retention`, which `folio-torture transfers --retain-generations` writes in a
    /// commit of its own that is no transaction), compared with ``expectedContents(after:)``.
    public static func contents(of view: ReadView) throws -> TreeModel {
        var model = try TreeModel(view)
        model.trees[RetentionLayout.tree] = nil
        return model
    }

    /// Whether a commit that changed `changes` is one of the workload's transactions: any
    /// commit that changes a tree but the declared history is one (a compaction changes
    /// nothing, a declaration of the history only `folio/retention`).
    public static func isTransaction(_ changes: ChangeRecord) -> Bool {
        changes.trees.contains { $0.tree != RetentionLayout.tree }
    }

    /// Checks that `view` holds exactly the state after some number of transactions, and
    /// returns that number. Throws ``Mismatch`` naming the first difference.
    @discardableResult
    public func check(_ view: ReadView) throws -> Int {
        let count = try Self.count(in: view)
        let found = try Self.contents(of: view)
        let expected = expectedContents(after: count)
        guard found == expected else {
            throw Mismatch(
                "generation \(view.generation) holds count \(count) but differs from the model: "
                    + TreeModel.difference(found, expected))
        }
        if count >= 1 {
            let sum = balances(after: count).reduce(0, +)
            guard sum == total else { throw Mismatch("balances add up to \(sum), not \(total)") }
        }
        return count
    }

    /// A difference between a store and the workload's model.
    public struct Mismatch: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }
}

extension TreeModel {
    /// Everything a read view holds: every tree, every key and value.
    public init(_ view: ReadView) throws {
        self.init()
        for (name, _) in try view.trees() {
            var cursor = try view.cursor(in: name)
            var entries: [(key: [UInt8], value: [UInt8])] = []
            while let entry = try cursor.next() { entries.append((entry.key, entry.value)) }
            trees[name] = entries
        }
    }

    /// A one-line description of the first difference between two models (for messages).
    public static func difference(_ a: TreeModel, _ b: TreeModel) -> String {
        let names = Set(a.trees.keys).union(b.trees.keys).sorted()
        for name in names {
            guard let left = a.trees[name] else { return "tree \(name) missing from the first" }
            guard let right = b.trees[name] else { return "tree \(name) missing from the second" }
            if left.count != right.count { return "tree \(name): \(left.count) keys against \(right.count)" }
            for index in left.indices
            where left[index].key != right[index].key || left[index].value != right[index].value {
                return
                    "tree \(name): entry \(index) differs (key \(left[index].key.prefix(12)) against \(right[index].key.prefix(12)))"
            }
        }
        return "no difference"
    }
}
