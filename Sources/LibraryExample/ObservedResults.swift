import Folio
import Observation

/// Observation outside SwiftUI: what a view does when it renders, by hand.
public enum ObservedResults {
    /// Waits until `object` has loaded results that satisfy `condition` and returns them,
    /// or returns nil if its query failed. It reads the object inside
    /// `withObservationTracking` (which registers what it read), and waits for the one
    /// `onChange` call the next change makes: on the main actor, where the object changes.
    @MainActor
    public static func results<Format: DatastoreFormat>(
        of object: ObservableResults<Format>, where condition: @Sendable ([Format.Instance]) -> Bool
    ) async -> [Format.Instance]? {
        while object.phase != .loaded || !condition(object.results) {
            if object.error != nil { return nil }
            await withCheckedContinuation { changed in
                withObservationTracking {
                    _ = object.results
                    _ = object.phase
                } onChange: {
                    changed.resume()
                }
            }
        }
        return object.results
    }
}
