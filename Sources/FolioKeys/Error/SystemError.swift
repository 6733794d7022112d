#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `errno` values the engine names, and their messages, without Foundation.
public enum SystemError {
    /// Input/output error.
    public static let io: Int32 = EIO
    /// No space left on device.
    public static let noSpace: Int32 = ENOSPC
    /// No such file or directory.
    public static let notFound: Int32 = ENOENT
    /// Interrupted system call.
    public static let interrupted: Int32 = EINTR
    /// Permission denied.
    public static let accessDenied: Int32 = EACCES
    /// Read-only file system.
    public static let readOnlyFileSystem: Int32 = EROFS
    /// File exists.
    public static let exists: Int32 = EEXIST
    /// Resource temporarily unavailable (a held lock).
    public static let wouldBlock: Int32 = EWOULDBLOCK
    /// Bad file descriptor (a closed or poisoned handle).
    public static let badDescriptor: Int32 = EBADF

    /// The system's message for an `errno` value.
    public static func message(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}
