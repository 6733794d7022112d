import Testing
import Foundation
@testable import Folio

/// The type names the catalog records (Docs/Format.md §22 "Type names and key encodings"):
/// a reader without the app's Swift types goes by these strings, so their spelling is part
/// of the format.
@Suite struct TypeNameTests {
    @Test func standardNamesAreModuleQualified() {
        #expect(TypeName.of(Int.self) == "Swift.Int")
        #expect(TypeName.of(UUID.self) == "Foundation.UUID")
        #expect(TypeName.of(Date.self) == "Foundation.Date")
        #expect(TypeName.of([UInt8].self) == "Swift.Array<Swift.UInt8>")
        #expect(TypeName.of(Int?.self) == "Swift.Optional<Swift.Int>")
    }

    /// A composite's components are listed in order, comma and space between them, inside
    /// `Pack{…}`: the spelling Swift prints for a parameter pack.
    @Test func compositeNamesListTheirComponents() {
        #expect(TypeName.of(Composite<String, Int>.self) == "Folio.Composite<Pack{Swift.String, Swift.Int}>")
        #expect(TypeName.of(Composite<String>.self) == "Folio.Composite<Pack{Swift.String}>")
        #expect(
            TypeName.of(Composite<UUID, Int?, Date>.self)
                == "Folio.Composite<Pack{Foundation.UUID, Swift.Optional<Swift.Int>, Foundation.Date}>")
        #expect(
            TypeName.of(Composite<Composite<String, Int>, Bool>.self)
                == "Folio.Composite<Pack{Folio.Composite<Pack{Swift.String, Swift.Int}>, Swift.Bool}>")
        #expect(
            TypeName.of(Composite<String, Int>?.self)
                == "Swift.Optional<Folio.Composite<Pack{Swift.String, Swift.Int}>>")
    }
}
