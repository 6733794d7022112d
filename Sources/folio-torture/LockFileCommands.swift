import Foundation
import FolioStorage

// The lock-file commands: another process's view of a `FileSystem.openLockFile` lock, for
// the tests that check it is exclusive across processes and freed when its holder dies.

/// Opens the lock file at `path`, tries its lock once and prints "locked" if it got it or
/// "busy" if another holder has it; exits (releasing the lock) right after.
func tryLockFile(_ path: String) throws(StorageError) {
    let file = try POSIXFileSystem().openLockFile(path)
    defer { file.close() }
    say(try file.tryLock() ? "locked" : "busy")
}

/// Opens the lock file at `path` and tries its lock once: prints "busy" and exits if another
/// holder has it, else prints "held" and keeps it until standard input is closed (or the
/// process is killed), then prints "released".
func holdLockFile(_ path: String) throws(StorageError) {
    let file = try POSIXFileSystem().openLockFile(path)
    defer { file.close() }
    guard try file.tryLock() else { return say("busy") }
    say("held")
    while readLine() != nil {}
    file.unlock()
    say("released")
}
