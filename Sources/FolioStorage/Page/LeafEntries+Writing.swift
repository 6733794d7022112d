// A leaf's entries on their way to a page: copied as they are, with the references to
// overflow pages filled in or moved.
extension LeafEntries {
    /// The values of the kind 2 entries (not yet in an overflow page), each with the index
    /// its entry holds, in entry order.
    var pendingEntries: [(place: Int, bytes: [UInt8])] {
        guard !pendingValues.isEmpty else { return [] }
        return bytes.withUnsafeBytes { raw in
            starts.compactMap { start -> (Int, [UInt8])? in
                let start = Int(start)
                guard raw[start + 2] == Self.pendingKind else { return nil }
                let place = Int(Self.payloadUInt64(in: raw, entryAt: start))
                return (place, pendingValues[place])
            }
        }
    }

    /// Writes every entry in key order, exactly ``entryBytes`` bytes; a kind 2 entry as a
    /// reference to `pendingAddresses[i]`, `i` being the index it holds.
    func write(into cursor: inout RawByteCursor, pendingAddresses: [PageAddress]) {
        bytes.withUnsafeBytes { raw in
            for start in starts {
                let start = Int(start)
                let size = Self.entrySize(in: raw, at: start)
                guard raw[start + 2] == Self.pendingKind else {
                    cursor.write(raw: UnsafeRawBufferPointer(rebasing: raw[start..<(start + size)]))
                    continue
                }
                let keyEnd = size - 12
                let address = pendingAddresses[Int(Self.payloadUInt64(in: raw, entryAt: start))]
                cursor.write(raw: UnsafeRawBufferPointer(rebasing: raw[start..<(start + 2)]))
                cursor.write(Self.overflowKind)
                cursor.write(raw: UnsafeRawBufferPointer(rebasing: raw[(start + 3)..<(start + keyEnd)]))
                cursor.write(address.offset)
                cursor.write(address.length)
            }
        }
    }

    /// The page these entries were read from, when it is exactly what writing them would
    /// give after its header: a leaf read in place and not changed since, every value
    /// inline, the entries back to back in key order from the header on. Such a page can be
    /// copied whole to another file (``PageAppender/appendPage(copying:from:kind:count:)``);
    /// any other leaf is written entry by entry. Nil for anything else.
    ///
    /// Why the checks suffice: edits never shorten ``bytes`` and write only past its end
    /// (``compactIfWasteful()`` makes a new buffer with no header), so a buffer as long as
    /// the length its header names was never written to, and a table that walks it back to
    /// back from byte 24 to its end names every entry of the page, in the page's order.
    var unchangedPage: [UInt8]? {
        guard pendingValues.isEmpty, !starts.isEmpty, bytes.count == PageHeader.size + entryBytes else {
            return nil
        }
        let backToBack = bytes.withUnsafeBytes { raw in
            guard UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) == raw.count else {
                return false
            }
            var expected = PageHeader.size
            for start in starts {
                guard Int(start) == expected, raw[expected + 2] == Self.inlineKind else { return false }
                expected += Self.entrySize(in: raw, at: expected)
            }
            return expected == raw.count
        }
        return backToBack ? bytes : nil
    }

    /// These entries with every overflow reference replaced by `move(reference)`: what a
    /// copy of a leaf into another file writes, after copying its overflow pages.
    func movingOverflowPages(
        _ move: (PageAddress) throws(StorageError) -> PageAddress
    ) throws(StorageError) -> LeafEntries {
        var moved = self
        for index in 0..<count {
            guard case .overflow(let address) = value(index) else { continue }
            let target = try move(address)
            let start = Int(starts[index])
            moved.bytes.withUnsafeMutableBytes { raw in
                let keyCount = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
                raw.storeBytes(of: target.offset.littleEndian, toByteOffset: start + 3 + keyCount, as: UInt64.self)
                raw.storeBytes(of: target.length.littleEndian, toByteOffset: start + 11 + keyCount, as: UInt32.self)
            }
        }
        return moved
    }

    /// The u64 after the key of the entry at `start` (an overflow offset, or a pending index).
    private static func payloadUInt64(in raw: UnsafeRawBufferPointer, entryAt start: Int) -> UInt64 {
        let keyCount = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
        return UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: start + 3 + keyCount, as: UInt64.self))
    }
}
