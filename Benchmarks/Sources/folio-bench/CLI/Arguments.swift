import Foundation

/// An error in the command line, printed with a pointer to `--help`; exit status 2.
struct ArgumentError: Error, CustomStringConvertible {
    var description: String
    init(_ message: String) { description = message }
}

/// The parsed command line of `folio-bench`.
struct Arguments: Equatable {
    /// The suites that exist, in the order they run.
    static let allSuites = [
        "crud", "engine", "scale", "observe", "locks", "kv", "mp", "history", "restore", "replication",
    ]

    /// Suites to run, in ``allSuites`` order, each once. Default: all.
    var suites: [String] = allSuites
    /// `--n N`, if given.
    var n: Int?
    var runs = Runner.minimumRuns
    var durability = BenchDurability.full
    var jsonPath: String?
    var markdownPath: String?
    var svgDirectory: String?
    /// `--svg-scale`: the bar charts' value axis (the scale curves are always log-log).
    var svgLogarithmic = true
    /// Where stores are created (`--work-dir`; default the system temporary directory).
    var workDirectory = NSTemporaryDirectory()
    var smoke = false
    var help = false
    /// `--workload NAME`: only these workloads run (default: every workload of the suites).
    var workloads: Set<String> = []
    /// `--system NAME`: only these systems run (default: folio, grdb and the floors).
    var systems: Set<String> = []
    /// `--busy-timeout SECONDS`: how long an `mp` writer waits for another process's lock
    /// (nil: Folio's default `busyTimeout`, 5 s, and the same for GRDB).
    var busyTimeout: Double?
    /// `--replica-dir DIR`: where the replication suite makes its replicas (default: the
    /// work directory, so on the store's disk).
    var replicaDirectory: String?

    static let usage = """
        folio-bench: Folio's benchmark harness. Compares Folio with GRDB.swift and with
        the floors of this machine (raw commits, Foundation JSON); every figure is the median of
        at least 3 runs, and rows whose system is not written yet say "not yet available".

        USAGE
          swift run -c release --package-path Benchmarks folio-bench [options]

        OPTIONS
          --suite NAME            crud, engine, scale, observe, locks, kv, mp, history,
                                  restore or replication; repeat for several (default: all ten)
          --n N                   size of every suite instead of the defaults: crud N records
                                  (default 10,000), engine N keys (default 1,000,000), JSON
                                  floors N records, scale N/1000..N (default 1k..1M), kv N
                                  keys (default 40,000), mp a store of N records and N/4
                                  updates per process (at most 2,500, the default), restore
                                  N retained generations (default 100,000)
          --runs R                runs per workload, median reported (default 3, at least 3)
          --durability MODE       full (default) or grouped: Folio's durability; GRDB's
                                  synchronous = FULL or NORMAL (WAL mode in both)
          --json PATH             write {"machine": {...}, "results": [...]}
          --markdown PATH         write the results as a markdown table
          --svg DIR               write bar charts (per suite) and scale curves as SVG files
          --svg-scale log|linear  value axis of the bar charts (default log)
          --work-dir DIR          where stores are created (default: the temporary directory,
                                  $TMPDIR or /tmp); its disk is what the fsync figures measure
          --workload NAME         only this workload (repeat for several), e.g. query-indexed:
                                  for profiling one row; default every workload
          --system NAME           only this system: folio, grdb or floor (repeat for several)
          --busy-timeout SECONDS  mp suite: how long a write waits for another process's
                                  lock before failing, Folio (busyTimeout) and GRDB (busyMode
                                  .timeout) alike (default 5, Folio's default)
          --replica-dir DIR       replication suite: where replicas are made (default: the
                                  work directory, the store's disk); another device's
                                  directory (or /dev/shm) to measure a replica that does not
                                  share the store's disk
          --smoke                 tiny sizes for every suite, checks the output (for CI); writes
                                  JSON, markdown and SVG into the work directory unless given
          -h, --help              this text

        EXAMPLE
          folio-bench --suite crud --suite engine --suite scale --json out.json --svg charts
        """

    /// Parses `arguments` (without the program name).
    static func parse(_ arguments: [String]) throws -> Arguments {
        var result = Arguments()
        var suites: [String] = []
        var seen: Set<String> = []
        var queue = arguments[...]

        func value(for option: String, inline: String?) throws -> String {
            if let inline { return inline }
            guard let next = queue.popFirst(), !next.hasPrefix("--") else {
                throw ArgumentError("\(option) needs a value")
            }
            return next
        }
        func once(_ option: String) throws {
            guard seen.insert(option).inserted else { throw ArgumentError("\(option) given twice") }
        }
        func positive(_ text: String, _ option: String, minimum: Int = 1) throws -> Int {
            let digits = text.replacingOccurrences(of: "_", with: "").replacingOccurrences(of: ",", with: "")
            guard let number = Int(digits), number >= minimum else {
                throw ArgumentError("\(option) needs a whole number of at least \(minimum), not '\(text)'")
            }
            return number
        }

        while let argument = queue.popFirst() {
            var option = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                option = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            switch option {
            case "-h", "--help":
                result.help = true
            case "--suite":
                let name = try value(for: option, inline: inline)
                guard allSuites.contains(name) else {
                    throw ArgumentError("unknown suite '\(name)' (suites: \(allSuites.joined(separator: ", ")))")
                }
                if !suites.contains(name) { suites.append(name) }
            case "--n":
                try once(option)
                result.n = try positive(try value(for: option, inline: inline), option)
            case "--runs":
                try once(option)
                result.runs = try positive(try value(for: option, inline: inline), option, minimum: Runner.minimumRuns)
            case "--durability":
                try once(option)
                let text = try value(for: option, inline: inline)
                guard let durability = BenchDurability(rawValue: text) else {
                    throw ArgumentError("--durability must be full or grouped, not '\(text)'")
                }
                result.durability = durability
            case "--json":
                try once(option)
                result.jsonPath = try value(for: option, inline: inline)
            case "--markdown":
                try once(option)
                result.markdownPath = try value(for: option, inline: inline)
            case "--svg":
                try once(option)
                result.svgDirectory = try value(for: option, inline: inline)
            case "--svg-scale":
                try once(option)
                let text = try value(for: option, inline: inline)
                guard text == "log" || text == "linear" else {
                    throw ArgumentError("--svg-scale must be log or linear, not '\(text)'")
                }
                result.svgLogarithmic = text == "log"
            case "--work-dir":
                try once(option)
                result.workDirectory = try value(for: option, inline: inline)
            case "--smoke":
                result.smoke = true
            case "--workload":
                result.workloads.insert(try value(for: option, inline: inline))
            case "--system":
                result.systems.insert(try value(for: option, inline: inline))
            case "--busy-timeout":
                try once(option)
                let text = try value(for: option, inline: inline)
                guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
                    throw ArgumentError("--busy-timeout needs a number of seconds, not '\(text)'")
                }
                result.busyTimeout = seconds
            case "--replica-dir":
                try once(option)
                result.replicaDirectory = try value(for: option, inline: inline)
            default:
                if argument.hasPrefix("-") { throw ArgumentError("unknown option '\(argument)'") }
                throw ArgumentError("unexpected argument '\(argument)' (options start with --)")
            }
            if inline != nil, ["-h", "--help", "--smoke"].contains(option) {
                throw ArgumentError("\(option) takes no value")
            }
        }
        if result.smoke, result.n != nil { throw ArgumentError("--smoke sets its own sizes; drop --n") }
        if !suites.isEmpty { result.suites = allSuites.filter(suites.contains) }
        return result
    }

    /// The sizes these arguments ask for.
    var sizes: Sizes {
        if smoke { return .smoke }
        if let n { return .uniform(n) }
        return .defaults
    }
}
