#!/bin/sh
# smoke.sh - one libFuzzer target's smoke run (the fuzz/* tests):
#   smoke.sh FUZZER WORKDIR SECONDS SEEDDIR... -- [LIBFUZZER-FLAG...]
# Fuzzes for SECONDS from an empty WORKDIR (remade each run; targets that
# resolve imports do it there), new inputs going to WORKDIR/corpus so the
# committed seeds stay as they are, a crash's input to WORKDIR/crash-*.
# Fails on any crash, sanitizer report, leak or time-out of one input.
set -eu
fuzzer=$1 work=$2 secs=$3
shift 3
seeds=
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	[ -d "$1" ] || { echo "smoke.sh: no seed directory $1" >&2; exit 1; }
	seeds="$seeds $1"
	shift
done
[ $# -gt 0 ] && shift
[ -n "$seeds" ] || { echo "smoke.sh: no seeds" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work/corpus" "$work/cwd"
cd "$work/cwd"
# shellcheck disable=SC2086 # one word per seed directory
exec "$fuzzer" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$work/" "$@" "$work/corpus" $seeds
