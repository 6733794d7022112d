import Foundation

/// The strategies of one `encode` call, as the containers read them.
struct EncodingOptions {
    let date: FolioJSONEncoder.DateEncodingStrategy
    let data: FolioJSONEncoder.DataEncodingStrategy
    let nonConformingFloat: FolioJSONEncoder.NonConformingFloatEncodingStrategy
    let snakeCaseKeys: Bool
    let userInfo: [CodingUserInfoKey: Any]

    init(_ encoder: FolioJSONEncoder) {
        date = encoder.dateEncodingStrategy
        data = encoder.dataEncodingStrategy
        nonConformingFloat = encoder.nonConformingFloatEncodingStrategy
        if case .convertToSnakeCase = encoder.keyEncodingStrategy {
            snakeCaseKeys = true
        } else {
            snakeCaseKeys = false
        }
        var info: [CodingUserInfoKey: Any] = [:]
        for (key, value) in encoder.userInfo { info[key] = value }
        userInfo = info
    }
}

/// One step of a coding path, kept unboxed until someone asks for `codingPath`.
enum PathKey {
    case none
    case key(any CodingKey)
    case index(Int)
    case superKey

    var codingKey: (any CodingKey)? {
        switch self {
        case .none: return nil
        case .key(let key): return key
        case .index(let index): return FolioJSONKey(index: index)
        case .superKey: return FolioJSONKey.superKey
        }
    }
}

/// What an open position of the output holds so far.
enum FrameKind: UInt8 {
    /// A value's position (an `Encoder`) that nothing was written to yet; closes as `{}`.
    case empty
    /// An object whose `{` is written; closes with `}`.
    case keyed
    /// An array whose `[` is written; closes with `]`.
    case unkeyed
    /// A complete value (a single-value container wrote it, or the position is held by
    /// code that closes it itself); closes with nothing.
    case single
}

/// An open object, array or value position of the streaming encoder.
struct Frame {
    var kind: FrameKind
    /// Entries written (the top frame's live count is `EncodingState.topCount`).
    var count: Int
    /// Unique within one state: tells a container whether its frame is still open.
    let serial: Int
    /// The key this frame sits under in its parent.
    let key: PathKey
}

/// The streaming encoder: JSON is written straight into one byte buffer, in the order
/// the values are encoded. Open objects and arrays form a stack of frames; a container
/// may write only while its frame is open, and writing to a frame closes every frame
/// above it (a nested container is done once its parent writes again).
///
/// Anything the stream cannot express — a write to a frame already closed, a position
/// given two different kinds of container, an error thrown inside and caught by the
/// value's own code — sets `failed`; the caller then encodes the value again with the
/// tree encoder, which accepts any order. Errors that escape are simply rethrown.
final class EncodingState {
    /// The mutable part, behind a pointer: a class's stored `var`s are checked for
    /// exclusive access at run time on every use, which cost more than the writing.
    /// Only this state touches it, from one thread at a time.
    struct Mutable {
        var out = JSONByteWriter()
        var frames: [Frame] = []
        var topSerial = -1
        var topCount = 0
        var nextSerial = 0
        var failed = false
        /// The most frames open at once: a bound on the output's nesting (`FolioJSONEncoder`).
        var deepestFrames = 0
    }

    private let mutable: UnsafeMutablePointer<Mutable>
    let options: EncodingOptions
    /// The coding path of the value this state encodes (empty at the top level).
    let basePath: [any CodingKey]
    /// Whether an encoding that writes nothing is an error (Foundation's top-level rule)
    /// rather than `{}`.
    let isTopLevel: Bool

    var out: JSONByteWriter {
        get { mutable.pointee.out }
        _modify { yield &mutable.pointee.out }
    }
    var frames: [Frame] {
        get { mutable.pointee.frames }
        _modify { yield &mutable.pointee.frames }
    }
    var topSerial: Int {
        get { mutable.pointee.topSerial }
        set { mutable.pointee.topSerial = newValue }
    }
    var topCount: Int {
        get { mutable.pointee.topCount }
        set { mutable.pointee.topCount = newValue }
    }
    var nextSerial: Int {
        get { mutable.pointee.nextSerial }
        set { mutable.pointee.nextSerial = newValue }
    }
    var failed: Bool {
        get { mutable.pointee.failed }
        set { mutable.pointee.failed = newValue }
    }
    var deepestFrames: Int { mutable.pointee.deepestFrames }

    init(options: EncodingOptions, basePath: [any CodingKey], isTopLevel: Bool) {
        self.options = options
        self.basePath = basePath
        self.isTopLevel = isTopLevel
        mutable = .allocate(capacity: 1)
        mutable.initialize(to: Mutable())
        mutable.pointee.frames.reserveCapacity(8)
    }

    deinit {
        mutable.pointee.out.deallocate()
        mutable.deinitialize(count: 1)
        mutable.deallocate()
    }

    // MARK: Frames

    @inline(__always)
    func push(_ kind: FrameKind, _ key: PathKey) -> (index: Int, serial: Int) {
        let count = frames.count
        if count > 0 { frames[count &- 1].count = topCount }
        let serial = nextSerial
        nextSerial &+= 1
        frames.append(Frame(kind: kind, count: 0, serial: serial, key: key))
        if count >= mutable.pointee.deepestFrames { mutable.pointee.deepestFrames = count &+ 1 }
        topSerial = serial
        topCount = 0
        return (count, serial)
    }

    /// Closes the top frame: writes its closing bracket and pops it.
    func pop() {
        let top = frames.count &- 1
        switch frames[top].kind {
        case .empty: out.put(UInt8(ascii: "{"), UInt8(ascii: "}"))
        case .keyed: out.put(UInt8(ascii: "}"))
        case .unkeyed: out.put(UInt8(ascii: "]"))
        case .single: break
        }
        frames.removeLast()
        if top > 0 {
            topSerial = frames[top &- 1].serial
            topCount = frames[top &- 1].count
        } else {
            topSerial = -1
            topCount = 0
        }
    }

    /// Makes the frame `serial` (at `index`) the top one, closing the frames above it.
    /// False (and `failed` set) if it was closed already.
    @inline(__always)
    func ensureTop(_ index: Int, _ serial: Int) -> Bool {
        if topSerial == serial { return true }
        return reopen(index, serial)
    }

    @inline(never)
    func reopen(_ index: Int, _ serial: Int) -> Bool {
        guard index < frames.count, frames[index].serial == serial else {
            failed = true
            return false
        }
        while frames.count &- 1 > index { pop() }
        return true
    }

    func isOpen(_ index: Int, _ serial: Int) -> Bool {
        index < frames.count && frames[index].serial == serial
    }

    /// The coding path of the frame `serial` at `index` (its own key included).
    func codingPath(_ index: Int, _ serial: Int) -> [any CodingKey] {
        guard isOpen(index, serial) else { return basePath }
        var path = basePath
        for frame in frames[...index] {
            if let key = frame.key.codingKey { path.append(key) }
        }
        return path
    }

    /// The coding path of a value about to be written under `key` in the top frame.
    func codingPathOfTop(adding key: PathKey) -> [any CodingKey] {
        var path = frames.isEmpty ? basePath : codingPath(frames.count - 1, frames[frames.count - 1].serial)
        if let key = key.codingKey { path.append(key) }
        return path
    }

    func elementCount(_ index: Int, _ serial: Int) -> Int {
        if topSerial == serial { return topCount }
        return isOpen(index, serial) ? frames[index].count : 0
    }

    // MARK: Entries

    /// Starts an entry of the top frame: a comma unless it is the first.
    @inline(__always)
    func beginEntry() {
        if topCount > 0 { out.put(UInt8(ascii: ",")) }
        topCount &+= 1
    }

    /// Starts an entry of the top (keyed) frame: comma, quoted key, colon.
    @inline(__always)
    func writeKey<K: CodingKey>(_ key: K) {
        beginEntry()
        if options.snakeCaseKeys {
            out.putString(SnakeCase.convert(key.stringValue))
        } else {
            out.putString(key.stringValue)
        }
        out.put(UInt8(ascii: ":"))
    }

    // MARK: Values

    func putDouble(_ value: Double, key: PathKey) throws {
        if value.isFinite { out.putFinite(value); return }
        try putNonConforming(value, description: "Double", key: key)
    }

    func putFloat(_ value: Float, key: PathKey) throws {
        if value.isFinite { out.putFinite(value); return }
        try putNonConforming(value, description: "Float", key: key)
    }

    @inline(never)
    func putNonConforming<F: BinaryFloatingPoint & Encodable>(_ value: F, description: String, key: PathKey) throws {
        switch options.nonConformingFloat {
        case .convertToString(let positiveInfinity, let negativeInfinity, let nan):
            if value.isNaN {
                out.putString(nan)
            } else if value > 0 {
                out.putString(positiveInfinity)
            } else {
                out.putString(negativeInfinity)
            }
        case .throw:
            failed = true
            let name = value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf")
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPathOfTop(adding: key),
                    debugDescription: "Unable to encode \(description).\(name) directly in JSON."))
        }
    }

    func putDate(_ date: Date, key: PathKey) throws {
        switch options.date {
        case .deferredToDate: try putDouble(date.timeIntervalSinceReferenceDate, key: key)
        case .secondsSince1970: try putDouble(date.timeIntervalSince1970, key: key)
        case .millisecondsSince1970: try putDouble(1000.0 * date.timeIntervalSince1970, key: key)
        case .iso8601: out.putISO8601(date)
        }
    }

    func putData(_ data: Data, key: PathKey) {
        switch options.data {
        case .base64: out.putBase64(data)
        case .deferredToData:
            // Data's own conformance: an array of its bytes.
            out.put(UInt8(ascii: "["))
            var first = true
            for byte in data {
                if first { first = false } else { out.put(UInt8(ascii: ",")) }
                out.putUnsigned(UInt64(byte))
            }
            out.put(UInt8(ascii: "]"))
        }
    }

    /// Writes `value` if it is a type written without its own `encode(to:)` (numbers,
    /// strings, `Date`, `Data`, `URL`, `Decimal`, `String`/`Int`-keyed dictionaries).
    @inline(__always)
    func encodeDirect<T: Encodable>(_ value: T, key: PathKey) throws -> Bool {
        if T.self == String.self { out.putString(unsafeBitCast(value, to: String.self)); return true }
        if T.self == Int.self { out.putSigned(Int64(unsafeBitCast(value, to: Int.self))); return true }
        if T.self == Double.self { try putDouble(unsafeBitCast(value, to: Double.self), key: key); return true }
        if T.self == Bool.self { out.putBool(unsafeBitCast(value, to: Bool.self)); return true }
        return try encodeDirectRare(value, key: key)
    }

    func encodeDirectRare<T: Encodable>(_ value: T, key: PathKey) throws -> Bool {
        if T.self == Date.self { try putDate(unsafeBitCast(value, to: Date.self), key: key); return true }
        if T.self == Float.self { try putFloat(unsafeBitCast(value, to: Float.self), key: key); return true }
        if T.self == Int64.self { out.putSigned(unsafeBitCast(value, to: Int64.self)); return true }
        if T.self == Int32.self { out.putSigned(Int64(unsafeBitCast(value, to: Int32.self))); return true }
        if T.self == Int16.self { out.putSigned(Int64(unsafeBitCast(value, to: Int16.self))); return true }
        if T.self == Int8.self { out.putSigned(Int64(unsafeBitCast(value, to: Int8.self))); return true }
        if T.self == UInt.self { out.putUnsigned(UInt64(unsafeBitCast(value, to: UInt.self))); return true }
        if T.self == UInt64.self { out.putUnsigned(unsafeBitCast(value, to: UInt64.self)); return true }
        if T.self == UInt32.self { out.putUnsigned(UInt64(unsafeBitCast(value, to: UInt32.self))); return true }
        if T.self == UInt16.self { out.putUnsigned(UInt64(unsafeBitCast(value, to: UInt16.self))); return true }
        if T.self == UInt8.self { out.putUnsigned(UInt64(unsafeBitCast(value, to: UInt8.self))); return true }
        if T.self == Data.self { putData(unsafeBitCast(value, to: Data.self), key: key); return true }
        if T.self == URL.self { out.putString(unsafeBitCast(value, to: URL.self).absoluteString); return true }
        if T.self == Decimal.self { out.putRaw(unsafeBitCast(value, to: Decimal.self).description); return true }
        if T.self == Int128.self { out.putSigned128(unsafeBitCast(value, to: Int128.self)); return true }
        if T.self == UInt128.self { out.putUnsigned128(unsafeBitCast(value, to: UInt128.self)); return true }
        // Arrays and dictionaries are one pointer wide: only then is the (slower) cast tried.
        if MemoryLayout<T>.size == MemoryLayout<[Int]>.size, let collection = value as? any FolioJSONCollection {
            let (index, serial) = push(.single, key)
            let written = try collection.folioWrite(into: self)
            if isOpen(index, serial) {
                while frames.count &- 1 > index { pop() }
                pop()
            } else {
                failed = true
            }
            return written
        }
        return false
    }

    /// Writes one JSON value for `value` at the current position (its key or comma
    /// already written). `key` is its coding key, for `codingPath`.
    func encodeValue<T: Encodable>(_ value: T, key: PathKey) throws {
        if try encodeDirect(value, key: key) { return }
        let (index, serial) = push(.empty, key)
        do {
            try value.encode(to: StreamEncoder(state: self, index: index, serial: serial))
        } catch {
            failed = true
            throw error
        }
        try finish(value, index, serial)
    }

    /// Closes the position `value` was encoded into.
    func finish<T>(_ value: T, _ index: Int, _ serial: Int) throws {
        guard isOpen(index, serial) else { failed = true; return }
        while frames.count &- 1 > index { pop() }
        if index == 0, isTopLevel, frames[0].kind == .empty {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: basePath,
                    debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        pop()
    }
}
