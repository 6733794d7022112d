/// The reachable pages of one verification pass whose position comes after `after`, at
/// most `capacity` of them: the smallest, by (offset, visit number). Verification checks
/// overlap in windows of these, in file order, so its memory is bounded by `capacity`
/// extents however large the store (Docs/Architecture.md invariant 5): a store with more
/// reachable pages than that is walked again for each further window (one more read of
/// its trees per `capacity` pages, never more memory).
///
/// The visit number makes positions unique and stable from pass to pass (the walk over an
/// immutable generation visits the same pages in the same order), so two reachable pages
/// at the same offset, an overlap, cannot fall on either side of a window boundary unseen.
struct ExtentWindow {
    struct Extent {
        var offset: UInt64
        var length: UInt32
        var visit: Int
        var position: Position { Position(offset: offset, visit: visit) }
    }

    struct Position: Comparable {
        var offset: UInt64
        var visit: Int
        static func < (a: Position, b: Position) -> Bool { (a.offset, a.visit) < (b.offset, b.visit) }
    }

    let capacity: Int
    let after: Position?
    /// A max-heap by position: the largest kept extent is at index 0.
    private var heap: [Extent] = []
    /// Extents visited so far in this pass (kept or not).
    private(set) var visits = 0

    init(capacity: Int, after: Position?) {
        self.capacity = max(1, capacity)
        self.after = after
    }

    /// Records the next visited extent.
    mutating func add(offset: UInt64, length: UInt32) {
        let extent = Extent(offset: offset, length: length, visit: visits)
        visits += 1
        if let after, extent.position <= after { return }
        if heap.count < capacity {
            heap.append(extent)
            siftUp(heap.count - 1)
        } else if extent.position < heap[0].position {
            heap[0] = extent
            siftDown(0)
        }
    }

    /// The kept extents in file order.
    func sorted() -> [Extent] { heap.sorted { $0.position < $1.position } }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[parent].position < heap[child].position else { return }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            var largest = parent
            for child in [2 * parent + 1, 2 * parent + 2]
            where child < heap.count && heap[largest].position < heap[child].position {
                largest = child
            }
            if largest == parent { return }
            heap.swapAt(parent, largest)
            parent = largest
        }
    }
}
