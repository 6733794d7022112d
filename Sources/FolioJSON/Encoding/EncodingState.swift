import Foundation

/// The strategies of one `encode` call, as the containers read them.
struct EncodingOptions {
    let date: FolioJSONEncoder.DateEncodingStrategy
    let data: FolioJSONEncoder.DataEncodingStrategy
    let nonConformingFloat: FolioJSONEncoder.NonConformingFloatEncodingStrategy
    let snakeCaseKeys: Bool
    var userInfo: [CodingUserInfoKey: Any]

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
        var options: EncodingOptions
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
    /// The strategies of the encode this state serves (a reused state takes the next
    /// encode's: ThreadEncoderState).
    var options: EncodingOptions {
        _read { yield mutable.pointee.options }
    }
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
        self.basePath = basePath
        self.isTopLevel = isTopLevel
        mutable = .allocate(capacity: 1)
        mutable.initialize(to: Mutable(options: options))
        mutable.pointee.frames.reserveCapacity(8)
    }

    /// The output's capacity above which a state is not kept for reuse: one large value
    /// must not hold its buffer on the thread for good.
    static let reusableCapacity = 1 << 16

    /// Makes this state ready to encode anew with `options`, as a new state would be,
    /// keeping its buffers.
    func reset(options: EncodingOptions) {
        mutable.pointee.options = options
        mutable.pointee.out.count = 0
        mutable.pointee.frames.removeAll(keepingCapacity: true)
        mutable.pointee.topSerial = -1
        mutable.pointee.topCount = 0
        mutable.pointee.nextSerial = 0
        mutable.pointee.failed = false
        mutable.pointee.deepestFrames = 0
    }

    /// Whether this state may go back to its thread for the next encode: a top-level state
    /// whose buffer stayed small.
    var isReusable: Bool { isTopLevel && basePath.isEmpty && mutable.pointee.out.capacity <= Self.reusableCapacity }

    /// Drops what the finished encode's caller handed in (`userInfo` values), so that a
    /// spare state does not keep them alive.
    func clearForReuse() {
        if !mutable.pointee.options.userInfo.isEmpty { mutable.pointee.options.userInfo = [:] }
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
}
