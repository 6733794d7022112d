import Testing
import FolioStorage

@Suite struct StoreSmokeTests {
    @Test func createPutGetReopen() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        do {
            let store = try Store.open(at: path, options: testOptions())
            #expect(store.generation == 1)
            try store.write { txn in
                for i in 0..<5000 {
                    try txn.put(bytes("value-\(i)"), for: bytes(String(format: "key-%06d", i)), in: "t")
                }
            }
            #expect(store.generation == 2)
            let view = try store.read()
            #expect(try view.get(bytes("key-000042"), in: "t") == bytes("value-42"))
            #expect(try view.count(in: "t") == 5000)
            let report = store.verify()
            #expect(report.isClean, "\(report.problems)")
            store.close()
        }
        let store = try Store.open(at: path, options: testOptions())
        let view = try store.read()
        #expect(try view.get(bytes("key-004999"), in: "t") == bytes("value-4999"))
        var cursor = try view.cursor(
            in: "t", range: KeyRange(lower: .included(bytes("key-000100")), upper: .excluded(bytes("key-000110"))))
        var keys: [String] = []
        while let entry = try cursor.next() { keys.append(String(decoding: entry.key, as: UTF8.self)) }
        #expect(keys == (100..<110).map { String(format: "key-%06d", $0) })
        var reverse = try view.cursor(in: "t", direction: .reverse)
        #expect(try reverse.next()?.key == bytes("key-004999"))
        try store.write { txn in
            for i in stride(from: 0, to: 5000, by: 2) {
                try txn.remove(bytes(String(format: "key-%06d", i)), from: "t")
            }
        }
        #expect(try store.read().count(in: "t") == 2500)
        let report = store.verify()
        #expect(report.isClean, "\(report.problems)")
        store.close()
    }
}
