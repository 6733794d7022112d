import Folio

// The library's values by key (Docs/Guide.md, section 11): settings and counters kept in the
// persistence's key-value store, beside the books.

extension ValueKeys {
    /// Books published through ``Library/publish(_:withNewAuthors:)``, counted in the same
    /// transaction as the books, so the count never disagrees with them.
    public static let publishedCount = ValueKey<Int>("library/publishedCount", default: 0)
    /// The last shelf the reader browsed, restored at the next launch.
    public static let lastShelf = ValueKey<String?>("library/lastShelf")
    /// How the reader likes the catalogue shown.
    public static let display = ValueKey<DisplaySettings>("library/display", default: DisplaySettings())
}

/// How the reader likes the catalogue shown: a small `Codable` value kept by key.
public struct DisplaySettings: Codable, Sendable, Equatable {
    /// Newest first rather than by title.
    public var sortByYear: Bool
    /// Books per page.
    public var pageSize: Int

    /// Settings; the defaults are the app's.
    public init(sortByYear: Bool = false, pageSize: Int = 20) {
        self.sortByYear = sortByYear
        self.pageSize = pageSize
    }
}

extension Library {
    /// Remembers the shelf the reader browsed: read back at once, durable within
    /// milliseconds (or after `values.flush()`).
    public func remember(shelf: String) throws {
        try persistence.values.set(shelf, for: .lastShelf)
    }

    /// Changes the display settings with `change`.
    public func updateDisplay(_ change: (inout DisplaySettings) -> Void) throws {
        var display = persistence.values[.display]
        change(&display)
        try persistence.values.set(display, for: .display)
    }
}
