// `import Folio` gives the engine's public vocabulary too: key components for index values
// (`KeyComponent`, `KeyEncoder`), durability settings, storage errors.
@_exported import FolioStorage
