/// An option a command accepts: `--name` (and perhaps `-x`), a flag or taking one value.
struct OptionSpec: Sendable {
    /// The long name, without the dashes.
    let name: String
    /// The one-letter form, if any.
    let short: Character?
    /// The value's placeholder (`N`, `NAME`), or nil for a flag.
    let value: String?
    /// One line for `--help`.
    let help: String

    init(_ name: String, short: Character? = nil, value: String? = nil, help: String) {
        self.name = name
        self.short = short
        self.value = value
        self.help = help
    }

    /// `--limit N`, `-q, --quiet`.
    var usage: String {
        (short.map { "-\($0), " } ?? "    ") + "--\(name)" + (value.map { " \($0)" } ?? "")
    }
}

/// A positional argument: `STORE`, `[DIR]`.
struct PositionalSpec: Sendable {
    let name: String
    let optional: Bool
    let help: String

    init(_ name: String, optional: Bool = false, help: String) {
        self.name = name
        self.optional = optional
        self.help = help
    }
}

/// The options several commands share: `--help` (every command), `--quiet` (those that
/// show progress).
enum CommonOptions {
    static let help = OptionSpec("help", short: "h", help: "describe the command and its options, and exit")
    static let quiet = OptionSpec("quiet", short: "q", help: "show no progress on standard error")
}

/// A command line that does not fit the command's description.
struct UsageError: Error, Sendable, Equatable {
    /// What is wrong, in words.
    let message: String
    /// The command whose usage it is (for the hint), if known.
    let command: String?

    init(_ message: String, command: String? = nil) {
        self.message = message
        self.command = command
    }
}

/// A parsed command line: the positionals in order, and the options given.
struct ParsedArguments: Sendable {
    var positionals: [String] = []
    var values: [String: String] = [:]
    var flags: Set<String> = []
    let command: String

    func flag(_ name: String) -> Bool { flags.contains(name) }

    func value(_ name: String) -> String? { values[name] }

    /// The value of `name` as a whole number from 0, or nil if absent.
    func count(_ name: String) throws(UsageError) -> Int? {
        guard let text = values[name] else { return nil }
        guard let number = Int(text), number >= 0 else {
            throw UsageError("option --\(name) needs a whole number from 0, not '\(text)'", command: command)
        }
        return number
    }
}

/// The hand-written parser: `--name value`, `--name=value`, `-x`, `--` (everything after it
/// is positional), options anywhere among the positionals.
enum ArgumentParser {
    /// True if `arguments` ask for help (before any `--`): help wins over every other error.
    static func asksForHelp(_ arguments: [String]) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "--help" || argument == "-h" { return true }
        }
        return false
    }

    static func parse(
        _ arguments: [String], command: String, options: [OptionSpec],
        positionals: [PositionalSpec]
    ) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments(command: command)
        var index = 0
        var onlyPositionals = false
        func fail(_ message: String) -> UsageError { UsageError(message, command: command) }
        func record(_ option: OptionSpec, value: String?, spelled: String) throws(UsageError) {
            if result.flags.contains(option.name) || result.values[option.name] != nil {
                throw fail("option \(spelled) is given twice")
            }
            if let value { result.values[option.name] = value } else { result.flags.insert(option.name) }
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                let inline: String? = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
                guard let option = options.first(where: { $0.name == name }) else {
                    throw fail("unknown option --\(name)")
                }
                if let placeholder = option.value {
                    if let inline {
                        try record(option, value: inline, spelled: "--\(name)")
                    } else {
                        guard index < arguments.count else {
                            throw fail("option --\(name) needs a value (\(placeholder))")
                        }
                        try record(option, value: arguments[index], spelled: "--\(name)")
                        index += 1
                    }
                } else {
                    if inline != nil { throw fail("option --\(name) takes no value") }
                    try record(option, value: nil, spelled: "--\(name)")
                }
                continue
            }
            // One or more short flags: -q, -qh. A short option taking a value takes the rest
            // of the word or the next argument.
            var letters = Substring(argument.dropFirst())
            while let letter = letters.first {
                letters = letters.dropFirst()
                guard let option = options.first(where: { $0.short == letter }) else {
                    throw fail("unknown option -\(letter)")
                }
                if let placeholder = option.value {
                    if !letters.isEmpty {
                        try record(option, value: String(letters), spelled: "-\(letter)")
                    } else {
                        guard index < arguments.count else {
                            throw fail("option -\(letter) needs a value (\(placeholder))")
                        }
                        try record(option, value: arguments[index], spelled: "-\(letter)")
                        index += 1
                    }
                    break
                }
                try record(option, value: nil, spelled: "-\(letter)")
            }
        }
        let required = positionals.filter { !$0.optional }.count
        if result.positionals.count < required {
            let missing = positionals.filter { !$0.optional }[result.positionals.count]
            throw fail("missing \(missing.name)")
        }
        if result.positionals.count > positionals.count {
            throw fail("unexpected argument '\(result.positionals[positionals.count])'")
        }
        return result
    }
}
