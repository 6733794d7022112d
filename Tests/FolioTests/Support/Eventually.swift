import Foundation

/// Polls `condition` until it holds or 20 seconds pass: for live queries and observers,
/// which deliver on their own queue after a commit returns.
func eventually(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(20)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}
