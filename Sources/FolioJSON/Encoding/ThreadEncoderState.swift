#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Each thread keeps the state of its last top-level encode (the `EncodingState`, its output
// buffer and frame stack) for the next one, so that encoding a record allocates none of them.
//
// Why this is safe without `Sendable`: a state is reachable from one thread's slot only, and
// an encode takes it out of the slot before using it and puts it back after, on the same
// thread (an encode is synchronous: it cannot move to another thread in between). An encode
// that starts inside another one on the same thread (a type's `encode(to:)` that encodes JSON
// itself) finds the slot empty and makes its own state. A state goes back only if nothing
// else holds it (`isKnownUniquelyReferenced`): an `Encoder` or container a type kept past the
// encode keeps its state, which is then never reused, so a late write through it cannot reach
// another encode's output.

/// The calling thread's spare encoder state.
enum ThreadEncoderState {
    /// The thread-specific slot; created once for the process, never deleted. A thread's
    /// state is released when the thread exits.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { releaseSpareEncodingState($0) }
        precondition(result == 0, "FolioJSONEncoder: no thread-specific key is left (pthread_key_create: \(result))")
        return key
    }()

    /// The thread's spare state, removed from the slot (so a nested encode cannot take it
    /// too) and reset for `options`, or a new one.
    @inline(__always)
    static func take(options: EncodingOptions) -> EncodingState {
        guard let raw = pthread_getspecific(key) else {
            return EncodingState(options: options, basePath: [], isTopLevel: true)
        }
        pthread_setspecific(key, nil)
        let state = Unmanaged<EncodingState>.fromOpaque(raw).takeRetainedValue()
        state.reset(options: options)
        return state
    }

    /// Ends the encode `state` served: it goes back to the slot if nothing kept it, the
    /// slot is free and its buffer stayed small; else it is released with its last holder.
    @inline(__always)
    static func giveBack(_ state: inout EncodingState) {
        guard isKnownUniquelyReferenced(&state), state.isReusable, pthread_getspecific(key) == nil else { return }
        state.clearForReuse()
        pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
    }
}

/// The slot's destructor, run when a thread that encoded exits.
private func releaseSpareEncodingState(_ raw: UnsafeMutableRawPointer?) {
    guard let raw else { return }
    Unmanaged<EncodingState>.fromOpaque(raw).release()
}
