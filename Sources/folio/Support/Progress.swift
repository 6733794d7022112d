/// Progress of long work, on standard error (so standard output stays the command's result):
/// a bar redrawn in place when standard error is a terminal, plain lines otherwise
/// ("verified 10.0 MiB of 52.3 MiB"), nothing with `--quiet`.
@MainActor final class ProgressReporter {
    enum Mode: Equatable {
        case bar
        case lines
        case off
    }

    /// What is counted: bytes, or things with a name ("records").
    enum Unit {
        case bytes
        case items(String)
    }

    let mode: Mode
    /// The past participle of the work: "verified", "copied", "upgraded".
    let verb: String
    let unit: Unit
    private let clock = ContinuousClock()
    private var lastDrawn: ContinuousClock.Instant?
    private var lastPercent = -1
    private var last: (done: UInt64, total: UInt64)?
    private var finished = false
    private var barWidth = 0

    /// The mode for this run: off if `quiet`, a bar if standard error is a terminal, else lines.
    static func mode(quiet: Bool) -> Mode {
        if quiet { return .off }
        return OutputStream.standardError.isTerminal ? .bar : .lines
    }

    init(mode: Mode, verb: String, unit: Unit = .bytes) {
        self.mode = mode
        self.verb = verb
        self.unit = unit
    }

    /// Reports `done` of `total`. Lines are printed at most once per 10 percentage points
    /// or 5 seconds; the bar is redrawn at most every 100 ms.
    func update(_ done: UInt64, of total: UInt64) {
        guard mode != .off, !finished else { return }
        let total = max(total, done)
        last = (done, total)
        let now = clock.now
        let percent = total == 0 ? 100 : Int(done * 100 / total)
        switch mode {
        case .bar:
            if let lastDrawn, now - lastDrawn < .milliseconds(100) { return }
            draw(done, total)
        case .lines:
            let due = lastDrawn.map { now - $0 >= .seconds(5) } ?? false
            guard percent / 10 > lastPercent / 10 || due else { return }
            OutputStream.standardError.line(text(done, total))
        case .off:
            return
        }
        lastDrawn = now
        lastPercent = percent
    }

    /// Reports the end: the final state, then a newline after a bar. Idempotent.
    func finish(_ done: UInt64? = nil, of total: UInt64? = nil) {
        guard mode != .off, !finished else { return }
        let final = (done ?? last?.done ?? 0, total ?? last?.total ?? done ?? 0)
        let total = max(final.1, final.0)
        switch mode {
        case .bar:
            draw(final.0, total)
            OutputStream.standardError.write("\n")
        case .lines:
            if lastPercent != 100 || last?.done != final.0 { OutputStream.standardError.line(text(final.0, total)) }
        case .off:
            break
        }
        finished = true
    }

    /// Abandons a bar half drawn (before an error message), so the message starts a line.
    func abandon() {
        guard mode == .bar, !finished, lastDrawn != nil else { finished = true; return }
        OutputStream.standardError.write("\n")
        finished = true
    }

    private func amount(_ value: UInt64) -> String {
        switch unit {
        case .bytes: Format.bytes(value)
        case .items: Format.count(value)
        }
    }

    private func text(_ done: UInt64, _ total: UInt64) -> String {
        var line = "\(verb) \(amount(done)) of \(amount(total))"
        if case .items(let noun) = unit { line += " \(noun)" }
        return line
    }

    private func draw(_ done: UInt64, _ total: UInt64) {
        let width = 30
        let filled = total == 0 ? width : Int(min(done, total) * UInt64(width) / total)
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let percent = Format.percent(done, of: total)
        var line =
            "[\(bar)] \(String(repeating: " ", count: max(0, 4 - percent.count)))\(percent)  \(text(done, total))"
        // Pad over a longer previous line.
        let length = line.count
        if length < barWidth { line += String(repeating: " ", count: barWidth - length) }
        barWidth = max(barWidth, length)
        OutputStream.standardError.write("\r" + line)
    }
}
