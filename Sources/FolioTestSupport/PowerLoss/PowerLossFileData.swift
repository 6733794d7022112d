/// The bytes of one ``PowerLossFileSystem`` file: what is durable, what the running process
/// sees, and the mutations in between.
struct PowerLossFileData: Sendable {
    /// A change made since the last sync.
    enum Mutation: Sendable, Equatable {
        case write(offset: Int, bytes: [UInt8])
        case truncate(length: Int)
    }

    /// The granularity at which an unsynced write can tear.
    static let sectorSize = 512

    /// The contents as of the last sync: these survive any crash.
    var durable: [UInt8]
    /// The contents with every mutation applied: what reads return.
    var live: [UInt8]
    /// The mutations since the last sync, oldest first.
    var pending: [Mutation] = []

    init(durable: [UInt8] = []) {
        self.durable = durable
        live = durable
    }

    /// Bytes carried by pending writes.
    var pendingBytes: Int {
        pending.reduce(0) { total, mutation in
            if case .write(_, let bytes) = mutation { return total + bytes.count }
            return total
        }
    }

    mutating func write(_ bytes: [UInt8], at offset: Int) {
        guard !bytes.isEmpty else { return }
        Self.overwrite(&live, with: bytes[...], at: offset)
        pending.append(.write(offset: offset, bytes: bytes))
    }

    mutating func truncate(to length: Int) {
        Self.resize(&live, to: length)
        pending.append(.truncate(length: length))
    }

    /// Makes every pending mutation durable.
    mutating func sync() {
        durable = live
        pending = []
    }

    /// The contents a crash could leave, per `mode` (see ``CrashMode``).
    /// With `tearingSectors`, a torn write's sectors may themselves tear (see
    /// ``PowerLossFileSystem/crashImage(mode:seed:tearingSectors:)``).
    func crashContents(
        mode: CrashMode, tearingSectors: Bool = false, using rng: inout some RandomNumberGenerator
    ) -> [UInt8] {
        switch mode {
        case .durableOnly: return durable
        case .everything: return live
        case .random: break
        }
        var bytes = durable
        for mutation in pending.shuffled(using: &rng) {
            switch mutation {
            case .truncate(let length):
                if Bool.random(using: &rng) { Self.resize(&bytes, to: length) }
            case .write(let offset, let data):
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: break  // lost
                case 1: Self.overwrite(&bytes, with: data[...], at: offset)  // whole
                default:  // torn: each sector-aligned piece independently
                    for piece in Self.sectorPieces(offset: offset, count: data.count) where Bool.random(using: &rng) {
                        if tearingSectors && Bool.random(using: &rng) {
                            // A torn sector: a device that does not write 512 bytes atomically
                            // leaves a prefix of the new bytes over the old ones.
                            let kept = Int.random(in: 0..<piece.count, using: &rng)
                            let prefix = piece.lowerBound..<(piece.lowerBound + kept)
                            Self.overwrite(&bytes, with: data[prefix], at: offset + prefix.lowerBound)
                        } else {
                            Self.overwrite(&bytes, with: data[piece], at: offset + piece.lowerBound)
                        }
                    }
                }
            }
        }
        return bytes
    }

    /// The ranges (relative to the write's start) of a write of `count` bytes at `offset`
    /// split at absolute multiples of ``sectorSize``.
    static func sectorPieces(offset: Int, count: Int) -> [Range<Int>] {
        var pieces: [Range<Int>] = []
        var start = 0
        while start < count {
            let absolute = offset + start
            let sectorEnd = (absolute / sectorSize + 1) * sectorSize
            let end = min(count, sectorEnd - offset)
            pieces.append(start..<end)
            start = end
        }
        return pieces
    }

    /// Writes `source` at `offset` of `target`, zero-filling any gap past its end.
    static func overwrite(_ target: inout [UInt8], with source: ArraySlice<UInt8>, at offset: Int) {
        let end = offset + source.count
        // Arrays and one copy, not repeatElement and replaceSubrange: those take generic
        // per-element paths in debug builds, which made crash images the tests' bottleneck.
        if target.count < end { target.append(contentsOf: [UInt8](repeating: 0, count: end - target.count)) }
        guard !source.isEmpty else { return }
        target.withUnsafeMutableBufferPointer { target in
            source.withUnsafeBufferPointer { source in
                (target.baseAddress! + offset).update(from: source.baseAddress!, count: source.count)
            }
        }
    }

    static func resize(_ bytes: inout [UInt8], to length: Int) {
        if bytes.count > length {
            bytes.removeLast(bytes.count - length)
        } else if bytes.count < length {
            bytes.append(contentsOf: [UInt8](repeating: 0, count: length - bytes.count))
        }
    }
}

/// One file (inode) of a ``PowerLossFileSystem``. A class so that open handles keep reading
/// it after its last name is removed.
final class PowerLossInode: @unchecked Sendable {
    /// The inode number, reported by ``PowerLossFileSystem/identity(of:)``.
    let number: UInt64
    /// Guarded by the owning file system's lock.
    var data: PowerLossFileData

    init(number: UInt64, data: PowerLossFileData = PowerLossFileData()) {
        self.number = number
        self.data = data
    }
}
