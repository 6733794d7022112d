import Foundation

extension QueryExecution {
    /// ``matches(of:predicate:source:)`` with `predicate` compiled for this one query
    /// (CompiledPredicate.swift): once, not per record, and not at all when the plan is
    /// exact (its scans read exactly the matches; the predicate is never evaluated).
    func matches(
        of plan: QueryPlanner<Format>.Plan, predicate: Predicate<Instance>?,
        source: ReadSource
    ) throws(FolioError) -> () throws(FolioError) -> (key: [UInt8], instance: Instance)? {
        let compiled = plan.exact ? nil : predicate.map(CompiledPredicate.init)
        return try matches(of: plan, predicate: compiled, source: source)
    }
}
