import Foundation

// The fallback for what the stream cannot write in order: containers kept open while
// their parent writes on, a closed container written to again, `superEncoder`s used
// late, errors caught by the value's own code. The containers of the value being
// encoded become a small tree of nodes; every value encoded *into* them is still
// streamed, on its own, into bytes (with its own fallback), so only the levels that
// need a tree get one.

/// How a dictionary node orders its keys when written.
enum TreeKeyOrder {
    case string
    case int
}

/// One object, array or value of the tree.
final class TreeNode {
    enum Kind { case empty, object, array, single }
    enum Item {
        case bytes([UInt8])
        case node(TreeNode)
    }

    var kind: Kind = .empty
    /// Object keys, already converted by the key strategy.
    var keys: [String] = []
    var items: [Item] = []
    /// Set for `[String: V]` / `[Int: V]`: keys written sorted, as the stream does.
    var keyOrder: TreeKeyOrder?

    /// Sets `key` to `item`: a repeated key replaces the earlier value in its place
    /// (the last value wins, as with Foundation's encoder).
    func set(_ key: String, _ item: Item) {
        if keys.count >= 16, positions == nil {
            positions = Dictionary(keys.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        }
        let existing: Int?
        if let positions { existing = positions[key] } else { existing = keys.firstIndex(of: key) }
        if let existing {
            items[existing] = item
        } else {
            positions?[key] = keys.count
            keys.append(key)
            items.append(item)
        }
    }

    /// Empties the node and gives it another kind (a position asked for another kind
    /// of container: Foundation stops the program there; here the last one wins).
    func reset(to newKind: Kind) {
        kind = newKind
        keys = []
        items = []
        positions = nil
    }

    /// Where each key is, once an object is large enough for a linear search to hurt.
    private var positions: [String: Int]?

    func write(into out: inout JSONByteWriter) {
        switch kind {
        case .empty:
            out.put(UInt8(ascii: "{"), UInt8(ascii: "}"))
        case .single:
            if let item = items.last { item.write(into: &out) } else { out.putNull() }
        case .array:
            out.put(UInt8(ascii: "["))
            for (number, item) in items.enumerated() {
                if number > 0 { out.put(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.put(UInt8(ascii: "]"))
        case .object:
            var order = Array(keys.indices)
            switch keyOrder {
            case .string?: order.sort { keys[$0] < keys[$1] }
            case .int?: order.sort { (Int(keys[$0]) ?? 0, keys[$0]) < (Int(keys[$1]) ?? 0, keys[$1]) }
            case nil: break
            }
            out.put(UInt8(ascii: "{"))
            for (number, position) in order.enumerated() {
                if number > 0 { out.put(UInt8(ascii: ",")) }
                out.putString(keys[position])
                out.put(UInt8(ascii: ":"))
                items[position].write(into: &out)
            }
            out.put(UInt8(ascii: "}"))
        }
    }
}

extension TreeNode.Item {
    func write(into out: inout JSONByteWriter) {
        switch self {
        case .bytes(let bytes): out.put(bytes)
        case .node(let node): node.write(into: &out)
        }
    }
}

/// Encodes values one at a time into stand-alone JSON bytes, streaming first and
/// falling back to the tree encoder for that value.
enum Fragment {
    static func encode<T: Encodable>(_ value: T, options: EncodingOptions, path: [any CodingKey]) throws -> [UInt8] {
        let state = EncodingState(options: options, basePath: path, isTopLevel: false)
        try state.encodeValue(value, key: .none)
        if state.failed {
            let tree = EncodingState(options: options, basePath: path, isTopLevel: false)
            try TreeEncoding.encode(value, into: tree)
            return Array(tree.out.bytes)
        }
        return Array(state.out.bytes)
    }
}

enum TreeEncoding {
    /// Encodes `value` through tree containers and writes the tree to `state.out`.
    static func encode<T: Encodable>(_ value: T, into state: EncodingState) throws {
        let root = TreeNode()
        let order = (T.self as? any FolioJSONCollection.Type)?.folioKeyOrder
        root.keyOrder = order
        let encoder = TreeEncoder(options: state.options, codingPath: state.basePath, node: root, rawKeys: order != nil)
        try value.encode(to: encoder)
        if root.kind == .empty, state.isTopLevel {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: state.basePath,
                    debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        root.write(into: &state.out)
    }
}

final class TreeEncoder: Encoder {
    let options: EncodingOptions
    let codingPath: [any CodingKey]
    let node: TreeNode
    /// Keys written as they are (a `[String: V]` dictionary), not by the key strategy.
    let rawKeys: Bool

    init(options: EncodingOptions, codingPath: [any CodingKey], node: TreeNode, rawKeys: Bool = false) {
        self.options = options
        self.codingPath = codingPath
        self.node = node
        self.rawKeys = rawKeys
    }

    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if node.kind != .object {
            node.reset(to: .object)
        }
        return KeyedEncodingContainer(TreeKeyedContainer<Key>(encoder: self, node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if node.kind != .array {
            node.reset(to: .array)
        }
        return TreeUnkeyedContainer(encoder: self, node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        TreeSingleValueContainer(encoder: self)
    }

    func fragment<T: Encodable>(_ value: T, path: [any CodingKey]) throws -> [UInt8] {
        try Fragment.encode(value, options: options, path: path)
    }

    func keyString(_ key: some CodingKey) -> String {
        options.snakeCaseKeys && !rawKeys ? SnakeCase.convert(key.stringValue) : key.stringValue
    }
}

struct TreeKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: TreeEncoder
    let node: TreeNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws {
        node.set(encoder.keyString(key), .bytes(Array("null".utf8)))
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let bytes = try encoder.fragment(value, path: codingPath + [key])
        node.set(encoder.keyString(key), .bytes(bytes))
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: Int128, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try primitive(value, key) }
    mutating func encode(_ value: UInt128, forKey key: Key) throws { try primitive(value, key) }

    /// A primitive, through the generic path.
    private mutating func primitive<T: Encodable>(_ value: T, _ key: Key) throws {
        try encode(value, forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = TreeNode()
        child.kind = .object
        node.set(encoder.keyString(key), .node(child))
        return KeyedEncodingContainer(
            TreeKeyedContainer<NestedKey>(encoder: encoder, node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = TreeNode()
        child.kind = .array
        node.set(encoder.keyString(key), .node(child))
        return TreeUnkeyedContainer(encoder: encoder, node: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        let child = TreeNode()
        node.set(encoder.keyString(FolioJSONKey.superKey), .node(child))
        return TreeEncoder(options: encoder.options, codingPath: codingPath + [FolioJSONKey.superKey], node: child)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let child = TreeNode()
        node.set(encoder.keyString(key), .node(child))
        return TreeEncoder(options: encoder.options, codingPath: codingPath + [key], node: child)
    }
}

struct TreeUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: TreeEncoder
    let node: TreeNode
    let codingPath: [any CodingKey]

    var count: Int { node.items.count }

    mutating func encodeNil() throws { node.items.append(.bytes(Array("null".utf8))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let bytes = try encoder.fragment(value, path: codingPath + [FolioJSONKey(index: node.items.count)])
        node.items.append(.bytes(bytes))
    }

    mutating func encode(_ value: Bool) throws { try primitive(value) }
    mutating func encode(_ value: String) throws { try primitive(value) }
    mutating func encode(_ value: Double) throws { try primitive(value) }
    mutating func encode(_ value: Float) throws { try primitive(value) }
    mutating func encode(_ value: Int) throws { try primitive(value) }
    mutating func encode(_ value: Int8) throws { try primitive(value) }
    mutating func encode(_ value: Int16) throws { try primitive(value) }
    mutating func encode(_ value: Int32) throws { try primitive(value) }
    mutating func encode(_ value: Int64) throws { try primitive(value) }
    mutating func encode(_ value: Int128) throws { try primitive(value) }
    mutating func encode(_ value: UInt) throws { try primitive(value) }
    mutating func encode(_ value: UInt8) throws { try primitive(value) }
    mutating func encode(_ value: UInt16) throws { try primitive(value) }
    mutating func encode(_ value: UInt32) throws { try primitive(value) }
    mutating func encode(_ value: UInt64) throws { try primitive(value) }
    mutating func encode(_ value: UInt128) throws { try primitive(value) }

    private mutating func primitive<T: Encodable>(_ value: T) throws {
        try encode(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = TreeNode()
        child.kind = .object
        let path = codingPath + [FolioJSONKey(index: node.items.count)]
        node.items.append(.node(child))
        return KeyedEncodingContainer(TreeKeyedContainer<NestedKey>(encoder: encoder, node: child, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = TreeNode()
        child.kind = .array
        let path = codingPath + [FolioJSONKey(index: node.items.count)]
        node.items.append(.node(child))
        return TreeUnkeyedContainer(encoder: encoder, node: child, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let child = TreeNode()
        let path = codingPath + [FolioJSONKey(index: node.items.count)]
        node.items.append(.node(child))
        return TreeEncoder(options: encoder.options, codingPath: path, node: child)
    }
}

struct TreeSingleValueContainer: SingleValueEncodingContainer {
    let encoder: TreeEncoder

    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ bytes: [UInt8]) {
        let node = encoder.node
        node.reset(to: .single)
        node.items = [.bytes(bytes)]
    }

    mutating func encodeNil() throws { set(Array("null".utf8)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        set(try encoder.fragment(value, path: codingPath))
    }

    mutating func encode(_ value: Bool) throws { try primitive(value) }
    mutating func encode(_ value: String) throws { try primitive(value) }
    mutating func encode(_ value: Double) throws { try primitive(value) }
    mutating func encode(_ value: Float) throws { try primitive(value) }
    mutating func encode(_ value: Int) throws { try primitive(value) }
    mutating func encode(_ value: Int8) throws { try primitive(value) }
    mutating func encode(_ value: Int16) throws { try primitive(value) }
    mutating func encode(_ value: Int32) throws { try primitive(value) }
    mutating func encode(_ value: Int64) throws { try primitive(value) }
    mutating func encode(_ value: Int128) throws { try primitive(value) }
    mutating func encode(_ value: UInt) throws { try primitive(value) }
    mutating func encode(_ value: UInt8) throws { try primitive(value) }
    mutating func encode(_ value: UInt16) throws { try primitive(value) }
    mutating func encode(_ value: UInt32) throws { try primitive(value) }
    mutating func encode(_ value: UInt64) throws { try primitive(value) }
    mutating func encode(_ value: UInt128) throws { try primitive(value) }

    private mutating func primitive<T: Encodable>(_ value: T) throws {
        try encode(value)
    }
}
