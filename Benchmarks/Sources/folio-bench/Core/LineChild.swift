import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Nanoseconds of `CLOCK_MONOTONIC`: one clock for every process of the machine, so that a
/// parent can compare its own instants with those its children report (the `mp` suite's
/// start barrier and its children's last commits).
enum MonotonicClock {
    static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    static func seconds(from start: UInt64, to end: UInt64) -> Double {
        end >= start ? Double(end - start) / 1e9 : -Double(start - end) / 1e9
    }
}

/// A child process (`folio-bench __child ...`) the parent talks with line by line while it
/// runs: the `mp` suite's workers, which open the store, say `ready`, wait for a line on their
/// standard input (the start barrier), work, and print a report line.
///
/// Its standard output is read line by line and its standard error to the end, each by a
/// blocking read on a thread of its own (a `Thread`, never a thread of the Swift concurrency
/// pool or of Dispatch's pool, which several blocked readers could exhaust); the awaiting
/// task is suspended on a continuation.
final class LineChild: @unchecked Sendable {
    // @unchecked: `process` and `input` are set before the child runs and only used for
    // calls that are safe from any thread (its pid, a write to the pipe, closing it); the
    // mutable state is behind `state`.
    let arguments: [String]
    private let process = Process()
    private let input = Pipe()
    private let state = Mutex(State())

    private struct State {
        var lines: [String] = []
        var partial: [UInt8] = []
        var outputEnded = false
        var errors: Data?
        var status: Int32?
        var lineWaiter: CheckedContinuation<String?, Never>?
        var exitWaiter: CheckedContinuation<Void, Never>?
        var inputClosed = false

        var exited: Bool { outputEnded && errors != nil && status != nil }
    }

    private init(arguments: [String]) { self.arguments = arguments }

    /// Starts `folio-bench __child <arguments>`.
    static func launch(_ arguments: [String]) throws -> LineChild {
        // A write to the pipe of a child that died must fail, not kill the harness.
        signal(SIGPIPE, SIG_IGN)
        let child = LineChild(arguments: arguments)
        let output = Pipe(), errors = Pipe()
        child.process.executableURL = URL(fileURLWithPath: ChildProcess.executablePath)
        child.process.arguments = [ChildProcess.command] + arguments
        child.process.standardInput = child.input
        child.process.standardOutput = output
        child.process.standardError = errors
        child.process.terminationHandler = { process in
            let status = process.terminationStatus
            child.update { $0.status = status }
        }
        try child.process.run()
        let outputHandle = output.fileHandleForReading, errorHandle = errors.fileHandleForReading
        Thread {
            while true {
                let data = outputHandle.availableData
                if data.isEmpty { break }
                child.update { state in
                    for byte in data {
                        if byte == UInt8(ascii: "\n") {
                            state.lines.append(String(decoding: state.partial, as: UTF8.self))
                            state.partial.removeAll(keepingCapacity: true)
                        } else {
                            state.partial.append(byte)
                        }
                    }
                }
            }
            child.update { state in
                if !state.partial.isEmpty { state.lines.append(String(decoding: state.partial, as: UTF8.self)) }
                state.partial = []
                state.outputEnded = true
            }
        }.start()
        Thread {
            let data = errorHandle.readDataToEndOfFile()
            child.update { $0.errors = data }
        }.start()
        return child
    }

    var processIdentifier: Int32 { process.processIdentifier }

    /// The next line the child printed, or nil once its standard output has ended.
    func nextLine() async -> String? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> NextLine in
                if !state.lines.isEmpty { return .line(state.lines.removeFirst()) }
                if state.outputEnded { return .line(nil) }
                state.lineWaiter = continuation
                return .wait
            }
            if case .line(let line) = ready { continuation.resume(returning: line) }
        }
    }

    /// Writes `line` and a newline to the child's standard input; false if the pipe is
    /// closed (the child has exited).
    @discardableResult
    func send(_ line: String) -> Bool {
        let bytes = Array((line + "\n").utf8)
        let descriptor = input.fileHandleForWriting.fileDescriptor
        return state.withLock { state in
            guard !state.inputClosed else { return false }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }

    /// Closes the child's standard input (it reads end of file).
    func closeInput() {
        let close = state.withLock { state -> Bool in
            defer { state.inputClosed = true }
            return !state.inputClosed
        }
        if close { try? input.fileHandleForWriting.close() }
    }

    /// Kills the child (`SIGKILL`, by its pid: a process this object started), if it still runs.
    func kill() {
        let running = state.withLock { $0.status == nil }
        if running, process.processIdentifier > 0 { sendSignal(process.processIdentifier, SIGKILL) }
    }

    /// Waits until the child has exited and both its outputs have ended; returns its exit
    /// status, its standard error, and the lines of its standard output not yet taken.
    func finish() async -> (status: Int32, errors: String, lines: [String]) {
        closeInput()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.exited { return true }
                state.exitWaiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
        return state.withLock { state in
            let lines = state.lines
            state.lines = []
            return (state.status ?? -1, String(decoding: state.errors ?? Data(), as: UTF8.self), lines)
        }
    }

    private func update(_ change: (inout State) -> Void) {
        let (lineWaiter, line, exitWaiter) = state.withLock {
            state -> (CheckedContinuation<String?, Never>?, String?, CheckedContinuation<Void, Never>?) in
            change(&state)
            var lineWaiter: CheckedContinuation<String?, Never>?
            var line: String?
            if let waiter = state.lineWaiter, !state.lines.isEmpty || state.outputEnded {
                state.lineWaiter = nil
                lineWaiter = waiter
                line = state.lines.isEmpty ? nil : state.lines.removeFirst()
            }
            var exitWaiter: CheckedContinuation<Void, Never>?
            if state.exited, let waiter = state.exitWaiter {
                state.exitWaiter = nil
                exitWaiter = waiter
            }
            return (lineWaiter, line, exitWaiter)
        }
        lineWaiter?.resume(returning: line)
        exitWaiter?.resume()
    }
}

/// What ``LineChild/nextLine()`` found under the lock: a line (nil: the output ended), or
/// nothing yet.
private enum NextLine: Sendable {
    case line(String?)
    case wait
}

/// The child's side of ``LineChild``'s protocol.
enum ParentLines {
    /// Writes `line` to standard output at once (no stdio buffering: the parent waits for it).
    static func send(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// The next line of standard input, read on a thread of its own (no thread of the Swift
    /// concurrency pool waits); nil at end of file.
    static func receive() async -> String? {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: readLine()) }.start()
        }
    }
}

/// Runs `action` after `seconds` unless cancelled first: the `mp` suite's guard against a
/// child that never finishes (it kills the children, so their outputs end and the workload
/// fails with what they printed).
final class Watchdog: @unchecked Sendable {
    // @unchecked: `item` is set once in init; DispatchWorkItem's cancel is thread-safe.
    private final class Flag: Sendable { let fired = Mutex(false) }
    private let flag: Flag
    private let item: DispatchWorkItem

    init(seconds: Double, _ action: @escaping @Sendable () -> Void) {
        let flag = Flag()
        self.flag = flag
        item = DispatchWorkItem {
            flag.fired.withLock { $0 = true }
            action()
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: item)
    }

    var fired: Bool { flag.fired.withLock { $0 } }

    func cancel() { item.cancel() }
}

/// `kill(2)` (a file-level name: inside ``LineChild`` `kill` is its own method).
private func sendSignal(_ pid: pid_t, _ signal: Int32) {
    _ = kill(pid, signal)
}
