#!/bin/sh
# lint.sh - how long `cagec lint` takes: 1,000 generated policy files in one
# call, and one 10,000-rule policy; median of repeated whole-process runs
# with peak memory, against anchors measured in the same invocation:
# `cagec --version` (process start-up) and compiling the same 10,000-rule
# policy to IR (what linting adds on top of the front end).
# Usage: testsuite/bench/lint.sh [BUILD_DIR] [RUNS]
set -eu
build=${1:-build}
runs=${2:-21}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/many"
i=1
while [ "$i" -le 1000 ]; do
	"$build/testsuite/gen_policy" 30 "$i" >"$tmp/many/p$i.cage"
	i=$((i + 1))
done
"$build/testsuite/gen_policy" 10000 >"$tmp/p10000.cage"
median() { sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p'; }
echo "machine: $(nproc) cores, $(uname -r); cagec $("$build/cagec" --version)"
printf 'anchor  cagec --version                 : '
"$build/testsuite/bench_run" "$runs" -- "$build/cagec" --version
printf 'anchor  compile 10,000 rules to IR      : '
compile=$("$build/testsuite/bench_run" "$runs" -- "$build/cagec" "$tmp/p10000.cage" \
	--home /home/u --emit ir -o "$tmp/o.ir")
echo "$compile"
printf 'lint    1,000 files (30 rules each)     : '
many=$("$build/testsuite/bench_run" "$runs" -- "$build/cagec" lint --home /home/u \
	"$tmp"/many/p*.cage)
echo "$many"
printf 'lint    10,000 rules                    : '
big=$("$build/testsuite/bench_run" "$runs" -- "$build/cagec" lint --home /home/u "$tmp/p10000.cage")
echo "$big"
c=$(echo "$compile" | median)
b=$(echo "$big" | median)
echo "lint 10,000 rules / compile 10,000 rules: $(awk "BEGIN { printf \"%.1f\", $b / $c }")x"
echo "findings on the 10,000-rule policy: $("$build/cagec" lint --home /home/u "$tmp/p10000.cage" | grep -c '\]$' || true)"
