#!/usr/bin/env bash
# CI step for the benchmark harness: build folio-bench and run its smoke test (every suite
# at tiny sizes; checks that JSON, markdown and SVG output is complete). Debug build: it
# builds faster than release, and smoke figures are never used as measurements.
# Call it from .ci/run BEFORE `swift test`, so the test runner's summary stays the last line.
set -euo pipefail
cd "$(dirname "$0")"
# GRDB links the system SQLite: its headers must be installed.
if ! dpkg -s libsqlite3-dev >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq libsqlite3-dev
fi
swift build --package-path .
"$(swift build --package-path . --show-bin-path)/folio-bench" --smoke
