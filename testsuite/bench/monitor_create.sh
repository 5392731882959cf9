#!/bin/sh
# monitor_create.sh - what watching costs on work that makes and removes
# names rather than reads them, as a package install does: `rm -rf` of a
# tree of FILES files (default 2000, 100 to a directory) and `tar -x` of
# it again, run bare, under `cagerun --mode monitor` (a policy covering
# it), under `--mode enforce` and under enforce with --log-denials, all
# interleaved round by round in one bench_run call. Every file costs two
# watched calls (its unlink and its create), so the rows above bare are
# the observer's round trip times about 2*FILES, plus what the
# filesystem charges for a create. WORKDIR=DIR runs it in DIR (a tmpfs
# takes the disk's cost out and leaves the observer's); the default is a
# scratch directory under TMPDIR.
# Usage:
#   testsuite/bench/monitor_create.sh BUILD_DIR [RUNS]
set -eu
build=$(cd "${1:?usage: monitor_create.sh BUILD_DIR [RUNS]}" && pwd)
runs=${2:-11}
files=${FILES:-2000}
case "$files" in *[!0-9]* | "") echo "monitor_create.sh: FILES must be a number" >&2; exit 2;; esac
if [ "$files" -lt 100 ] || [ "$files" -gt 100000 ]; then
	echo "monitor_create.sh: FILES is 100 to 100000" >&2
	exit 2
fi
if [ -n "${WORKDIR:-}" ]; then
	tmp=$(mktemp -d "$WORKDIR/cage-create.XXXXXX")
else
	tmp=$(mktemp -d)
fi
trap 'rm -rf "$tmp"' EXIT
case "$tmp$build$PATH$HOME" in *[[:space:]\'\"\\]*)
	echo "monitor_create.sh: paths with spaces or quotes are not supported" >&2; exit 2;;
esac
cagerun="$build/cagerun"

mkdir "$tmp/src"
n=0
while [ "$n" -lt "$files" ]; do
	d="$tmp/src/d$((n / 100))"
	[ -d "$d" ] || mkdir "$d"
	printf 'module.exports = %d;\n' "$n" >"$d/f$n.js"
	n=$((n + 1))
done
tar -cf "$tmp/pkg.tar" -C "$tmp/src" .
rm -rf "$tmp/src"
mkdir "$tmp/out"
printf 'rm -rf %s/out && mkdir %s/out && tar -xf %s/pkg.tar -C %s/out\n' \
	"$tmp" "$tmp" "$tmp" "$tmp" >"$tmp/work.sh"
for mode in monitor enforce; do
	cat >"$tmp/$mode.cage" <<P
cage 1
import "std/base"
profile install {
    mode $mode
    allow read write exec "$tmp/**"
    env keep PATH HOME
}
P
done

clean="env -i PATH=$PATH HOME=$HOME"
rows="$clean sh $tmp/work.sh"
rows="$rows ::: $cagerun -q -p $tmp/monitor.cage -- sh $tmp/work.sh"
rows="$rows ::: $cagerun -q -p $tmp/enforce.cage -- sh $tmp/work.sh"
rows="$rows ::: $cagerun -q -p $tmp/enforce.cage --log-denials --log $tmp/log -- sh $tmp/work.sh"
names="bare monitor enforce enforce+log-denials"

echo "machine: $(nproc) cores, $(uname -r), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "workload: rm -rf and tar -x of $files files in $tmp ($(df -T "$tmp" | awk 'NR == 2 {print $2}')); $runs interleaved rounds + 2 warm-up"
# shellcheck disable=SC2086 # rows is a word list built above
"$build/testsuite/bench_run" -w 2 "$runs" -- $rows >"$tmp/out.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %10s %10s %8s %14s\n' what median_ms p90_ms ratio "us/file over"
n=1
for name in $names; do
	line=$(sed -n "${n}p" "$tmp/out.txt")
	med=$(echo "$line" | sed -n 's/^median_ms=\([0-9.]*\).*/\1/p')
	p90=$(echo "$line" | sed -n 's/.* p90_ms=\([0-9.]*\).*/\1/p')
	[ "$name" = bare ] && base=$med
	[ "$name" = enforce ] && enf=$med
	# the log-denials row is set against enforce, the others against bare
	ref=$base
	[ "$name" = enforce+log-denials ] && ref=$enf
	printf '%-22s %10s %10s %8s %14s\n' "$name" "$med" "$p90" \
		"$(echo "$med $ref" | awk '{printf "%.2fx", $1 / $2}')" \
		"$(echo "$med $ref $files" | awk '{printf "%.1f", ($1 - $2) * 1000 / $3}')"
	n=$((n + 1))
done
echo "(ratios against bare; enforce+log-denials against enforce)"
