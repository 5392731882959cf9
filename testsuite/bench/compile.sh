#!/bin/sh
# compile.sh - how long cagec takes on large policies (1,000 and 10,000
# rules), median of repeated whole-process runs, with peak memory, against
# an anchor measured in the same invocation: `cagec --version` (process
# start-up alone). Usage: testsuite/bench/compile.sh [BUILD_DIR] [RUNS]
# Each backend named in $BACKENDS (default: every one this build has) is
# timed separately.
set -eu
build=${1:-build}
runs=${2:-21}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/testsuite/gen_policy" 1000 >"$tmp/p1000.cage"
"$build/testsuite/gen_policy" 10000 >"$tmp/p10000.cage"
backends=${BACKENDS:-$("$build/cagec" --help | sed -n 's/.*backends in this build://p')}
echo "machine: $(nproc) cores, $(uname -r); cagec $("$build/cagec" --version)"
printf 'anchor  cagec --version            : '
"$build/testsuite/bench_run" "$runs" -- "$build/cagec" --version
for n in 1000 10000; do
	for b in $backends; do
		[ "$b" = table ] && out="$tmp/o.cpt" || out="$tmp/o.$b"
		printf '%-6s rules, --emit %-6s        : ' "$n" "$b"
		"$build/testsuite/bench_run" "$runs" -- "$build/cagec" "$tmp/p$n.cage" \
			--home /home/u --emit "$b" -o "$out"
		[ "$n" = 10000 ] && echo "       output size: $(wc -c <"$out") bytes, $(wc -l <"$out") lines"
	done
done
