// A string is written as the UTF-8 bytes of its normal form (the standard library's NFC, which
// `==` uses; see KeyTextNormalization), escaped like a byte string (0x00 becomes 0x00 0xFF,
// terminator 0x00 0x01). UTF-8 byte order equals Unicode scalar order, so the bytes sort as
// Swift's `<` orders strings (by normalised scalars); the escape makes the encoding prefix-free
// while keeping "a" < "a\0" < "a\u{1}". See `Docs/Keys.md`, "Strings", for the two shortcuts
// in which Swift's own `<` is not a total order, and what the key does instead.

extension KeyEncoder {
    /// Appends a string: normalised (NFC), UTF-8, escaped, terminated.
    mutating func appendString(_ string: String) {
        reserveAdditional(string.utf8.count + 2)
        // The common cases, ASCII and Latin text below U+0300, are already normalised: escape the
        // bytes in place and stop. Native strings expose their UTF-8 directly; others (bridged on
        // Apple platforms) are made contiguous first.
        let appended =
            string.utf8.withContiguousStorageIfAvailable { appendIfNormalized($0) }
            ?? {
                var copy = string; return copy.withUTF8 { appendIfNormalized($0) }
            }()
        if appended {
            return
        }
        KeyTextNormalization.forEachNormalizedByte(of: string) { byte in
            appendEscapedByte(byte)
        }
        appendTerminator()
    }

    /// Appends `utf8` as an escaped, terminated string if it is evidently already normalised
    /// (ASCII, or all scalars below U+0300); returns whether it did.
    private mutating func appendIfNormalized(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard KeyTextNormalization.isASCII(utf8) || KeyTextNormalization.isBelowCombiningMarks(utf8) else {
            return false
        }
        appendEscaped(utf8)
        return true
    }
}

extension String: KeyComponent {
    /// Appends the normalised (NFC) UTF-8 bytes with 0x00 escaped as 0x00 0xFF, then 0x00 0x01.
    /// Two strings get identical keys exactly when Swift's `==` says they are equal (canonical
    /// equivalence, as the standard library computes it).
    public func appendKey(to encoder: inout KeyEncoder) {
        encoder.appendString(self)
    }

    /// Reads an escaped string. Rejects bytes that are not valid UTF-8 or not a normal form the
    /// encoder writes, so the result re-encodes to exactly the bytes read. The result is `==` to
    /// the string that was encoded; it is that string's NFC form except in the rare case
    /// `Docs/Keys.md` describes (U+0F73, U+0F75 or U+0F81 after a combining mark).
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> String {
        let position = decoder.offset
        let decoded = try decoder.readEscaped("a String") { utf8 -> Result<String, StringKeyFlaw> in
            // ASCII is valid UTF-8 and already normalised.
            if KeyTextNormalization.isASCII(utf8) {
                return .success(String(decoding: utf8, as: UTF8.self))
            }
            guard let string = KeyTextNormalization.string(validatingUTF8: utf8) else {
                return .failure(.invalidUTF8)
            }
            if KeyTextNormalization.isBelowCombiningMarks(utf8) || KeyTextNormalization.normalizes(string, to: utf8) {
                return .success(string)
            }
            if let original = KeyTextNormalization.restoringMisclassifiedStarters(string),
                KeyTextNormalization.normalizes(original, to: utf8)
            {
                return .success(original)
            }
            return .failure(.notNormalized)
        }
        switch decoded {
        case .success(let string):
            return string
        case .failure(.invalidUTF8):
            throw decoder.invalid("the String is not valid UTF-8", at: position)
        case .failure(.notNormalized):
            throw decoder.invalid("the String is not in the normal form keys are written in (NFC)", at: position)
        }
    }
}

/// Why escaped bytes are not a String key.
private enum StringKeyFlaw: Error {
    case invalidUTF8
    case notNormalized
}

extension String {
    /// The bytes every key of a string that starts with this one (as the normalised bytes
    /// do) begins with: this string's key without its terminator. For prefix ranges.
    package var keyPrefixBytes: [UInt8] {
        var encoder = KeyEncoder()
        encoder.appendString(self)
        return Array(encoder.bytes.dropLast(2))
    }
}
