import Foundation

/// The checks, with the coder under test (`subject`) and the reference (`reference`,
/// Foundation) as parameters.
enum DiffChecks {
    /// `count` generated values (`valuesPerShape` of each generated shape), each checked in
    /// three directions: reference → subject, subject → reference, subject → subject.
    /// Returns how many values were checked.
    @discardableResult
    static func roundTrips(
        subject: DiffCoder, reference: DiffCoder, seed: UInt64, count: Int, valuesPerShape: Int = 25, depth: Int = 4,
        report: DiffReport
    ) -> Int {
        var checked = 0
        var shapeIndex: UInt64 = 0
        while checked < count && !report.shouldStop {
            let shapeSeed = seed &+ shapeIndex
            shapeIndex += 1
            var generator = DiffGenerator(seed: shapeSeed)
            let shape = generator.shape(depth: depth)
            for k in 0..<valuesPerShape where checked < count {
                let value = generator.value(shape)
                checked += 1
                roundTrip(
                    value, shape, subject: subject, reference: reference,
                    where:
                        "seed \(shapeSeed) depth \(depth) value #\(k), replay: FOLIO_JSON_REPLAY=\(shapeSeed)/\(depth)",
                    report: report)
            }
        }
        return checked
    }

    static func roundTrip(
        _ value: DiffValue, _ shape: DiffShape, subject: DiffCoder, reference: DiffCoder, where place: String,
        report: DiffReport
    ) {
        func describe(_ step: String, _ bytes: [UInt8]?, _ detail: String) -> String {
            "\(step) (\(place)): \(detail)\n  shape: \(shape)\n  value: \(value)\n  json: \(bytes.map(jsonText) ?? "-")"
        }
        // reference → subject
        let referenceBytes: [UInt8]
        do { referenceBytes = try reference.encode(value, as: shape) } catch {
            report.fail(describe("\(reference) encode", nil, "\(error)"))
            return
        }
        switch DiffOutcome({ try subject.decode(shape, from: referenceBytes) }) {
        case .value(let decoded) where !strictlyEqual(decoded, value):
            report.fail(describe("\(reference) → \(subject)", referenceBytes, "decoded \(decoded)"))
        case .failure(let error):
            report.fail(describe("\(reference) → \(subject)", referenceBytes, "threw \(error)"))
        default: break
        }
        // The same bytes in the middle of a larger buffer, read in place as a slice.
        let padded = Array("[1,\"".utf8) + referenceBytes + Array("0e9\"]}".utf8)
        switch DiffOutcome({ try subject.decode(shape, from: padded[4..<(4 + referenceBytes.count)]) }) {
        case .value(let decoded) where !strictlyEqual(decoded, value):
            report.fail(describe("\(reference) → \(subject) from a slice", referenceBytes, "decoded \(decoded)"))
        case .failure(let error):
            report.fail(describe("\(reference) → \(subject) from a slice", referenceBytes, "threw \(error)"))
        default: break
        }
        // subject → reference, subject → subject
        let subjectBytes: [UInt8]
        do { subjectBytes = try subject.encode(value, as: shape) } catch {
            report.fail(describe("\(subject) encode", nil, "threw \(error)"))
            return
        }
        switch DiffOutcome({ try reference.decode(shape, from: subjectBytes) }) {
        case .value(let decoded) where !strictlyEqual(decoded, value):
            report.fail(describe("\(subject) → \(reference)", subjectBytes, "decoded \(decoded)"))
        case .failure(let error):
            report.fail(describe("\(subject) → \(reference)", subjectBytes, "threw \(error)"))
        default: break
        }
        switch DiffOutcome({ try subject.decode(shape, from: subjectBytes) }) {
        case .value(let decoded) where !strictlyEqual(decoded, value):
            report.fail(describe("\(subject) → \(subject)", subjectBytes, "decoded \(decoded)"))
        case .failure(let error):
            report.fail(describe("\(subject) → \(subject)", subjectBytes, "threw \(error)"))
        default: break
        }
    }

    /// With strategies that need not round-trip exactly (seconds since 1970, snake case,
    /// ISO 8601): the subject's encoder must write what the reference reads as the reference
    /// encoder's output reads, and the subject's decoder must read the reference's output as
    /// the reference's decoder does (same value, or both throw).
    static func strategyAgreement(
        subject: DiffCoder, reference: DiffCoder, strategies: DiffStrategies, options: ValueOptions, seed: UInt64,
        count: Int, report: DiffReport
    ) {
        let subject = subject.with(strategies), reference = reference.with(strategies)
        let plainReference = reference.with(DiffStrategies())
        var checked = 0
        var shapeIndex: UInt64 = 0
        while checked < count && !report.shouldStop {
            let shapeSeed = seed &+ shapeIndex
            shapeIndex += 1
            var generator = DiffGenerator(seed: shapeSeed, options: options)
            let shape = generator.shape(depth: 3)
            for k in 0..<10 where checked < count {
                checked += 1
                let value = generator.value(shape)
                let place = "strategies \(strategies), seed \(shapeSeed) value #\(k)"
                let referenceBytes = DiffOutcome { try reference.encode(value, as: shape) }
                let subjectBytes = DiffOutcome { try subject.encode(value, as: shape) }
                switch (referenceBytes, subjectBytes) {
                case (.failure, .failure): continue
                case (.value(let r), .failure(let error)):
                    report.fail(
                        "\(place): \(subject) encode threw \(error), \(reference) wrote \(jsonText(r))\n  shape: \(shape)\n  value: \(value)"
                    )
                    continue
                case (.failure(let error), .value(let s)):
                    // The subject writes what the reference refuses to: a finding, not a
                    // failure, when both read it back to the same value (the value itself
                    // with exact strategies; lossy ones such as seconds since 1970 round).
                    if sameOutcome(
                        DiffOutcome { try reference.decode(shape, from: s) },
                        DiffOutcome { try subject.decode(shape, from: s) })
                    {
                        report.note(
                            "\(place): \(reference) encode threw \(error), \(subject) wrote \(jsonText(s)), which both read back alike\n  shape: \(shape)\n  value: \(value)"
                        )
                    } else {
                        report.fail(
                            "\(place): \(reference) encode threw \(error), \(subject) wrote \(jsonText(s))\n  shape: \(shape)\n  value: \(value)"
                        )
                    }
                    continue
                case (.value(let r), .value(let s)):
                    // The same JSON tree (key order, spacing and escapes aside)...
                    let rTree = DiffOutcome { try plainReference.decode(DiffAnyJSON.self, from: r) }
                    let sTree = DiffOutcome { try plainReference.decode(DiffAnyJSON.self, from: s) }
                    if let rt = rTree.value, rt != sTree.value {
                        report.fail(
                            "\(place): different JSON\n  \(reference): \(jsonText(r))\n  \(subject): \(jsonText(s))\n  shape: \(shape)\n  value: \(value)"
                        )
                    }
                    // ... the reference reads the subject's output as its own...
                    let fromReference = DiffOutcome { try reference.decode(shape, from: r) }
                    let fromSubject = DiffOutcome { try reference.decode(shape, from: s) }
                    if !sameOutcome(fromReference, fromSubject) {
                        report.fail(
                            "\(place): \(reference) reads \(subject)'s output as \(fromSubject), its own as \(fromReference)\n  \(reference): \(jsonText(r))\n  \(subject): \(jsonText(s))\n  shape: \(shape)"
                        )
                    }
                    // ... and the subject reads the reference's output as the reference does.
                    let subjectReads = DiffOutcome { try subject.decode(shape, from: r) }
                    if !sameOutcome(fromReference, subjectReads) {
                        report.fail(
                            "\(place): \(subject) reads \(reference)'s output as \(subjectReads), \(reference) as \(fromReference)\n  json: \(jsonText(r))\n  shape: \(shape)\n  value: \(value)"
                        )
                    }
                }
            }
        }
    }

    static func sameOutcome(_ a: DiffOutcome<DiffValue>, _ b: DiffOutcome<DiffValue>) -> Bool {
        switch (a, b) {
        case (.value(let x), .value(let y)): return strictlyEqual(x, y)
        case (.failure, .failure): return true
        default: return false
        }
    }

    /// Decodes `bytes` with both decoders: when the reference accepts, the subject must give
    /// the same value; when the reference refuses, the subject must too (a decoder that
    /// accepts damaged input would hand a store's reader a value nobody wrote). Never traps:
    /// a trap ends the test process, which is the failure this guards against.
    static func hostile<T>(
        _ bytes: [UInt8], as decode: (DiffCoder, [UInt8]) throws -> T, equal: (T, T) -> Bool, subject: DiffCoder,
        reference: DiffCoder, place: @autoclosure () -> String, report: DiffReport
    ) {
        let r = DiffOutcome { try decode(reference, bytes) }
        let s = DiffOutcome { try decode(subject, bytes) }
        switch (r, s) {
        case (.value(let x), .value(let y)):
            if !equal(x, y) {
                report.fail("\(place()): \(reference) decodes \(x), \(subject) \(y)\n  json: \(jsonText(bytes))")
            }
        case (.value(let x), .failure(let error)):
            if foundationTranscodes(bytes) {
                report.note(
                    "\(place()): \(reference) decodes \(x) (reading the bytes as UTF-16 or UTF-32), \(subject) throws \(error)\n  json: \(jsonText(bytes))"
                )
            } else {
                report.fail(
                    "\(place()): \(reference) decodes \(x), \(subject) throws \(error)\n  json: \(jsonText(bytes))")
            }
        case (.failure(let error), .value(let y)):
            report.fail("\(place()): \(reference) throws \(error), \(subject) decodes \(y)\n  json: \(jsonText(bytes))")
        case (.failure, .failure): break
        }
    }

    /// Foundation's `JSONDecoder` guesses the input's encoding: a UTF-16 or UTF-32 byte order
    /// mark, or a zero byte among the first two, makes it read UTF-16 or UTF-32 (`"1\0"` is
    /// `1` in UTF-16LE). Folio reads UTF-8 only, as documented: refusing those is no failure.
    static func foundationTranscodes(_ bytes: [UInt8]) -> Bool {
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) { return true }
        return bytes.count >= 2 && (bytes[0] == 0 || bytes[1] == 0)
    }

    /// The coding paths the coders give `DiffGenerated` values (through `Encoder.codingPath`
    /// and `Decoder.codingPath`), compared as multisets (dictionaries are visited in
    /// different orders). Decoding paths must agree; encoding paths differ where Folio
    /// documents it (keys of nested containers, which Foundation's leave out; values its tree
    /// fallback encodes a second time), so they are findings.
    static func codingPaths(
        subject: DiffCoder, reference: DiffCoder, seed: UInt64, count: Int, report: DiffReport
    ) -> (decoding: Int, encodingDiffering: Int) {
        var checked = 0, encodingDiffering = 0
        var shapeIndex: UInt64 = 0
        while checked < count && !report.shouldStop {
            let shapeSeed = seed &+ shapeIndex
            shapeIndex += 1
            var generator = DiffGenerator(seed: shapeSeed)
            let shape = generator.shape(depth: 4)
            for _ in 0..<5 where checked < count {
                checked += 1
                let value = generator.value(shape)
                let generated = DiffGenerated(shape: shape, value: value)
                let r = ShapeStack(shape), s = ShapeStack(shape)
                guard let bytes = try? reference.encode(generated, userInfo: [.diffShapes: r]),
                    (try? subject.encode(generated, userInfo: [.diffShapes: s])) != nil
                else {
                    report.fail("seed \(shapeSeed): an encoder threw on \(value) of shape \(shape)")
                    continue
                }
                if Set(r.paths) != Set(s.paths) {
                    encodingDiffering += 1
                    report.note(
                        "seed \(shapeSeed): encoding paths \(reference) \(Set(r.paths).sorted()), \(subject) \(Set(s.paths).sorted())\n  shape: \(shape)"
                    )
                } else if r.paths.count != s.paths.count {
                    // Folio's tree fallback calls encode(to:) again for values written out of order.
                    encodingDiffering += 1
                    report.note(
                        "seed \(shapeSeed): encode(to:) called \(r.paths.count) times by \(reference), \(s.paths.count) by \(subject)\n  shape: \(shape)"
                    )
                }
                let rd = ShapeStack(shape), sd = ShapeStack(shape)
                _ = try? reference.decode(DiffGenerated.self, from: bytes, userInfo: [.diffShapes: rd])
                _ = try? subject.decode(DiffGenerated.self, from: bytes, userInfo: [.diffShapes: sd])
                if rd.paths.sorted() != sd.paths.sorted() {
                    report.fail(
                        "seed \(shapeSeed): decoding paths \(reference) \(rd.paths.sorted()), \(subject) \(sd.paths.sorted())\n  shape: \(shape)\n  json: \(jsonText(bytes))"
                    )
                }
            }
        }
        return (checked, encodingDiffering)
    }
}
