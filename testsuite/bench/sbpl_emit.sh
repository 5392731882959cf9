#!/bin/sh
# sbpl_emit.sh - what writing a Seatbelt profile costs for policies of 1,000
# and 10,000 rules (testsuite/bench/gen_policy), and how big the profile is.
#
# Whole-process medians (bench_run) of `cagec --emit sbpl` next to two
# anchors measured in the same invocation: `cagec --version` (start-up) and
# `cagec --emit ir` on the same policy (the same front end with the plain
# text backend). The emitter alone is timed in process by bench_sbpl_emit
# (one load, RUNS emits to /dev/null, median and minimum).
#
#   testsuite/bench/sbpl_emit.sh [BUILD_DIR] [RUNS]     (default: build 21)
set -eu
build=${1:-build}
runs=${2:-21}
for b in cagec testsuite/gen_policy testsuite/bench_run bench_sbpl_emit; do
	[ -x "$build/$b" ] || { echo "sbpl_emit.sh: no $build/$b (build first)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) cores, $(uname -r); $("$build/cagec" --version)"
printf 'anchor  cagec --version             : '
"$build/testsuite/bench_run" "$runs" -- "$build/cagec" --version
for n in 1000 10000; do
	"$build/testsuite/gen_policy" "$n" >"$tmp/p$n.cage"
	for b in ir sbpl; do
		printf '%-6s rules, cagec --emit %-5s    : ' "$n" "$b"
		"$build/testsuite/bench_run" "$runs" -- "$build/cagec" "$tmp/p$n.cage" \
			--home /home/u --emit "$b" -o "$tmp/o.$b"
	done
	printf '%-6s rules, emitter alone (ms)    : median min = ' "$n"
	"$build/bench_sbpl_emit" "$tmp/p$n.cage" "$runs"
	echo "       profile: $(wc -c <"$tmp/o.sbpl") bytes, $(wc -l <"$tmp/o.sbpl") lines"
done
