import Foundation

// Making the keyed and unkeyed containers: an object scanned into a member table in the
// arena (duplicates marked, keys decoded when they cannot be compared as bytes), an array
// walked from its bracket.

extension DecoderState {
    func makeKeyedContainer<Key: CodingKey>(_ type: Key.Type, at p: Int, node: PathNode?) throws -> KeyedContainer<Key>
    {
        let c = input.byte(p)
        guard c == ASCII.openBrace else {
            if c == ASCII.n {
                throw DecodingError.valueNotFound(
                    [String: Any].self,
                    DecodingError.Context(
                        codingPath: PathNode.path(node),
                        debugDescription: "Cannot get keyed decoding container -- found null value instead"))
            }
            throw DecodingError.typeMismatch(
                [String: Any].self,
                DecodingError.Context(
                    codingPath: PathNode.path(node),
                    debugDescription: "Expected to decode \([String: Any].self) but found \(describe(at: p)) instead."))
        }
        if p == topObject {
            // Recorded by the validation pass; duplicates marked once.
            if topSimple, topMembers <= 32, case .useDefaultKeys = options.keyDecodingStrategy {
                if !topDeduplicated {
                    markDuplicates(table: topTable, members: topMembers)
                    topDeduplicated = true
                }
                arena[topTable] = 0
                return KeyedContainer(state: self, node: node, table: topTable, members: topMembers, decoded: nil)
            }
            return KeyedContainer(
                state: self, node: node, table: topTable, members: topMembers,
                decoded: try decodeKeys(table: topTable, members: topMembers))
        }
        // Scan the members once: key ranges and value offsets.
        let table = reserveArena(1)
        arena[table] = 0
        var members = 0
        var allSimple = true
        var i = input.skipWhitespace(p + 1)
        if input.byte(i) == ASCII.quote {
            while true {
                let (keyEnd, simple) = input.stringExtent(i)
                allSimple = allSimple && simple
                var v = input.skipWhitespace(keyEnd + 1)
                v = input.skipWhitespace(v + 1)  // past the colon
                let slot = reserveArena(3)
                arena[slot] = i + 1
                arena[slot + 1] = keyEnd
                arena[slot + 2] = v
                members += 1
                let valueEnd = input.skipValue(v)
                guard let next = input.nextElement(after: valueEnd) else {
                    // Only for the value being decoded (not for objects read inside
                    // it, which would hide it).
                    guard p == position else { break }
                    scannedStart = p
                    scannedEnd = input.skipWhitespace(valueEnd)
                    if input.byte(scannedEnd) == ASCII.comma { scannedEnd = input.skipWhitespace(scannedEnd + 1) }
                    scannedEnd += 1
                    break
                }
                i = next
            }
        } else if p == position {
            scannedStart = p
            scannedEnd = i + 1
        }
        if allSimple, members <= 32, case .useDefaultKeys = options.keyDecodingStrategy {
            markDuplicates(table: table, members: members)
            return KeyedContainer(state: self, node: node, table: table, members: members, decoded: nil)
        }
        return KeyedContainer(
            state: self, node: node, table: table, members: members,
            decoded: try decodeKeys(table: table, members: members))
    }

    /// Marks later duplicates of a key (byte-equal keys) as never matching.
    private func markDuplicates(table: Int, members: Int) {
        guard members > 1 else { return }
        let m = arena + table + 1
        for j in 1..<members {
            let length = m[3 * j + 1] - m[3 * j]
            for k in 0..<j where m[3 * k + 2] >= 0 && m[3 * k + 1] - m[3 * k] == length {
                if memcmp(input.base + m[3 * j], input.base + m[3 * k], length) == 0 {
                    m[3 * j + 2] = -1
                    break
                }
            }
        }
    }

    private func decodeKeys(table: Int, members: Int) throws -> DecodedKeys {
        let keys = DecodedKeys()
        keys.values.reserveCapacity(members)
        let snake: Bool
        if case .convertFromSnakeCase = options.keyDecodingStrategy { snake = true } else { snake = false }
        for j in 0..<members {
            let m = arena + table + 1 + 3 * j
            var key = try input.readString(m[0] - 1)
            if snake { key = FolioJSONDecoder.convertFromSnakeCase(key) }
            if keys.values[key] == nil {
                keys.values[key] = m[2]
                keys.ordered.append(key)
            }
        }
        return keys
    }

    func makeUnkeyedContainer(at p: Int, node: PathNode?) throws -> UnkeyedContainer {
        let c = input.byte(p)
        guard c == ASCII.openBracket else {
            if c == ASCII.n {
                throw DecodingError.valueNotFound(
                    [Any].self,
                    DecodingError.Context(
                        codingPath: PathNode.path(node),
                        debugDescription: "Cannot get unkeyed decoding container -- found null value instead"))
            }
            throw DecodingError.typeMismatch(
                [Any].self,
                DecodingError.Context(
                    codingPath: PathNode.path(node),
                    debugDescription: "Expected to decode \([Any].self) but found \(describe(at: p)) instead."))
        }
        let first = input.skipWhitespace(p + 1)
        let c1 = input.byte(first)
        let countSlot = reserveArena(1)
        arena[countSlot] = -1
        return UnkeyedContainer(
            state: self, node: node, start: p,
            cursor: (c1 == ASCII.closeBracket || first >= input.count) ? nil : first,
            countSlot: countSlot)
    }
}
