/// Path helpers shared by the test file systems.
enum TestFilePath {
    /// `path` without a trailing `/` (except for the root), as ``MemoryFileSystem`` stores it.
    static func normalize(_ path: String) -> String {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// `path` relative to `root`: `"."` for the root itself, the remainder for a path inside
    /// it, and `path` unchanged otherwise.
    static func relative(_ path: String, to root: String) -> String {
        let root = normalize(root)
        let path = normalize(path)
        if path == root { return "." }
        let prefix = root == "/" ? "/" : root + "/"
        if path.hasPrefix(prefix) { return String(path.dropFirst(prefix.count)) }
        return path
    }
}
