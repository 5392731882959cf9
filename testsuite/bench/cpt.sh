#!/bin/sh
# cpt.sh - proxy table lookups per second on a 100,000-rule table, as whole
# processes timed by bench_run (median of RUNS), against two anchors in the
# same invocation: `bench_cpt load` (start-up, mmap and validation of the
# table, building the query list) and `bench_cpt norm` (the same plus host
# normalisation only). Usage: testsuite/bench/cpt.sh [BUILD_DIR] [RUNS] [COUNT]
set -eu
build=${1:-build}
runs=${2:-11}
count=${3:-10000000}
rules=100000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
B="$build/testsuite/bench_cpt"
R="$build/testsuite/bench_run"
"$B" gen "$rules" >"$tmp/p.cage"
echo "machine: $(nproc) cores, $(uname -r); cagec $("$build/cagec" --version)"
printf 'compile %d rules to a table      : ' "$rules"
"$R" 5 -- "$build/cagec" "$tmp/p.cage" -o "$tmp/p.cpt"
"$build/cagec" "$tmp/p.cage" -o "$tmp/p.cpt"
echo "table: $(wc -c <"$tmp/p.cpt") bytes; $("$build/cagec" --dump-table "$tmp/p.cpt" | grep '^rules:')"
echo "decisions: $("$B" lookup "$tmp/p.cpt" "$count")"
load=$("$R" "$runs" -- "$B" load "$tmp/p.cpt")
norm=$("$R" "$runs" -- "$B" norm "$tmp/p.cpt" "$count")
look=$("$R" "$runs" -- "$B" lookup "$tmp/p.cpt" "$count")
echo "anchor load (start, map, validate): $load"
echo "anchor norm ($count normalisations): $norm"
echo "lookup ($count lookups)           : $look"
ms() { echo "$1" | sed 's/.*median_ms=\([0-9.]*\).*/\1/'; }
awk -v l="$(ms "$load")" -v n="$(ms "$norm")" -v k="$(ms "$look")" -v c="$count" 'BEGIN {
	printf "normalise only : %.2f M/s (%.1f ns each)\n", c / (n - l) / 1000, (n - l) * 1e6 / c;
	printf "normalise+lookup: %.2f M/s (%.1f ns each)\n", c / (k - l) / 1000, (k - l) * 1e6 / c;
	printf "lookup alone   : %.1f ns each; lookup/normalise time ratio %.2f\n", (k - n) * 1e6 / c, (k - l) / (n - l);
}'
