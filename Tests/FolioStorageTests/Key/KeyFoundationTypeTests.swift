import FolioTestSupport
import Foundation
import FolioStorage
import Testing

@Suite("Key encoding: UUID and Date")
struct KeyFoundationTypeTests {
    @Test("UUID: keys sort as Foundation's UUID < (bytes in uuid order) for 25,000 pairs sharing prefixes")
    func uuidOrder() {
        var rng = SplitMix64(seed: 0x0001D)
        var log = KeyPropertyLog()
        let edges = [
            UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)),
            UUID(uuid: (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            UUID(
                uuid: (0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF)),
            UUID(uuid: (0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            UUID(
                uuid: (0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF)),
        ]
        for a in edges {
            for b in edges {
                log.checkPair(a, b, expected: swiftOrder(a, b))
            }
        }
        for _ in 0..<25_000 {
            let a = rng.uuid()
            let b = rng.chance(1, in: 10) ? a : rng.uuid(near: a)
            log.checkPair(a, b, expected: swiftOrder(a, b))
            // Foundation's order is also the order of the hexadecimal strings (checked on a sample: uuidString is slow).
            if rng.chance(1, in: 8) {
                log.check(
                    swiftOrder(a, b) == swiftOrder(a.uuidString, b.uuidString),
                    "UUID \(a) vs \(b): < disagrees with uuidString order")
            }
        }
        log.expectNoFailures()
        let value = UUID(uuidString: "01234567-89AB-CDEF-0011-2233445566FF")!
        #expect(
            key(value) == [
                0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0xFF,
            ])
    }

    @Test("Date: distantPast, distantFuture and 30,000 random pairs sort as Date < does")
    func dateOrder() {
        var rng = SplitMix64(seed: 0xDA7E)
        var log = KeyPropertyLog()
        let edges = [
            Date.distantPast, Date(timeIntervalSince1970: 0), Date(timeIntervalSinceReferenceDate: -0.0),
            Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 1e-9),
            Date(timeIntervalSinceReferenceDate: 800_000_000.5), Date.distantFuture,
        ]
        for a in edges {
            for b in edges {
                log.checkPair(a, b, expected: swiftOrder(a, b))
            }
        }
        for _ in 0..<30_000 {
            let a = Date(
                timeIntervalSinceReferenceDate: rng.chance(1, in: 2)
                    ? rng.interestingDouble() : Double.random(in: -4e9...4e9, using: &rng))
            let b =
                rng.chance(1, in: 3)
                ? Date(timeIntervalSinceReferenceDate: a.timeIntervalSinceReferenceDate.nextUp)
                : Date(timeIntervalSinceReferenceDate: rng.interestingDouble())
            let expected = keyOrder(a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate)
            log.checkPair(a, b, expected: expected)
            if !a.timeIntervalSinceReferenceDate.isNaN && !b.timeIntervalSinceReferenceDate.isNaN {
                log.check(
                    expected == swiftOrder(a, b), "Date \(describe(a)) vs \(describe(b)): key order differs from Date <"
                )
            }
        }
        log.expectNoFailures()
        // A NaN date is one key, after every other date.
        let notADate = Date(timeIntervalSinceReferenceDate: .nan)
        #expect(key(notADate) == key(Date(timeIntervalSinceReferenceDate: -.nan)))
        #expect(KeyBytes.compare(key(Date.distantFuture), key(notADate)) < 0)
        #expect(KeyBytes.compare(key(Date(timeIntervalSinceReferenceDate: .infinity)), key(notADate)) < 0)
    }

    @Test("Round trip of UUID and Date")
    func roundTrip() {
        var rng = SplitMix64(seed: 17)
        var log = KeyPropertyLog()
        for _ in 0..<10_000 {
            let uuid = rng.uuid()
            log.checkRoundTrip(uuid) { $0 == uuid }
            let date = Date(timeIntervalSinceReferenceDate: Double.random(in: -1e11...1e11, using: &rng))
            log.checkRoundTrip(date) { $0 == date }
        }
        log.checkRoundTrip(Date.distantPast) { $0 == .distantPast }
        log.checkRoundTrip(Date.distantFuture) { $0 == .distantFuture }
        log.checkRoundTrip(UUID()) { _ in true }
        log.expectNoFailures()
    }
}
