import Synchronization

/// The shared, thread-safe log behind a ``RecordingFileSystem`` and its handles.
final class OperationLog: Sendable {
    private struct State {
        var operations: [FileOperation] = []
        var statistics = OperationCounts()
    }

    private let state = Mutex(State())

    /// Appends `operation` and counts it.
    func record(_ operation: FileOperation) {
        state.withLock { state in
            state.operations.append(operation)
            state.statistics.count(operation)
        }
    }

    /// Adds bytes a read returned.
    func countBytesRead(_ count: Int) {
        state.withLock { $0.statistics.bytesRead += count }
    }

    var operations: [FileOperation] { state.withLock { $0.operations } }

    var statistics: OperationCounts { state.withLock { $0.statistics } }

    func reset() {
        state.withLock { $0 = State() }
    }
}
