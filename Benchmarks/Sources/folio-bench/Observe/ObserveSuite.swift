/// The `observe` suite: Dflat's three change-subscription cases, each over 10,000 records
/// updated in one transaction while 1,000 subscriptions watch:
/// - `observe-results-by-id`: 1,000 fetched results, each one record by primary key;
/// - `observe-objects`: 1,000 single-object subscriptions;
/// - `observe-results-range`: 1,000 fetched results of about 1,000 records each (a range
///   query), the update rotating every result set.
///
/// Timed: from the commit to the delivery of the last update. Not written yet: Folio's
/// observation does not exist; GRDB's side (`ValueObservation`) comes with it, so both
/// are measured by the same harness code. Until then every row is "not yet available".
enum ObserveSuite {
    static let name = "observe"
    static let workloadNames = ["observe-results-by-id", "observe-objects", "observe-results-range"]

    static func run(_ context: BenchContext) {
        for system in ["folio", "grdb"] {
            for workload in workloadNames {
                context.unavailable(UnavailableWorkload(
                    suite: name, name: workload, system: system, n: context.sizes.crudN, durability: .flag(context.durability),
                    reason: "not yet available: waits for Folio's change observation"))
            }
        }
    }
}
