import Foundation

// The one `Decoder` of a decode: the input, the options, the position of the value
// being decoded and its coding path. Nested values reuse it (position and path are
// saved and restored around each nested `init(from:)`), so decoding a struct allocates
// its container box and a path node, not a decoder. Containers and decoders handed to
// `init(from:)` must not be used after it returns (the input buffer is only valid
// during the decode), as with any in-place decoder.

/// One call of `FolioJSONDecoder.decode`, shared by every decoder state it makes (super
/// decoders included): marked finished when the call returns, after which the input and the
/// member tables are gone.
final class DecodeSession {
    var finished = false
}

final class DecoderState: Decoder {
    /// The input, valid only while the decode runs: read it through `input`.
    var storedInput: JSONInput
    /// The decode this state serves; a reused state keeps its session (ThreadDecoderState).
    var session: DecodeSession

    /// The input. A decoder or container kept by a type and used after `decode` returned
    /// would read a buffer that no longer exists: that stops here with a clear message
    /// instead (one well-predicted branch per access).
    var input: JSONInput {
        @inline(__always) get {
            precondition(!session.finished, Self.usedAfterDecode)
            return storedInput
        }
    }

    static let usedAfterDecode =
        "FolioJSONDecoder: a Decoder or decoding container was used after decode(_:from:) returned; keep the decoded values, not the decoder"
    var options: FolioJSONDecoder
    var userInfo: [CodingUserInfoKey: Any]
    /// The offset of the value `init(from:)` is decoding.
    var position: Int
    /// Its coding path.
    var node: PathNode?
    /// The end of the last primitive value read (for unkeyed containers to move on).
    var lastEnd = 0
    /// The start and end of the last object a keyed container was made for (so an
    /// unkeyed container need not skip over an element its decoding scanned).
    var scannedStart = -1
    var scannedEnd = -1

    /// Member tables of the keyed containers: for each, a hint (the member to try
    /// first), then key start, key end and value offset of each member (-1: a later
    /// duplicate, never matched). Space used by a nested value is released when its
    /// `init(from:)` returns.
    var storedArena: UnsafeMutablePointer<Int>
    /// The member tables, valid only while the decode runs (see `input`).
    var arena: UnsafeMutablePointer<Int> {
        @inline(__always) get {
            precondition(!session.finished, Self.usedAfterDecode)
            return storedArena
        }
        @inline(__always) set { storedArena = newValue }
    }
    var arenaCapacity: Int
    var arenaTop = 0

    /// Whether `arena` was allocated here (else it is the caller's buffer).
    var ownsArena: Bool

    /// The top-level object's member table, recorded by the validation pass.
    var topObject = -1
    var topTable = 0
    var topMembers = 0
    var topSimple = true
    var topDeduplicated = false

    func beginTopLevelObject(at p: Int) {
        topObject = p
        topTable = reserveArena(1)
        arena[topTable] = 0
    }

    @inline(__always)
    func recordTopLevelMember(keyStart: Int, keyEnd: Int, value: Int, simple: Bool) {
        let slot = reserveArena(3)
        arena[slot] = keyStart
        arena[slot + 1] = keyEnd
        arena[slot + 2] = value
        topMembers += 1
        topSimple = topSimple && simple
    }

    init(
        input: JSONInput, options: FolioJSONDecoder, userInfo: [CodingUserInfoKey: Any], position: Int, node: PathNode?,
        arena: UnsafeMutableBufferPointer<Int>? = nil, session: DecodeSession
    ) {
        self.storedInput = input
        self.session = session
        self.options = options
        self.userInfo = userInfo
        self.position = position
        self.node = node
        if let arena, let base = arena.baseAddress, arena.count > 0 {
            storedArena = base
            arenaCapacity = arena.count
            ownsArena = false
        } else {
            arenaCapacity = Self.reusableArenaCapacity
            storedArena = .allocate(capacity: arenaCapacity)
            ownsArena = true
        }
    }

    /// The arena a reusable state starts with and shrinks back to: the member tables of
    /// ordinary records fit.
    static let reusableArenaCapacity = 128

    /// A state for `ThreadDecoderState` to hand out, with its own arena; `begin` sets it up
    /// for each decode.
    convenience init() {
        self.init(
            input: JSONInput.null, options: FolioJSONDecoder(), userInfo: [:], position: 0, node: nil,
            session: DecodeSession())
        session.finished = true
    }

    /// Sets up this state for a decode of `input` (every field a decode reads is set here,
    /// so nothing of an earlier decode, finished or failed, carries over).
    @inline(__always)
    func begin(input: JSONInput, options: FolioJSONDecoder, userInfo: [CodingUserInfoKey: Any]) {
        storedInput = input
        self.options = options
        if !userInfo.isEmpty || !self.userInfo.isEmpty { self.userInfo = userInfo }
        session.finished = false
        position = 0
        node = nil
        lastEnd = 0
        scannedStart = -1
        scannedEnd = -1
        arenaTop = 0
        topObject = -1
        topTable = 0
        topMembers = 0
        topSimple = true
        topDeduplicated = false
    }

    /// Drops what this state holds of a finished decode before it waits for the next one:
    /// the caller's `userInfo` values and coding path (not kept alive by a spare state), and
    /// an arena grown large by an unusual input.
    @inline(__always)
    func clearForReuse() {
        session.finished = true
        node = nil
        if !userInfo.isEmpty {
            userInfo = [:]
            options.userInfo = [:]
        }
        if arenaCapacity > 8 * Self.reusableArenaCapacity { shrinkArena() }
    }

    @inline(never)
    private func shrinkArena() {
        if ownsArena { storedArena.deallocate() }
        arenaCapacity = Self.reusableArenaCapacity
        storedArena = .allocate(capacity: arenaCapacity)
        ownsArena = true
    }

    deinit {
        if ownsArena { storedArena.deallocate() }
    }

    var codingPath: [any CodingKey] { PathNode.path(node) }

    @inline(__always)
    func reserveArena(_ slots: Int) -> Int {
        let start = arenaTop
        if arenaTop + slots > arenaCapacity { growArena(arenaTop + slots) }
        arenaTop += slots
        return start
    }

    @inline(never)
    func growArena(_ needed: Int) {
        var capacity = arenaCapacity * 2
        while capacity < needed { capacity *= 2 }
        let bigger = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
        bigger.moveInitialize(from: storedArena, count: arenaTop)
        if ownsArena { storedArena.deallocate() }
        storedArena = bigger
        arenaCapacity = capacity
        ownsArena = true
    }

    /// Runs `body` with the value at `position` and path `node` as this decoder's own,
    /// then restores the decoder.
    @inline(__always)
    func with<T>(position: Int, node: PathNode?, _ body: () throws -> T) rethrows -> T {
        let savedPosition = self.position
        let savedNode = self.node
        let savedTop = arenaTop
        self.position = position
        self.node = node
        defer {
            self.position = savedPosition
            self.node = savedNode
            self.arenaTop = savedTop
        }
        return try body()
    }

    // MARK: Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try KeyedDecodingContainer(makeKeyedContainer(Key.self, at: position, node: node))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try makeUnkeyedContainer(at: position, node: node)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(state: self, position: position, node: node)
    }
}
