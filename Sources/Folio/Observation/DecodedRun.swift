import FolioStorage

/// The new instances of one index's changed entries (``CommitDelta/added(index:unique:)``),
/// by position, decoded once for every live query of the commit. Stored contiguously, so a
/// query takes the instances of its range as one array copy instead of one lookup, one
/// `Result` and one append per record (which, over a thousand queries of a thousand
/// records each, cost more than the decoding itself).
final class DecodedRun<Instance: Sendable>: @unchecked Sendable {
    // @unchecked: used on the hub's serial queue only, with the delta that owns it.
    private let storage: UnsafeMutablePointer<Instance>
    /// Invariant: `storage[i]` is initialized exactly when `state[i] == .decoded`.
    private var state: [State]
    private var failures: [Int: FolioError] = [:]

    private enum State: UInt8 {
        case pending, decoded, failed, missing
    }

    init(count: Int) {
        storage = .allocate(capacity: max(count, 1))
        state = Array(repeating: .pending, count: count)
    }

    deinit {
        for position in state.indices where state[position] == .decoded {
            (storage + position).deinitialize(count: 1)
        }
        storage.deallocate()
    }

    /// The instances at `positions`, decoding those not decoded yet with `decode` (nil: no
    /// record). Records that are missing are left out; the first failure is returned instead.
    func instances(
        _ positions: Range<Int>, decode: (Int) -> Result<Instance, FolioError>?
    ) -> Result<[Instance], FolioError> {
        var complete = true
        for position in positions {
            if state[position] == .pending {
                switch decode(position) {
                case .success(let instance)?:
                    (storage + position).initialize(to: instance)
                    state[position] = .decoded
                case .failure(let error)?:
                    failures[position] = error
                    state[position] = .failed
                case nil:
                    state[position] = .missing
                }
            }
            switch state[position] {
            case .decoded: break
            case .failed: return .failure(failures[position]!)
            case .pending, .missing: complete = false
            }
        }
        if complete {
            return .success(Array(UnsafeBufferPointer(start: storage + positions.lowerBound, count: positions.count)))
        }
        return .success(positions.filter { state[$0] == .decoded }.map { storage[$0] })
    }

    /// Whether the record at `position` was found (after ``instances(_:decode:)`` covered it).
    func isPresent(_ position: Int) -> Bool {
        state[position] == .decoded
    }
}
