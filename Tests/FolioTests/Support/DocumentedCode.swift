import Foundation

/// The Swift code blocks of the project's Markdown documents, and where to find them in
/// compiled code: what keeps the README and the guide from teaching code that no longer
/// compiles.
enum DocumentedCode {
    /// The ```` ```swift ```` blocks of the Markdown file at `path`, in order.
    static func swiftBlocks(inFile path: String) throws -> [String] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var blocks: [String] = []
        var current: [Substring]? = nil
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```swift") {
                current = []
            } else if line.hasPrefix("```"), let lines = current {
                blocks.append(lines.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// Lines with surrounding whitespace removed, blank lines dropped: indentation differs
    /// between a document and the code it quotes.
    static func normalized(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    /// Whether `block`'s lines appear, consecutively, among `source`'s (both normalized).
    static func source(_ source: [String], contains block: [String]) -> Bool {
        source.count >= block.count
            && (0...(source.count - block.count)).contains { start in
                Array(source[start..<(start + block.count)]) == block
            }
    }
}
