#if canImport(Darwin)
import Foundation

// Foundation's UndoManager as an UndoRegistrar. Apple platforms only: swift-corelibs-
// Foundation has no UndoManager, so this branch is not compiled on Linux, where the tests
// run; it is small on purpose, and reviewed by hand.
extension UndoManager: UndoRegistrar {
    /// Registers `handler` as the undo of the action named `name` (its menu title).
    @MainActor public func registerUndo(named name: String?, handler: @escaping @MainActor () -> Void) {
        // Whatever isolation the SDK gives the handler parameter: UndoManager calls its
        // handlers where undo() or redo() was called, which for an Edit menu is the main
        // thread; the box carries the main-actor closure there.
        let box = MainActorHandler(run: handler)
        registerUndo(withTarget: self) { _ in MainActor.assumeIsolated { box.run() } }
        if let name { setActionName(name) }
    }
}

/// A main-actor closure carried through a parameter that may require `Sendable`: it is only
/// ever called on the main actor (`MainActor.assumeIsolated` checks that).
private struct MainActorHandler: @unchecked Sendable {
    let run: @MainActor () -> Void
}
#endif
