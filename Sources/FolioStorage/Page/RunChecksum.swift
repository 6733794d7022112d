/// The checksum a version 2 commit page carries over its run (Docs/Format.md §7, "Runs
/// and the chain"): CRC-32C of the previous commit page's stored checksum (u32, little
/// endian) followed by every byte of the run before the commit page.
///
/// Seeding each run with its predecessor's checksum chains the runs, as SQLite's WAL chains
/// its frames: a run left behind in a tail that was later reused was seeded by another
/// predecessor, so it never validates after the run that replaced its own.
enum RunChecksum {
    /// A running (pre-inverted) CRC that has taken in the chain value.
    static func seeded(with chain: UInt32) -> UInt32 {
        withUnsafeBytes(of: chain.littleEndian) { CRC32C.update(0xFFFF_FFFF, $0) }
    }

    /// Continues the running CRC over more of the run.
    static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        CRC32C.update(crc, bytes)
    }

    /// The value stored in the commit page.
    static func finish(_ crc: UInt32) -> UInt32 { ~crc }
}

extension RunChecksum {
    /// Continues the running CRC over one sealed page from the page's own checksum, without
    /// reading the page again: the run covers the page's bytes as written (stored checksum
    /// included), and the page checksum covers its file offset and every byte after the
    /// checksum field (Format.md §4), so with the register's linearity (`CRC32C.shift`)
    ///
    ///     update(s, c ‖ r) = shift(update(s, c) ⊕ update(~0, offset), |r|) ⊕ ~pageChecksum
    ///
    /// where `c` is the stored checksum's four bytes and `r` the rest of the page. Equal to
    /// ``update(_:_:)`` over the page's bytes (RunChecksumShiftTests compares the two).
    static func update(
        _ crc: UInt32, sealedPageChecksum checksum: UInt32, length: Int, fileOffset: UInt64,
        shifter: inout CRC32CShifter
    ) -> UInt32 {
        let afterStoredChecksum = withUnsafeBytes(of: checksum.littleEndian) { CRC32C.update(crc, $0) }
        let offsetRegister = withUnsafeBytes(of: fileOffset.littleEndian) { CRC32C.update(0xFFFF_FFFF, $0) }
        return shifter.shift(afterStoredChecksum ^ offsetRegister, byZeroBytes: length - 4) ^ ~checksum
    }

    /// ``update(_:sealedPageChecksum:length:fileOffset:shifter:)`` for a single page.
    static func update(_ crc: UInt32, sealedPageChecksum checksum: UInt32, length: Int, fileOffset: UInt64) -> UInt32 {
        var shifter = CRC32CShifter()
        return update(crc, sealedPageChecksum: checksum, length: length, fileOffset: fileOffset, shifter: &shifter)
    }
}
