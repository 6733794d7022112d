import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The machine a run measured, for the `"machine"` section of the JSON and the markdown
/// header: figures mean little without it.
struct MachineInfo: Codable, Sendable {
    /// Where the work directory's files live.
    struct Disk: Codable, Sendable {
        var workDirectory: String
        var mountPoint: String?
        var device: String?
        var fileSystem: String?
        var mountOptions: String?
        var freeBytes: Int64?
        /// From `/sys/block/<dev>/queue/rotational`: 0 for SSD or virtual disk, 1 for spinning.
        var rotational: Bool?
    }

    var cpuModel: String
    var logicalCores: Int
    var memoryBytes: UInt64
    var os: String
    var kernel: String
    var architecture: String
    /// The Swift compiler that built `folio-bench`.
    var swiftVersion: String
    /// `release` or `debug`: debug figures are not comparable.
    var buildConfiguration: String
    var disk: Disk
    /// How peak resident memory is measured (see `PeakMemory`).
    var peakRSSMethod: String
    var peakRSSResetVerified: Bool
    var sqliteVersion: String
    /// `/proc/loadavg` when the run started and when it ended: other work on the machine
    /// (parallel builds) slows the figures down.
    var loadAverageAtStart: String?
    var loadAverageAtEnd: String?
    var date: String
    var arguments: [String]

    /// The first three fields of `/proc/loadavg` (1, 5 and 15 minutes), if there is one.
    static func loadAverage() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    static func collect(workDirectory: String, sqliteVersion: String, loadAtStart: String?) -> MachineInfo {
        var name = utsname()
        uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        #if DEBUG
        let configuration = "debug"
        #else
        let configuration = "release"
        #endif
        return MachineInfo(
            cpuModel: cpuModel(),
            logicalCores: ProcessInfo.processInfo.activeProcessorCount,
            memoryBytes: ProcessInfo.processInfo.physicalMemory,
            os: osName() ?? field(name.sysname),
            kernel: "\(field(name.sysname)) \(field(name.release))",
            architecture: field(name.machine),
            swiftVersion: compilerVersion,
            buildConfiguration: configuration,
            disk: disk(for: workDirectory),
            peakRSSMethod: PeakMemory.methodDescription,
            peakRSSResetVerified: PeakMemory.scope == .workload,
            sqliteVersion: sqliteVersion,
            loadAverageAtStart: loadAtStart,
            loadAverageAtEnd: loadAverage(),
            date: ISO8601DateFormatter().string(from: Date()),
            arguments: Array(CommandLine.arguments.dropFirst()))
    }

    /// The compiler version, as far as `#if compiler` can tell.
    static let compilerVersion: String = {
        #if compiler(>=6.4)
        return "6.4 or later"
        #elseif compiler(>=6.3.2)
        return "6.3.2 or later 6.3"
        #elseif compiler(>=6.3.1)
        return "6.3.1"
        #elseif compiler(>=6.3)
        return "6.3"
        #elseif compiler(>=6.2)
        return "6.2"
        #else
        return "before 6.2"
        #endif
    }()

    private static func cpuModel() -> String {
        #if os(Linux)
        if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) {
            for line in info.split(separator: "\n") where line.hasPrefix("model name") {
                if let colon = line.firstIndex(of: ":") {
                    return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
            }
        }
        #endif
        return "unknown"
    }

    private static func osName() -> String? {
        guard let release = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8) else { return nil }
        for line in release.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
            return line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return nil
    }

    /// The mount holding `path` (longest mount point that prefixes its real path), from
    /// `/proc/self/mountinfo`, and the free space there.
    private static func disk(for path: String) -> Disk {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var disk = Disk(workDirectory: resolved)
        if let attributes = try? FileManager.default.attributesOfFileSystem(forPath: resolved),
            let free = attributes[.systemFreeSize] as? NSNumber
        {
            disk.freeBytes = free.int64Value
        }
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return disk }
        var best = -1
        for line in table.split(separator: "\n") {
            // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
            let parts = line.split(separator: " ").map(String.init)
            guard parts.count > 6, let dash = parts.firstIndex(of: "-"), dash + 2 < parts.count else { continue }
            let mountPoint = parts[4].replacingOccurrences(of: "\\040", with: " ")
            let inside = mountPoint == "/" || resolved == mountPoint || resolved.hasPrefix(mountPoint + "/")
            guard inside, mountPoint.count > best else { continue }
            best = mountPoint.count
            disk.mountPoint = mountPoint
            disk.fileSystem = parts[dash + 1]
            disk.device = parts[dash + 2]
            disk.mountOptions = parts[5]
        }
        if let device = disk.device, device.hasPrefix("/dev/") {
            var name = String(device.dropFirst(5))
            // A partition's queue lives under its disk: vda1 -> vda, nvme0n1p2 -> nvme0n1.
            if !FileManager.default.fileExists(atPath: "/sys/block/\(name)") {
                name = name.replacingOccurrences(of: #"p?\d+$"#, with: "", options: .regularExpression)
            }
            if let text = try? String(contentsOfFile: "/sys/block/\(name)/queue/rotational", encoding: .utf8) {
                disk.rotational = text.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
            }
        }
        return disk
    }
}
