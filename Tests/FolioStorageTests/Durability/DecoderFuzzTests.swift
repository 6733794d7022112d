import Testing
@_spi(Testing) @testable import FolioStorage
import FolioTestSupport

/// A6: 100,000 seeded mutations of leaf, branch, overflow and commit pages, root slots,
/// snapshot headers and tree descriptors, fed to the engine's decoders. No input traps (a
/// trap would end the test process); whatever a decoder accepts re-encodes to exactly the
/// input bytes, so nothing the engine reads is silently altered.
///
/// Most mutations are then "re-sealed" (length field and checksum recomputed) so that they
/// get past the checksum and exercise the structural checks. "Exactly" is judged after
/// zeroing the bytes the format says readers must not interpret (Docs/Format.md §1:
/// reserved bytes, fields marked 0 such as page flags and the entry count of overflow and
/// commit pages, and the offset and length of a commit link whose file number is 0).
@Suite struct DecoderFuzzTests {
    static let mutations = 100_000
    static let shards = 4
    /// Where the fuzzed pages claim to live; child and overflow references point below it.
    static let pageOffset: UInt64 = 1 << 20

    enum Kind: CaseIterable { case leaf, branch, overflow, commit, rootSlot, snapshotHeader, descriptor }

    struct Sample {
        var kind: Kind
        var bytes: [UInt8]
    }

    // MARK: The corpus

    static func randomBytes(_ rng: inout SplitMix64, _ range: ClosedRange<Int>) -> [UInt8] {
        (0..<Int.random(in: range, using: &rng)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    static func reference(_ rng: inout SplitMix64) -> PageAddress {
        let length = UInt32(24 + rng.index(4_000))
        return PageAddress(offset: 64 + UInt64(rng.index(Int(pageOffset) - 64 - Int(length))), length: length)
    }

    /// Valid encodings of every structure, with seeded contents.
    static func corpus(seed: UInt64) -> [Sample] {
        var rng = SplitMix64(seed: seed)
        var samples: [Sample] = []
        for _ in 0..<12 {
            var writer = ByteWriter()
            let keys = (0..<(1 + rng.index(12))).map { _ in randomBytes(&rng, 0...20) }.sorted {
                $0.lexicographicallyPrecedes($1)
            }
            let values: [LeafValue] = keys.map { _ in
                rng.chance(1, in: 4) ? .overflow(reference(&rng)) : .inline(randomBytes(&rng, 0...40)[...])
            }
            TreePage.encodeLeaf(
                keys: keys.map { $0[...] }, values: values, generation: rng.next() % 1_000, into: &writer,
                at: pageOffset)
            samples.append(Sample(kind: .leaf, bytes: writer.bytes))

            writer = ByteWriter()
            let separators = (0..<(1 + rng.index(8))).map { _ in randomBytes(&rng, 0...16) }
            let children = (0...separators.count).map { _ in reference(&rng) }
            TreePage.encodeBranch(
                keys: separators.map { $0[...] }, children: children, generation: rng.next() % 1_000, into: &writer,
                at: pageOffset)
            samples.append(Sample(kind: .branch, bytes: writer.bytes))

            writer = ByteWriter()
            TreePage.encodeOverflow(
                randomBytes(&rng, 0...200), generation: rng.next() % 1_000, into: &writer, at: pageOffset)
            samples.append(Sample(kind: .overflow, bytes: writer.bytes))

            writer = ByteWriter()
            let trees = (0..<rng.index(3)).map { index in
                ChangeRecord.TreeChanges(
                    tree: "tree-\(index)",
                    entries: (0..<rng.index(4)).map { _ in
                        ChangeRecord.Entry(
                            key: randomBytes(&rng, 0...10), kind: rng.pick([.created, .updated, .deleted]))
                    })
            }
            let record = CommitRecord(
                generation: 2 + rng.next() % 1_000, timestamp: rng.next(),
                kind: rng.pick([.transaction, .creation, .compaction]),
                catalogRoot: rng.chance(1, in: 4) ? .none : reference(&rng), liveBytes: 0,
                previous: rng.chance(1, in: 4)
                    ? nil : CommitLocation(fileNumber: 1 + rng.next() % 4, address: reference(&rng)),
                changes: ChangeRecord(trees: trees, droppedTrees: (0..<rng.index(2)).map { "gone-\($0)" }))
            _ = CommitRecord.encode(record, liveBytesBeforePage: rng.next() % 1_000_000, into: &writer, at: pageOffset)
            samples.append(Sample(kind: .commit, bytes: writer.bytes))

            let commit = reference(&rng)
            let root = RootRecord(
                generation: rng.next() % 10_000, snapshotFile: 1 + rng.next() % 9, committedLength: commit.end,
                commitPage: commit, catalogRoot: rng.chance(1, in: 4) ? .none : PageAddress(offset: 64, length: 30),
                liveBytes: rng.next() % 100_000, timestamp: rng.next(),
                previous: rng.chance(1, in: 3) ? nil : CommitLocation(fileNumber: 1, address: reference(&rng)))
            samples.append(Sample(kind: .rootSlot, bytes: root.encodedSlot()))
            samples.append(
                Sample(
                    kind: .snapshotHeader,
                    bytes: SnapshotHeader(
                        fileNumber: 1 + rng.next() % 9, createdGeneration: rng.next() % 99, timestamp: rng.next()
                    ).encoded()))
            samples.append(
                Sample(
                    kind: .descriptor,
                    bytes: TreeDescriptor(
                        root: reference(&rng), depth: 1 + rng.index(5), count: rng.next() % 9_999,
                        bytes: rng.next() % 99_999
                    ).encoded()))
        }
        return samples
    }

    // MARK: Mutating

    static func mutate(_ input: [UInt8], _ rng: inout SplitMix64, donor: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0..<(1 + rng.index(3)) {
            switch rng.index(8) {
            case 0, 1:  // flip a few bits
                guard !bytes.isEmpty else { continue }
                for _ in 0..<(1 + rng.index(4)) { bytes[rng.index(bytes.count)] ^= UInt8(1) << rng.index(8) }
            case 2:  // set a byte
                guard !bytes.isEmpty else { continue }
                bytes[rng.index(bytes.count)] = rng.pick([
                    0, 1, 2, 3, 4, 0x7F, 0x80, 0xFE, 0xFF, UInt8(truncatingIfNeeded: rng.next()),
                ])
            case 3:  // an interesting integer over a 2-, 4- or 8-byte field
                let width = rng.pick([2, 4, 8])
                guard bytes.count >= width else { continue }
                let at = rng.index(bytes.count - width + 1)
                let value: UInt64 = rng.pick([
                    0, 1, 24, 63, 64, UInt64(bytes.count), UInt64(bytes.count) &+ 1, pageOffset,
                    pageOffset - 1, 0xFFFF, 0xFFFF_FFFF, UInt64.max, rng.next(),
                ])
                for index in 0..<width { bytes[at + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
            case 4:  // cut
                bytes.removeLast(rng.index(bytes.count + 1))
            case 5:  // extend
                bytes += randomBytes(&rng, 1...16)
            case 6:  // insert or delete a run
                let at = rng.index(bytes.count + 1)
                if rng.chance(1, in: 2) {
                    bytes.insert(contentsOf: randomBytes(&rng, 1...8), at: at)
                } else {
                    bytes.removeSubrange(at..<min(bytes.count, at + 1 + rng.index(8)))
                }
            default:  // splice a run of another sample in
                guard !donor.isEmpty, !bytes.isEmpty else { continue }
                let from = rng.index(donor.count), to = rng.index(bytes.count)
                let run = donor[from..<min(donor.count, from + 1 + rng.index(24))].prefix(bytes.count - to)
                bytes.replaceSubrange(to..<(to + run.count), with: run)
            }
        }
        return bytes
    }

    /// Recomputes what a checksum protects, as a writer would have: a page's length field
    /// and checksum, a root slot's or snapshot header's checksum.
    static func seal(_ bytes: inout [UInt8], kind: Kind) {
        switch kind {
        case .leaf, .branch, .overflow, .commit:
            guard bytes.count >= PageHeader.size else { return }
            store(UInt32(bytes.count), in: &bytes, at: 8)
            store(bytes.withUnsafeBytes { PageHeader.checksum($0[4...], fileOffset: pageOffset) }, in: &bytes, at: 0)
        case .rootSlot:
            guard bytes.count >= RootRecord.slotSize else { return }
            store(CRC32C.checksum(Array(bytes[0..<124])), in: &bytes, at: 124)
        case .snapshotHeader:
            guard bytes.count >= SnapshotHeader.size else { return }
            store(CRC32C.checksum(Array(bytes[0..<60])), in: &bytes, at: 60)
        case .descriptor:
            return
        }
    }

    static func store<T: FixedWidthInteger>(_ value: T, in bytes: inout [UInt8], at offset: Int) {
        for index in 0..<(T.bitWidth / 8) { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }

    // MARK: Decoding and re-encoding

    /// Decodes `bytes` as `kind`; if accepted, returns the re-encoding and the input with
    /// its uninterpreted bytes zeroed (and resealed), which must be equal. Nil if rejected.
    static func roundTrip(_ bytes: [UInt8], kind: Kind) -> (encoded: [UInt8], canonical: [UInt8])? {
        let address = PageAddress(offset: pageOffset, length: UInt32(truncatingIfNeeded: bytes.count))
        var canonical = bytes
        func zero(_ range: Range<Int>) { for index in range where index < canonical.count { canonical[index] = 0 } }
        var writer = ByteWriter()
        do {
            switch kind {
            case .leaf, .branch:
                let node = try TreePage.decode(bytes, address: address, file: "fuzz")
                let generation = bytes.littleEndianUInt64(at: 16)
                switch node {
                case .leaf(let leaf):
                    guard kind == .leaf || bytes[4] == 1 else { break }
                    TreePage.encodeLeaf(
                        keys: leaf.keys, values: leaf.values, generation: generation, into: &writer, at: pageOffset)
                case .branch(let branch):
                    TreePage.encodeBranch(
                        keys: branch.keys, children: branch.children, generation: generation, into: &writer,
                        at: pageOffset)
                }
                zero(5..<6); zero(12..<16)
            case .overflow:
                let value = try TreePage.decodeOverflow(bytes, address: address, file: "fuzz")
                TreePage.encodeOverflow(
                    value, generation: bytes.littleEndianUInt64(at: 16), into: &writer, at: pageOffset)
                zero(5..<8); zero(12..<16)
            case .commit:
                let record = try CommitRecord.decode(bytes, address: address, file: "fuzz")
                _ = CommitRecord.encode(record, liveBytesBeforePage: 0, into: &writer, at: pageOffset)
                store(record.liveBytes, in: &writer.bytes, at: 64)  // as decoded, not recomputed
                seal(&writer.bytes, kind: .commit)
                zero(5..<8); zero(12..<16); zero(41..<44); zero(60..<64); zero(92..<96)
                if record.previous == nil { zero(80..<92) }
            case .rootSlot:
                let record = try RootRecord.decodeSlot(bytes, slot: 0, file: "fuzz")
                writer.bytes = record.encodedSlot()
                zero(68..<72); zero(108..<124)
                // A version 1 slot has no chain value; it re-encodes with chain 0 (and its
                // version, as every slot does).
                if canonical.count >= 56 && canonical.littleEndianUInt32(at: 8) == 1 { zero(52..<56) }
                if record.previous == nil { zero(96..<108) }
                canonical = Array(canonical.prefix(RootRecord.slotSize))  // bytes past slot 0 belong to slot 1
            case .snapshotHeader:
                writer.bytes = try SnapshotHeader.decode(bytes, file: "fuzz").encoded()
                zero(40..<60)
                canonical = Array(canonical.prefix(SnapshotHeader.size))  // pages follow the header
            case .descriptor:
                writer.bytes = try TreeDescriptor.decode(bytes, tree: "fuzz", file: "fuzz", offset: 0).encoded()
                zero(2..<4); zero(32..<40)
            }
        } catch {
            return nil
        }
        if kind != .descriptor { seal(&canonical, kind: kind) }
        return (writer.bytes, canonical)
    }

    /// One shard of the mutations: a quarter each, seeded by shard.
    @Test(arguments: 0..<shards)
    func mutatedStructuresNeverTrapAndRoundTrip(shard: Int) throws {
        let samples = Self.corpus(seed: UInt64(shard) + 1)
        // The unmutated corpus round-trips exactly.
        for sample in samples {
            let trip = Self.roundTrip(sample.bytes, kind: sample.kind)
            #expect(trip != nil && trip!.encoded == sample.bytes, "corpus \(sample.kind) does not round-trip")
        }
        var rng = SplitMix64(seed: 0xF022 &+ UInt64(shard))
        var accepted = [Kind: Int](), tried = [Kind: Int]()
        var failures = 0
        for iteration in 0..<(Self.mutations / Self.shards) {
            let sample = samples[rng.index(samples.count)]
            var bytes = Self.mutate(sample.bytes, &rng, donor: samples[rng.index(samples.count)].bytes)
            if rng.chance(3, in: 4) { Self.seal(&bytes, kind: sample.kind) }
            tried[sample.kind, default: 0] += 1
            guard let trip = Self.roundTrip(bytes, kind: sample.kind) else { continue }
            accepted[sample.kind, default: 0] += 1
            if trip.encoded != trip.canonical {
                failures += 1
                if failures <= 20 {
                    let difference =
                        zip(trip.canonical, trip.encoded).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                        ?? min(trip.canonical.count, trip.encoded.count)
                    let message =
                        "shard \(shard) mutation \(iteration): an accepted \(sample.kind) re-encodes differently: "
                        + "input \(trip.canonical.count) bytes, re-encoded \(trip.encoded.count), first difference at \(difference)"
                    Issue.record(Comment(rawValue: message))
                }
            }
        }
        #expect(failures == 0)
        #expect(
            Kind.allCases.allSatisfy { (accepted[$0] ?? 0) > 0 }, "every decoder accepted some mutations: \(accepted)")
        print(
            "durability A6 shard \(shard): \(Self.mutations / Self.shards) mutations; accepted "
                + Kind.allCases.map { "\($0) \(accepted[$0] ?? 0)/\(tried[$0] ?? 0)" }.joined(separator: ", "))
    }
}
