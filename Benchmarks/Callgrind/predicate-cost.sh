#!/bin/sh
# Instructions per record (callgrind) of decoding a record and of checking a predicate on
# it, Foundation's interpreter against the compiled form: see PredicateCost.swift.
# Usage: Benchmarks/Callgrind/predicate-cost.sh (from the repository root); needs valgrind.
set -e
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
swiftc -O -wmo -enable-testing -parse-as-library -emit-library -static -emit-module -module-name Probe \
    -o libProbe.a $(find "$root/Sources/FolioJSON" -name '*.swift') "$root"/Sources/Folio/Query/Compiled/*.swift
swiftc -O -I . -L . -lProbe "$root/Benchmarks/Callgrind/PredicateCost.swift" -o predicate-cost
for mode in setup compile-once compile-101 swift compiled foundation decode; do
    valgrind --tool=callgrind --callgrind-out-file="$work/$mode.out" ./predicate-cost "$mode" >/dev/null 2>"$work/$mode.log"
    total=$(grep -o 'Collected : [0-9]*' "$work/$mode.log" | grep -o '[0-9]*$')
    echo "$mode $total"
done | awk 'NR == 1 { base = $2; print "setup", $2, "instructions"; next }
    $1 == "compile-once" { once = $2 - base; printf "%-12s %12d instructions (the first compilation)\n", $1, once; next }
    $1 == "compile-101" { printf "%-12s %12d instructions, %8.1f per later compilation\n", $1, $2 - base, ($2 - base - once) / 100; next }
    $1 == "compiled" { printf "%-12s %12d instructions, %8.1f per record (less one compilation)\n", $1, $2 - base, ($2 - base - once) / 10000; next }
    { printf "%-12s %12d instructions, %8.1f per record\n", $1, $2 - base, ($2 - base) / 10000 }'
