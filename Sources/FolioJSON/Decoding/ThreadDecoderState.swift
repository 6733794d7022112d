#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Each thread keeps the state of its last decode (the `DecoderState`, its session and its
// member-table arena) for the next one, so that decoding a record allocates neither.
//
// Why this is safe without `Sendable`: a state is reachable from one thread's slot only, and
// a decode takes it out of the slot before using it and puts it back after, all on the same
// thread (a decode is synchronous: it never suspends, so it cannot move to another thread
// between the two). A decode that starts inside another one on the same thread (a type's
// `init(from:)` that decodes JSON itself) finds the slot empty and makes its own state. A
// state goes back only if nothing else holds it or its session (`isKnownUniquelyReferenced`):
// a decoder or container that a type kept past the decode keeps it, so that state is marked
// finished (using the kept object stops the process) and never reused.

/// The calling thread's spare decoder state.
enum ThreadDecoderState {
    /// The thread-specific slot; created once for the process, never deleted. A thread's
    /// state is released when the thread exits.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { releaseSpareState($0) }
        precondition(result == 0, "FolioJSONDecoder: no thread-specific key is left (pthread_key_create: \(result))")
        return key
    }()

    /// The thread's spare state, removed from the slot (so a nested decode cannot take it
    /// too), or a new one.
    @inline(__always)
    static func take() -> DecoderState {
        guard let raw = pthread_getspecific(key) else { return DecoderState() }
        pthread_setspecific(key, nil)
        return Unmanaged<DecoderState>.fromOpaque(raw).takeRetainedValue()
    }

    /// Ends the decode `state` served: it goes back to the slot if nothing kept it, else it
    /// is marked finished for whatever kept it.
    @inline(__always)
    static func giveBack(_ state: inout DecoderState) {
        guard isKnownUniquelyReferenced(&state), isKnownUniquelyReferenced(&state.session),
            pthread_getspecific(key) == nil
        else {
            state.session.finished = true
            return
        }
        state.clearForReuse()
        pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
    }
}

/// The slot's destructor, run when a thread that decoded exits.
private func releaseSpareState(_ raw: UnsafeMutableRawPointer?) {
    guard let raw else { return }
    Unmanaged<DecoderState>.fromOpaque(raw).release()
}
