#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The calling thread, as a number that is never 0: how a write transaction tells the
/// thread running its statement from another thread sharing it.
func currentThreadIdentity() -> UInt {
    #if canImport(Darwin)
    return UInt(bitPattern: Int(bitPattern: pthread_self()))
    #else
    return UInt(pthread_self())
    #endif
}
