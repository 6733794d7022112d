/// The part of a result sequence a caller asks for: skip `offset`, then at most `limit`.
/// Both come from callers (often from user input), so they are checked, never trusted:
/// a negative one is a typed error, and their sum saturates instead of overflowing.
struct ResultWindow {
    let limit: Int?
    let offset: Int

    /// The window, or ``FolioError/invalidArgument(name:reason:)`` naming the negative one.
    init(limit: Int?, offset: Int = 0) throws(FolioError) {
        if let limit, limit < 0 {
            throw .invalidArgument(name: "limit", reason: "\(limit) is negative; a limit is 0 or more (nil for none)")
        }
        if offset < 0 {
            throw .invalidArgument(name: "offset", reason: "\(offset) is negative; an offset is 0 or more")
        }
        self.limit = limit
        self.offset = offset
    }

    /// How many results to keep from the start (`limit + offset`; `Int.max` when the sum does
    /// not fit), nil without a limit.
    var end: Int? {
        limit.map { limit in
            let (sum, overflow) = limit.addingReportingOverflow(offset)
            return overflow ? Int.max : sum
        }
    }
}
