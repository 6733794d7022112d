import Testing

/// A failed run: the exit status, nothing on standard output, and exactly one line on
/// standard error, `folio: ...` holding `text`; no crash, no stack trace.
func expectOneLineError(
    _ run: FolioRun, status: Int32, containing text: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(run.status == status, "\(run)", sourceLocation: sourceLocation)
    #expect(run.output.isEmpty, "\(run)", sourceLocation: sourceLocation)
    #expect(run.errorLines.count == 1, "\(run)", sourceLocation: sourceLocation)
    #expect(run.errors.hasPrefix("folio: ") && run.errors.hasSuffix("\n"), "\(run)", sourceLocation: sourceLocation)
    #expect(run.errors.contains(text), "\(run)", sourceLocation: sourceLocation)
    for crash in ["Fatal error", "Stack dump", "backtrace", "Program crashed"] {
        #expect(!run.errors.contains(crash), "\(run)", sourceLocation: sourceLocation)
    }
}
