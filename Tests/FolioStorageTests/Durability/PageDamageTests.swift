import Testing
@testable import FolioStorage
import FolioTestSupport

/// A5, pages: damage to any page of a store is reported as corruption naming the snapshot
/// file, the page's offset and the stored and computed checksums, through the public read
/// that reaches the page (and by `verify`); it is never returned as data, and never traps.
/// (`Store/CorruptionTests.swift` sweeps every byte of one page of each kind through the
/// decoders, and 300 random flips through the API; this extends it to every header bit of
/// every page, 5,000 body bits, whole zeroed pages and pages written at the wrong offset.)
@Suite struct PageDamageTests {
    /// Damages the snapshot file with `damage`, then expects the page's probe, on a fresh
    /// read-only store, to fail with a corruption error for the page; optionally also
    /// expects `verify` to report a problem at the page. Restores the file.
    static func expectReported(
        _ fileSystem: MemoryFileSystem, file: String, original: [UInt8], page: ProbedPage,
        verify: Bool, context: String, damage: (inout [UInt8]) -> Void
    ) {
        var damaged = original
        damage(&damaged)
        fileSystem.setContents(damaged, of: file)
        defer { fileSystem.setContents(original, of: file) }
        do {
            let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(fileSystem, cache: 0))
            defer { reader.close() }
            expectCorruption(file: file, offset: page.address.offset, context) { try page.read(reader.read()) }
            if verify {
                let report = reader.verify()
                #expect(
                    report.problems.contains {
                        $0.file == file && $0.offset == page.address.offset && $0.detail.contains("computed 0x")
                    },
                    "\(context): verify: \(report.problems.prefix(2))")
            }
        } catch {
            Issue.record("\(context): opening failed: \(error)")
        }
    }

    /// Every single-bit flip of every page header (24 bytes) of every reachable page: the
    /// length field, kind, count, generation, reserved bytes and the checksum itself.
    @Test func everyHeaderBitOfEveryPage() throws {
        let fileSystem = try memoryFileSystem()
        let (store, file) = try storeWithEveryPageKind(fileSystem)
        let pages = try probedPages(of: store)
        store.close()
        #expect(Set(pages.map(\.kind)) == ["leaf", "branch", "overflow", "commit"])
        let original = fileSystem.contents(of: file)!
        var flips = 0
        for page in pages {
            for bit in 0..<(PageHeader.size * 8) {
                let at = Int(page.address.offset) + bit / 8
                Self.expectReported(
                    fileSystem, file: file, original: original, page: page, verify: bit % 16 == 0,
                    context: "\(page), header bit \(bit)"
                ) { $0[at] ^= UInt8(1) << (bit % 8) }
                flips += 1
            }
        }
        #expect(flips == pages.count * 192)
        print("durability A5: \(flips) page-header bit flips over \(pages.count) pages, all reported")
    }

    /// 5,000 seeded single-bit flips in page bodies (after the header), over every page.
    @Test func randomBodyBits() throws {
        let fileSystem = try memoryFileSystem()
        let (store, file) = try storeWithEveryPageKind(fileSystem)
        let pages = try probedPages(of: store)
        store.close()
        let original = fileSystem.contents(of: file)!
        var rng = SplitMix64(seed: 0xB0D1)
        for flip in 0..<5_000 {
            let page = pages[rng.index(pages.count)]
            let bodyBits = (Int(page.address.length) - PageHeader.size) * 8
            let bit = PageHeader.size * 8 + rng.index(bodyBits)
            let at = Int(page.address.offset) + bit / 8
            Self.expectReported(
                fileSystem, file: file, original: original, page: page, verify: flip % 50 == 0,
                context: "flip \(flip): \(page), bit \(bit)"
            ) { $0[at] ^= UInt8(1) << (bit % 8) }
        }
    }

    /// Each page zeroed in turn (a lost or unwritten sector range).
    @Test func zeroedPages() throws {
        let fileSystem = try memoryFileSystem()
        let (store, file) = try storeWithEveryPageKind(fileSystem)
        let pages = try probedPages(of: store)
        store.close()
        let original = fileSystem.contents(of: file)!
        for page in pages {
            Self.expectReported(
                fileSystem, file: file, original: original, page: page, verify: true, context: "\(page) zeroed"
            ) { bytes in
                for index in Int(page.address.offset)..<Int(page.address.end) { bytes[index] = 0 }
            }
        }
    }

    /// Each page overwritten by another valid page (a misdirected write): one of the same
    /// length where there is one, whose checksum then fails only because the offset is
    /// folded into it, else the next page in the file.
    @Test func pagesCopiedToTheWrongOffset() throws {
        let fileSystem = try memoryFileSystem()
        let (store, file) = try storeWithEveryPageKind(fileSystem)
        let pages = try probedPages(of: store)
        store.close()
        let original = fileSystem.contents(of: file)!
        var sameLength = 0
        for (index, page) in pages.enumerated() {
            let twin = pages.first {
                $0.address.length == page.address.length && $0.address.offset != page.address.offset
            }
            let source = twin ?? pages[(index + 1) % pages.count]
            if twin != nil { sameLength += 1 }
            Self.expectReported(
                fileSystem, file: file, original: original, page: page, verify: true,
                context: "\(source) copied over \(page)"
            ) { bytes in
                let copy = original[Int(source.address.offset)..<Int(source.address.end)].prefix(
                    Int(page.address.length))
                bytes.replaceSubrange(Int(page.address.offset)..<(Int(page.address.offset) + copy.count), with: copy)
            }
        }
        #expect(sameLength > 0, "at least one copy is a perfect page at the wrong offset")
    }
}
