// The state of a verification walk and how it records problems and counts pages; its
// checks are in TreeVerifier+Files, +Trees, +Pages and +CommitChain.

/// The walk behind ``Store/verify(progress:)``: reads pages without caching them and never
/// stops at the first problem (a damaged subtree is reported and skipped).
struct TreeVerifier {
    let pages: PageSource
    let total: UInt64
    let progress: ((VerificationProgress) -> Void)?
    var problems: [VerificationProblem] = []
    var pagesChecked = 0
    var bytesChecked: UInt64 = 0
    var treesChecked = 0
    var commitsChecked = 0
    /// `bytesChecked` at the last progress report (one report a MiB).
    var reported: UInt64 = 0
    /// The reachable pages of the current overlap window (bounded: see ExtentWindow).
    var extents: ExtentWindow
    /// Bytes of every reachable page, to check they add up to the root's live bytes.
    var reachableBytes: UInt64 = 0
    /// Most reachable pages held in memory at once for the overlap check.
    let extentCapacity: Int

    /// `extentCapacity` bounds the memory of the overlap check (24 bytes an extent); tests
    /// set it small to exercise several windows.
    init(
        pages: PageSource, total: UInt64, progress: ((VerificationProgress) -> Void)?,
        extentCapacity: Int = 1 << 16, after: ExtentWindow.Position? = nil
    ) {
        self.pages = pages
        self.total = total
        self.progress = progress
        self.extentCapacity = extentCapacity
        self.extents = ExtentWindow(capacity: extentCapacity, after: after)
    }

    var file: String { pages.file.path }

    mutating func problem(_ offset: UInt64, _ tree: String?, _ detail: String, file: String? = nil) {
        problems.append(VerificationProblem(file: file ?? self.file, offset: offset, tree: tree, detail: detail))
    }

    mutating func problem(_ error: StorageError, tree: String?, at offset: UInt64) {
        if case .corruption(let corruption) = error {
            problems.append(
                VerificationProblem(
                    file: corruption.file, offset: corruption.offset, tree: tree,
                    detail: corruption.detail + checksumText(corruption)))
        } else {
            problem(offset, tree, "\(error)")
        }
    }

    private func checksumText(_ corruption: Corruption) -> String {
        guard let e = corruption.expectedChecksum, let a = corruption.actualChecksum else { return "" }
        return " (stored 0x\(String(e, radix: 16)), computed 0x\(String(a, radix: 16)))"
    }

    mutating func counted(_ address: PageAddress) {
        pagesChecked += 1
        bytesChecked += UInt64(address.length)
        reachableBytes += UInt64(address.length)
        extents.add(offset: address.offset, length: address.length)
        if let progress, bytesChecked - reported >= 1 << 20 {
            reported = bytesChecked
            progress(VerificationProgress(bytesChecked: bytesChecked, totalBytes: total))
        }
    }
}
