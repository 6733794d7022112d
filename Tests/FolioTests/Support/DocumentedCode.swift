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

    /// The ```` ```swift ```` blocks of the doc comments (`///`) of a Swift source, in order,
    /// each split into its paragraphs (runs of lines between blank lines): a paragraph is
    /// what must appear, as it is, in compiled code (a declaration and the statements that
    /// use it cannot sit side by side in one file, so an example separates them with a
    /// blank line).
    static func docCommentParagraphs(inSource text: String) -> [[String]] {
        var paragraphs: [[String]] = []
        var current: [String]? = nil
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("///") else { continue }
            let content = trimmed.dropFirst(3).drop { $0 == " " }
            if content.hasPrefix("```swift") {
                current = []
            } else if content.hasPrefix("```"), let lines = current {
                paragraphs.append(lines)
                current = nil
            } else if current != nil {
                if content.isEmpty {
                    if current?.isEmpty == false { paragraphs.append(current!) }
                    current = []
                } else {
                    current?.append(String(content))
                }
            }
        }
        return paragraphs.filter { !$0.isEmpty }
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
