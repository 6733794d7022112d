/// A page a commit wrote, kept to warm the page cache once the commit has succeeded.
///
/// The cache is warmed after the store's write section is released, not inside it: with
/// several transactions committing at once, the section is where they queue, and inserting
/// a commit's pages (with the evictions that frees) was a large part of the time spent in
/// it (perf, four writers of 100-record transactions). That is safe because a successful
/// commit's pages are committed bytes, which nothing writes over (Docs/Architecture.md,
/// invariant 1), and because the pages are in the file before the section is released: a
/// read that misses the cache meanwhile reads the same bytes from the file. A failed commit
/// warms nothing, so the abandoned bytes a later commit writes over are never cached.
struct WrittenPage {
    let key: PageCache.Key
    let address: PageAddress
    /// The page as the cache will hold it (a leaf as its bytes, ``CachedPage/writtenLeaf(_:)``).
    let page: CachedPage
}
