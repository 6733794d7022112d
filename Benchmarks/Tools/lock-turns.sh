#!/usr/bin/env bash
# Records the store lock's flock calls during folio-bench's four-process mp row and prints
# how the lock was used (lock-turns.py). Needs perf and root (tracepoints).
# Usage: Benchmarks/Tools/lock-turns.sh [FOLIO_BENCH]
set -euo pipefail
bench="${1:-Benchmarks/.build/release/folio-bench}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
perf record -q -e syscalls:sys_enter_flock,syscalls:sys_exit_flock -a -o "$work/perf.data" -- \
    "$bench" --suite mp --runs 3 --system folio --busy-timeout 60 --workload mp-update-individual-p4 \
    | grep '^\[mp\]' || true
perf script -i "$work/perf.data" -F pid,tid,time,event,trace > "$work/trace.txt" 2>/dev/null
python3 "$(dirname "$0")/lock-turns.py" "$work/trace.txt" --processes 4
