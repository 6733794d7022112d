#if canImport(SwiftUI)
import Folio
import SwiftUI

// SwiftUI exists on Apple platforms only: the Linux CI does not compile this file. It is the
// Guide's SwiftUI example; the object it shows, ObservableResults, is tested everywhere.

/// The library's books by title, with a search field: a view over a live query. The app
/// puts the persistence in the environment once, at its root:
/// `ShelfView().environment(\.folioPersistence, library.persistence)`.
struct ShelfView: View {
    @LiveQuery(BookFormat.self, sortBy: [SortDescriptor(\Book.title)]) private var books
    @State private var search = ""

    var body: some View {
        List(books) { book in
            Text(book.title)
        }
        .overlay {
            if $books.phase == .loading {
                ProgressView()
            } else if let error = $books.error {
                Text("The books cannot be shown: \(error.description)")
            }
        }
        .searchable(text: $search)
        .onChange(of: search) {
            let text = search
            $books.replaceQuery(
                where: #Predicate { text.isEmpty || $0.title.localizedStandardContains(text) },
                sortBy: [SortDescriptor(\Book.title)])
        }
    }
}
#endif
