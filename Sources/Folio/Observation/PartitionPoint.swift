// The binary search observers run over a commit's sorted changes.

/// The first position in `0..<count` where `isInSecondPart` holds, for a predicate that is
/// false and then true over the positions (`count` if it never holds): the binary search
/// every observer runs over a commit's sorted changes.
func partitionPoint(_ count: Int, _ isInSecondPart: (Int) -> Bool) -> Int {
    var low = 0, high = count
    while low < high {
        let mid = (low + high) / 2
        if isInSecondPart(mid) { high = mid } else { low = mid + 1 }
    }
    return low
}
