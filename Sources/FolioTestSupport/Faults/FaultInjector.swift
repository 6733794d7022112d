import FolioStorage
import Synchronization

/// The shared, thread-safe counter and plan behind a ``FaultInjectingFileSystem`` and its
/// handles: every seam call asks it, in one global sequence, whether to go ahead.
final class FaultInjector: Sendable {
    /// What a call should do.
    enum Verdict: Equatable {
        /// Forward the call.
        case proceed
        /// Throw `errno` `code` without forwarding.
        case fail(code: Int32)
        /// Forward the first `keep` bytes of the write, then throw `errno` `code`.
        case shortWrite(keep: Int, code: Int32)
    }

    private struct State {
        var plan: FaultPlan?
        var callCount = 0
        var failedOperations: [FileOperation] = []
        /// Set once a persistent fault has fired: later mutating calls fail with this errno.
        var persistentCode: Int32?
        /// If set, only calls on paths it accepts are counted or failed.
        var faultedPaths: (@Sendable (String) -> Bool)?
    }

    let countedKinds: Set<FileOperation.Kind>
    private let state: Mutex<State>

    init(plan: FaultPlan?, countedKinds: Set<FileOperation.Kind>) {
        self.countedKinds = countedKinds.filter(\.canFail)
        state = Mutex(State(plan: plan))
    }

    var plan: FaultPlan? {
        get { state.withLock { $0.plan } }
        set {
            state.withLock {
                $0.plan = newValue; $0.persistentCode = nil
            }
        }
    }

    var callCount: Int { state.withLock { $0.callCount } }

    var faultedPaths: (@Sendable (String) -> Bool)? {
        get { state.withLock { $0.faultedPaths } }
        set { state.withLock { $0.faultedPaths = newValue } }
    }

    var failedOperations: [FileOperation] { state.withLock { $0.failedOperations } }

    func reset() {
        state.withLock { state in
            state.callCount = 0
            state.failedOperations = []
            state.persistentCode = nil
        }
    }

    /// Counts `operation` if its kind is counted, and decides its fate.
    func verdict(for operation: FileOperation) -> Verdict {
        state.withLock { state -> Verdict in
            // Calls on paths outside the filter are invisible to the plan: neither counted nor failed.
            if let accepts = state.faultedPaths, !accepts(operation.path) { return .proceed }
            if countedKinds.contains(operation.kind) {
                state.callCount += 1
                if let plan = state.plan, state.callCount == plan.failingCall {
                    let code = plan.code(for: operation)
                    if plan.persistence == .persistent { state.persistentCode = code }
                    state.failedOperations.append(operation)
                    if plan.kind == .shortWrite, case .write(_, _, let count) = operation {
                        return .shortWrite(keep: count / 2, code: code)
                    }
                    return .fail(code: code)
                }
            }
            if let code = state.persistentCode, operation.isMutating {
                state.failedOperations.append(operation)
                return .fail(code: code)
            }
            return .proceed
        }
    }

    /// Throws the injected error if `operation` is to fail; for calls other than writes.
    func admit(_ operation: FileOperation) throws(StorageError) {
        switch verdict(for: operation) {
        case .proceed: return
        case .fail(let code), .shortWrite(_, let code): throw Self.error(operation, code)
        }
    }

    static func error(_ operation: FileOperation, _ code: Int32) -> StorageError {
        .io(operation: operation.kind.systemCallName, path: operation.path, code: code)
    }
}
