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
