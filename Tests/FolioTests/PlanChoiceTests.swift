import Testing
import Foundation
import Folio

/// Which access the planner picks when a conjunction has several (no statistics: by the
/// shape of each condition). An equality on the identifier beats every index; otherwise a
/// narrower shape wins, and the identifier only breaks a tie of shapes.
@Suite struct PlanChoiceTests {
    struct Task: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var priority: Int
        var code: Int
    }

    struct Tasks: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "tasks"
        static let currentVersion = Version.one
        typealias Instance = Task
        let priority = Index(\Task.priority)
        let code = OneToOneIndex(\Task.code)
    }

    @Test func theNarrowerShapeWinsAndTheIdentifierBreaksTies() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let tasks = persistence.datastore(for: Tasks.self)
        let all = (1...200).map { Task(id: $0, priority: $0 * 37 % 100, code: 1_000 + $0) }
        try await persistence.perform { for task in all { try await tasks.persist(task) } }

        func name(_ plan: QueryPlan) -> String? {
            switch plan.access {
            case .index(let name, _): return name
            case .identifierRange: return "identifier"
            default: return nil
            }
        }
        let cases: [(Predicate<Task>, String, (Task) -> Bool)] = [
            // A range of the index bounded on both sides against a half-open identifier range.
            (
                #Predicate { (40..<50).contains($0.priority) && $0.id <= 100 }, "priority",
                { (40..<50).contains($0.priority) && $0.id <= 100 }
            ),
            // The same shape on both: the identifier (no second lookup).
            (
                #Predicate { (40..<50).contains($0.priority) && (10..<150).contains($0.id) }, "identifier",
                { (40..<50).contains($0.priority) && (10..<150).contains($0.id) }
            ),
            (#Predicate { $0.priority >= 40 && $0.id >= 100 }, "identifier", { $0.priority >= 40 && $0.id >= 100 }),
            // An equality on an index beats a bounded identifier range.
            (
                #Predicate { $0.priority == 44 && (10..<150).contains($0.id) }, "priority",
                { $0.priority == 44 && (10..<150).contains($0.id) }
            ),
            // An equality on the identifier beats even a unique index's.
            (#Predicate { $0.code == 1_050 && $0.id == 50 }, "identifier", { $0.code == 1_050 && $0.id == 50 }),
            (#Predicate { $0.code == 1_050 && $0.priority == 50 }, "code", { $0.code == 1_050 && $0.priority == 50 }),
        ]
        for (predicate, expected, matches) in cases {
            let plan = try await tasks.explain(where: predicate)
            #expect(name(plan) == expected, "\(plan)")
            #expect(try await tasks.fetch(where: predicate).collect() == all.filter(matches), "\(plan)")
        }
    }
}
