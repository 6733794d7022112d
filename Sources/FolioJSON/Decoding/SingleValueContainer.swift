import Foundation

struct SingleValueContainer: SingleValueDecodingContainer {
    let state: DecoderState
    let position: Int
    let node: PathNode?

    var codingPath: [any CodingKey] { PathNode.path(node) }

    private var noKey: (any CodingKey)? { nil }

    func decodeNil() -> Bool { state.input.byte(position) == ASCII.n }
    func decode(_ type: Bool.Type) throws -> Bool { try state.decodeBool(at: position, node, noKey) }
    func decode(_ type: String.Type) throws -> String { try state.decodeString(at: position, node, noKey) }
    func decode(_ type: Double.Type) throws -> Double { try state.decodeFloat(type, at: position, node, noKey) }
    func decode(_ type: Float.Type) throws -> Float { try state.decodeFloat(type, at: position, node, noKey) }
    func decode(_ type: Int.Type) throws -> Int { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: Int8.Type) throws -> Int8 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: Int16.Type) throws -> Int16 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: Int32.Type) throws -> Int32 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: Int64.Type) throws -> Int64 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: UInt.Type) throws -> UInt { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try state.decodeInteger(type, at: position, node, noKey) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try state.decodeValue(type, at: position, node, noKey) }
}
