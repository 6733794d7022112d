import Testing
import Foundation
@testable import Folio

/// `StoredPropertyReader` reads exactly what applying its key path reads, whichever way it
/// takes: the stored property's bytes, `Identifiable.id`, or the key path itself.
@Suite struct StoredPropertyReaderTests {
    struct Inner: Sendable, Equatable {
        var label: String
        var weight: Double
    }

    struct Item: Identifiable, Sendable, Equatable {
        var id: UUID
        var count: Int
        var name: String
        var tags: [String]
        var inner: Inner
        var maybe: Int?
        var doubled: Int { count * 2 }
    }

    /// An `id` that is computed: the requirement's key path must call it.
    struct Computed: Identifiable, Sendable {
        var raw: String
        var id: String { "id-" + raw }
    }

    final class Box: Identifiable, Sendable {
        let id: Int
        let name: String
        init(id: Int, name: String) {
            self.id = id
            self.name = name
        }
    }

    static func items() -> [Item] {
        (0..<40).map { (n: Int) -> Item in
            let name = String(repeating: "n\(n)", count: n % 5)
            let tags: [String] = (0..<(n % 3)).map { "t\($0)" }
            let inner = Inner(label: "label \(n)", weight: Double(n) / 3)
            let maybe: Int? = n % 2 == 0 ? nil : n
            return Item(id: UUID(), count: n * 7 - 100, name: name, tags: tags, inner: inner, maybe: maybe)
        }
    }

    @Test func storedPropertiesReadAsTheKeyPathDoes() {
        #expect(StoredPropertyReader(\Item.inner.label).offset != nil)
        #expect(StoredPropertyReader(\Item.maybe).offset != nil)
        for item in Self.items() {
            #expect(StoredPropertyReader(\Item.count).read(item) == item.count)
            #expect(StoredPropertyReader(\Item.name).read(item) == item.name)
            #expect(StoredPropertyReader(\Item.tags).read(item) == item.tags)
            #expect(StoredPropertyReader(\Item.inner).read(item) == item.inner)
            #expect(StoredPropertyReader(\Item.inner.label).read(item) == item.inner.label)
            #expect(StoredPropertyReader(\Item.inner.weight).read(item) == item.inner.weight)
            #expect(StoredPropertyReader(\Item.maybe).read(item) == item.maybe)
            #expect(StoredPropertyReader(\Item.id).read(item) == item.id)
        }
    }

    @Test func theIdentifiableRequirementReadsTheConformancesID() {
        func requirementPath<T: Identifiable>(_: T.Type) -> KeyPath<T, T.ID> & Sendable { \T.id }
        #expect(StoredPropertyReader(requirementPath(Item.self)).identifiable != nil)
        #expect(StoredPropertyReader(requirementPath(Box.self)).identifiable != nil)
        for item in Self.items() {
            #expect(StoredPropertyReader(requirementPath(Item.self)).read(item) == item.id)
        }
        for raw in ["", "a", String(repeating: "long ", count: 20)] {
            let value = Computed(raw: raw)
            #expect(StoredPropertyReader(requirementPath(Computed.self)).read(value) == "id-" + raw)
        }
        let box = Box(id: 42, name: "box")
        #expect(StoredPropertyReader(requirementPath(Box.self)).read(box) == 42)
    }

    @Test func computedPropertiesAndClassesGoThroughTheKeyPath() {
        let computed = StoredPropertyReader(\Item.doubled)
        #expect(computed.offset == nil && computed.identifiable == nil)
        #expect(StoredPropertyReader(\Box.name).offset == nil)
        for item in Self.items() {
            #expect(StoredPropertyReader(\Item.doubled).read(item) == item.count * 2)
            #expect(StoredPropertyReader(\Item.tags.count).read(item) == item.tags.count)
        }
        let box = Box(id: 7, name: "seven")
        #expect(StoredPropertyReader(\Box.name).read(box) == "seven")
        #expect(StoredPropertyReader(\Box.id).read(box) == 7)
    }

    /// Reading a value that holds references copies it properly: the copy outlives the root.
    @Test func aReadValueOutlivesItsRoot() {
        let reader = StoredPropertyReader(\Item.tags)
        var kept: [[String]] = []
        for item in Self.items() { kept.append(reader.read(item)) }
        #expect(kept == Self.items().map(\.tags))
    }
}
