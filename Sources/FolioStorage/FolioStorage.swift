// Key components, their encoding and the storage error live in FolioKeys, which both
// products re-export: `import FolioStorage` sees them as its own.
@_exported import FolioKeys
