import Testing
@testable import FolioStorage
import FolioTestSupport

/// A leaf as its entries' bytes plus an offset table (``LeafEntries``): every edit a tree
/// makes, checked against a sorted array of keys and values, and the page it encodes to
/// decoded back.
@Suite struct LeafEntriesTests {
    /// The model: what the leaf holds, in key order.
    typealias Model = [(key: [UInt8], value: LeafValue)]

    static func randomValue(_ random: inout SplitMix64) -> LeafValue {
        switch random.index(8) {
        case 0:
            return .overflow(
                PageAddress(offset: 4_096 + random.next() % 100_000, length: 40 + UInt32(random.index(9_000))))
        case 1: return .pendingOverflow((0..<(2_049 + random.index(100))).map { _ in UInt8(random.index(256)) })
        default: return .inline((0..<random.index(60)).map { _ in UInt8(random.index(256)) }[...])
        }
    }

    static func expect(_ entries: LeafEntries, equals model: Model, _ comment: Comment? = nil) {
        #expect(entries.count == model.count, comment)
        guard entries.count == model.count else { return }
        for index in model.indices {
            #expect(Array(entries.key(index)) == model[index].key, comment)
            #expect(Self.same(entries.value(index), model[index].value), comment)
        }
        let size = model.reduce(0) { $0 + LeafEntries.entrySize(keyCount: $1.key.count, value: $1.value) }
        #expect(entries.entryBytes == size, comment)
        #expect(entries.measuredEntryBytes() == size, comment)
    }

    /// Equal as values (an inline value compared by its bytes, wherever they are).
    static func same(_ a: LeafValue, _ b: LeafValue) -> Bool {
        switch (a, b) {
        case (.inline(let x), .inline(let y)): return Array(x) == Array(y)
        case (.overflow(let x), .overflow(let y)): return x == y
        case (.pendingOverflow(let x), .pendingOverflow(let y)): return x == y
        default: return false
        }
    }

    @Test func randomEditsMatchASortedArray() {
        for seed in 0..<20 as Range<UInt64> {
            var random = SplitMix64(seed: seed)
            var entries = LeafEntries()
            var model: Model = []
            for step in 0..<400 {
                let key = Array("k\(random.index(120))".utf8)
                let position = model.firstIndex { $0.key.lexicographicallyPrecedes(key) == false } ?? model.count
                let present = position < model.count && model[position].key == key
                #expect(entries.lowerBound(key) == position)
                #expect(entries.index(of: key) == (present ? position : nil))
                switch random.index(10) {
                case 0..<6:
                    let value = Self.randomValue(&random)
                    if present {
                        let previous = entries.replaceValue(at: position, with: value)
                        #expect(Self.same(previous, model[position].value), "seed \(seed) step \(step)")
                        model[position].value = value
                    } else {
                        entries.insert(key: key[...], value: value, at: position)
                        model.insert((key, value), at: position)
                    }
                case 6..<9 where present:
                    let removed = entries.remove(at: position)
                    #expect(Self.same(removed, model[position].value), "seed \(seed) step \(step)")
                    model.remove(at: position)
                case 9 where model.count > 2:
                    // A split: the right part copied out, the left part truncated.
                    let at = 1 + random.index(model.count - 1)
                    let right = LeafEntries(entries, range: at..<entries.count)
                    Self.expect(right, equals: Array(model[at...]), "seed \(seed) step \(step)")
                    entries.removeSuffix(from: at)
                    model.removeSubrange(at...)
                    // And merged back, as a refill would.
                    entries.append(contentsOf: right, range: 0..<right.count)
                    model += Self.expectedSuffix(right)
                default:
                    break
                }
                Self.expect(entries, equals: model, "seed \(seed) step \(step)")
            }
            // Replaced and removed entries leave unused bytes; they stay bounded.
            #expect(entries.bytes.count <= 2 * entries.entryBytes + 2 * StorageLimits.splitPageSize)
        }
    }

    static func expectedSuffix(_ entries: LeafEntries) -> Model {
        (0..<entries.count).map { (Array(entries.key($0)), entries.value($0)) }
    }

    @Test func aPageEncodesAndDecodesToTheSameEntries() throws {
        var random = SplitMix64(seed: 7)
        var model: Model = []
        var entries = LeafEntries()
        for index in 0..<30 {
            let key = Array("key-\(1_000 + index)".utf8)
            let value = Self.randomValue(&random)
            entries.append(key: key[...], value: value)
            model.append((key, value))
        }
        // Change a few so the buffer is no longer in key order.
        _ = entries.replaceValue(at: 3, with: .inline([9, 9, 9][...]))
        model[3].value = .inline([9, 9, 9][...])
        _ = entries.remove(at: 10)
        model.remove(at: 10)
        // Pending values are written as references to the addresses their pages got.
        var addresses = Array(repeating: PageAddress.none, count: entries.pendingValues.count)
        for (place, bytes) in entries.pendingEntries {
            addresses[place] = PageAddress(offset: 8_192 + UInt64(place) * 4_096, length: UInt32(bytes.count + 24))
        }
        for index in model.indices {
            if case .pendingOverflow = model[index].value {
                let place = entries.pendingEntries.first {
                    entries.pendingValues[$0.place] == model[index].value.pendingBytes
                }
                model[index].value = .overflow(addresses[place!.place])
            }
        }
        var writer = ByteWriter()
        let offset: UInt64 = 1 << 20
        TreePage.encodeLeaf(entries, pendingAddresses: addresses, generation: 5, into: &writer, at: offset)
        let address = PageAddress(offset: offset, length: UInt32(writer.bytes.count))
        guard case .leaf(let leaf) = try TreePage.decode(writer.bytes, address: address, file: "test") else {
            Issue.record("a leaf page decoded as a branch")
            return
        }
        #expect(leaf.pageLength == PageHeader.size + entries.entryBytes)
        Self.expect(leaf.entries, equals: model)

        // Moving overflow pages rewrites exactly the references.
        let moved = try leaf.entries.movingOverflowPages { (old) throws(StorageError) in
            PageAddress(offset: old.offset + 1, length: old.length)
        }
        let movedModel = model.map { entry -> (key: [UInt8], value: LeafValue) in
            guard case .overflow(let old) = entry.value else { return entry }
            return (entry.key, .overflow(PageAddress(offset: old.offset + 1, length: old.length)))
        }
        Self.expect(moved, equals: movedModel)
        Self.expect(leaf.entries, equals: model, "the page the copy came from is unchanged")
    }

    @Test func aReplacedValueStaysReadableAndTheBufferIsNotCopiedForIt() {
        var entries = LeafEntries()
        for index in 0..<20 {
            entries.append(key: Array("k\(100 + index)".utf8)[...], value: .inline([UInt8(index)][...]))
        }
        let previous = entries.replaceValue(at: 5, with: .inline([1, 2, 3][...]))
        #expect(Self.same(previous, .inline([5][...])))
        // The previous value is read from the old entry, left in place: still right after
        // more edits, which write elsewhere.
        entries.insert(key: Array("k0".utf8)[...], value: .inline([7][...]), at: 0)
        #expect(Self.same(previous, .inline([5][...])))
        #expect(Self.same(entries.value(6), .inline([1, 2, 3][...])))
    }
}

extension LeafEntriesTests {
    /// A leaf edited over and over in one transaction keeps about twice its entries' bytes,
    /// whatever the edits: inserts and removals in turn, or a large value replaced again and
    /// again (whose earlier versions are let go at once).
    @Test func repeatedEditsKeepALeafBounded() {
        var entries = LeafEntries()
        for index in 0..<10 { entries.append(key: Array("k\(100 + index)".utf8)[...], value: .inline([1, 2, 3][...])) }
        for _ in 0..<10_000 {
            entries.insert(key: Array("k150".utf8)[...], value: .inline([UInt8](repeating: 9, count: 200)[...]), at: 5)
            _ = entries.remove(at: 5)
        }
        #expect(entries.count == 10)
        #expect(entries.bytes.count <= 2 * entries.entryBytes + 2 * StorageLimits.splitPageSize)

        for round in 0..<100 {
            let large = [UInt8](repeating: UInt8(round), count: 100_000)
            _ = entries.replaceValue(at: 3, with: .pendingOverflow(large))
        }
        let held = entries.pendingValues.reduce(0) { $0 + $1.count }
        #expect(held == 100_000, "only the live pending value is held (\(held) bytes)")
        #expect(Self.same(entries.value(3), .pendingOverflow([UInt8](repeating: 99, count: 100_000))))
    }
}

extension LeafValue {
    /// The bytes of a value pending its overflow page.
    fileprivate var pendingBytes: [UInt8]? {
        if case .pendingOverflow(let bytes) = self { return bytes }
        return nil
    }
}
