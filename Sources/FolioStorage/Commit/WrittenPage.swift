/// A page a commit wrote, kept to warm the page cache once the commit has succeeded.
///
/// The cache is warmed after the store's write section is released, not inside it: with
/// several transactions committing at once, the section is where they queue, and decoding
/// a written leaf and inserting pages (with the evictions that frees) were about a third
/// of the time spent in it (perf, four writers of 100-record transactions). That is safe
/// because a successful commit's pages are committed bytes, which nothing writes over
/// (Docs/Architecture.md, invariant 1), and because the pages are in the file before the
/// section is released: a read that misses the cache meanwhile reads the same bytes from
/// the file. A failed commit warms nothing, so the abandoned bytes a later commit writes
/// over are never cached.
struct WrittenPage {
    enum Content {
        /// A page as the cache holds it.
        case decoded(CachedPage)
        /// A leaf as written, in storage of its own: decoded when the cache is warmed.
        case leafBytes([UInt8])
    }

    let key: PageCache.Key
    let address: PageAddress
    let content: Content

    /// The page as the cache holds it, or nil if a leaf does not decode (it was encoded
    /// moments ago by this process, so it does; the cache is only a cache either way).
    func cachedPage(file: String) -> CachedPage? {
        switch content {
        case .decoded(let page): return page
        case .leafBytes(let bytes):
            return try? CachedPage.node(TreePage.decodeWritten(bytes, address: address, file: file))
        }
    }
}
