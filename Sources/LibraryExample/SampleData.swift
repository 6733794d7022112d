import Foundation

/// Deterministic sample data for the worked example.
public enum SampleData {
    static let first = [
        "Ada", "Basil", "Clara", "Dmitri", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jun", "Kofi", "Lena",
    ]
    static let last = [
        "Okafor", "Lindqvist", "Moreau", "Tanaka", "Silva", "Novak", "Haddad", "Kowalski", "Reyes", "Osei",
    ]
    static let words = [
        "Night", "River", "Glass", "Orchard", "Winter", "Signal", "Harbor", "Engine", "Garden", "Letters",
        "Mirror", "Silence", "Atlas", "Ember", "Voyage", "Lantern", "Meridian", "Thread", "Canyon", "Parable",
    ]

    /// `count` authors with identifiers `0 ..< count`.
    public static func authors(_ count: Int) -> [Author] {
        (0..<count).map { n in
            Author(
                id: n, name: "\(first[n % first.count]) \(last[(n / first.count) % last.count])",
                born: 1900 + (n * 37) % 100)
        }
    }

    /// The title of book `n`.
    public static func title(_ n: Int) -> String {
        let article = ["The ", "", "A ", ""][n % 4]
        return "\(article)\(words[n % words.count]) of \(words[(n / words.count) % words.count])"
            + (n >= 400 ? " \(n / 400)" : "")
    }

    /// The identifier of book `n`.
    public static func bookID(_ n: Int) -> UUID {
        UUID(uuidString: String(format: "00000000-0000-4000-8000-%012x", n))!
    }

    /// `count` current books by `authors` authors; every third has a co-author.
    public static func books(_ count: Int, authors: Int) -> [Book] {
        (0..<count).map { n in
            var ids = [n % authors]
            if n % 3 == 0 { ids.append((n * 7 + 1) % authors) }
            return Book(
                id: bookID(n), title: title(n), authorIDs: Array(Set(ids)).sorted(),
                isbn: String(format: "978-1-%07d-%d", n, n % 10), year: 1950 + (n * 13) % 75)
        }
    }

    /// `count` release-1 books, numbered from `offset`.
    public static func oldBooks(_ count: Int, offset: Int, authors: Int) -> [BookV1] {
        (offset..<(offset + count)).map { n in
            BookV1(
                id: bookID(n), title: title(n), authorID: n % authors, isbn: String(format: "978-1-%07d-%d", n, n % 10))
        }
    }
}
