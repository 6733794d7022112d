import Foundation
import Folio
import FolioStorage

/// The exit statuses of `folio` (Docs/CLI.md, "Exit status"; `folio --help`).
enum ExitStatus: Int32, Sendable, CaseIterable {
    /// The command did what it was asked.
    case success = 0
    /// `verify` found problems (each printed with its location).
    case problemsFound = 1
    /// The command line is wrong: unknown command or option, a missing or invalid value,
    /// a missing or extra argument.
    case usage = 2
    /// The store cannot be used: none at the path, not a Folio store, a newer format
    /// version, unreadable or damaged files, a destination that is not empty; or the
    /// operation failed on the way.
    case storeError = 3
    /// Another process holds the store's write lock and the command needs to write.
    case locked = 4
    /// The store has no datastore or index of that name (or the index is not built yet).
    case notFound = 5

    /// The lines of `folio --help` and Docs/CLI.md.
    var meaning: String {
        switch self {
        case .success: "success"
        case .problemsFound: "verify found problems in the store"
        case .usage: "usage error: unknown command or option, missing or invalid value, missing or extra argument"
        case .storeError:
            "the store cannot be used or the operation failed: missing, not a Folio store, newer format, unreadable or damaged, destination not empty"
        case .locked: "the store is locked by another writer (compact needs the write lock)"
        case .notFound: "no datastore or index of that name in the store (or the index is not built yet)"
        }
    }
}

/// A failure that ends the command: a one-line message and an exit status.
struct CommandFailure: Error, Sendable {
    let message: String
    let status: ExitStatus

    init(_ message: String, status: ExitStatus) {
        self.message = message
        self.status = status
    }

    /// The message and status for any error a command throws: the typed errors of the
    /// libraries keep their own descriptions; the status follows what went wrong.
    init(_ error: any Error) {
        switch error {
        case let failure as CommandFailure:
            self = failure
        case let usage as UsageError:
            let hint = usage.command.map { " (see 'folio \($0) --help')" } ?? " (see 'folio --help')"
            self.init((usage.command.map { "\($0): " } ?? "") + usage.message + hint, status: .usage)
        case let storage as StorageError:
            self.init(storage.description, status: Self.status(of: storage))
        case let folio as FolioError:
            switch folio {
            case .storage(let storage): self.init(storage.description, status: Self.status(of: storage))
            case .unknownDatastore, .unknownIndex, .indexNotBuilt: self.init(folio.description, status: .notFound)
            case .invalidValue: self.init(folio.description, status: .usage)
            default: self.init(folio.description, status: .storeError)
            }
        default:
            self.init(Self.oneLine(String(describing: error)), status: .storeError)
        }
    }

    private static func status(of error: StorageError) -> ExitStatus {
        switch error {
        case .lockedByAnotherWriter, .alreadyOpenInThisProcess: .locked
        default: .storeError
        }
    }

    /// Keeps a message on one line, whatever it holds.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }
}
