// `import Folio` re-exports the vocabulary its API shares with the engine: key components
// (and the standard types' conformances to them) and the storage error (FolioKeys), the
// JSON coders records are written and read with (FolioJSON), plus the engine types its options and reports name (EngineVocabulary.swift). The engine
// itself, `Store` and its test seams, stays behind `import FolioStorage`.
@_exported import FolioKeys
@_exported import FolioJSON
