#!/usr/bin/env bash
# Runs folio-bench with heap allocations counted (glibc only): builds the preload library
# from alloc-count.c, then runs the release folio-bench with it; each row's notes then say
# the allocations (calls and bytes) its timed part made per operation.
#
#   Benchmarks/Tools/alloc-count.sh --suite crud --workload range-index --system folio
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
package="$(dirname "$here")"
library="$package/.build/alloc-count.so"
mkdir -p "$package/.build"
cc -O2 -shared -fPIC -o "$library" "$here/alloc-count.c"
swift build -c release --package-path "$package" --product folio-bench >&2
binary="$(swift build -c release --package-path "$package" --show-bin-path)/folio-bench"
LD_PRELOAD="$library" "$binary" "$@"
