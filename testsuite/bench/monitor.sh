#!/bin/sh
# monitor.sh - what watching a session costs: a mixed workload (find
# over a tree of 4000 files, cat of every one of them, plus a clean build
# of a small C project with make) run bare, under `cagerun --mode monitor`
# (a policy that covers the workload, so the cost is the observer's and
# nothing is logged), under
# `cagerun --mode monitor` with a policy that covers nothing of it (every
# access classified would-block and written to the log), under
# `strace -f -e trace=file,network -o /dev/null`, and under
# `cagerun --mode enforce` without and with --log-denials (the path
# observer in enforce mode: its cost decides whether it may be on by
# default); and a file-heavy one (`find /usr/share -type f`, the first
# 5000 files it lists read by `cat` through xargs: some 7000 opens in a
# quarter of a second) bare, monitored, enforced and enforced with
# --log-denials; all interleaved round by round in one bench_run call.
# Each row's ratio is against the bare row of its workload.
# Usage:
#   testsuite/bench/monitor.sh BUILD_DIR [RUNS]
set -eu
build=$(cd "${1:?usage: monitor.sh BUILD_DIR [RUNS]}" && pwd)
runs=${2:-11}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case "$tmp$build" in *[[:space:]\'\"\\]*)
	echo "monitor.sh: paths with spaces or quotes are not supported" >&2; exit 2;;
esac
cagerun="$build/cagerun"

# the tree: 40 folders of 100 files
i=0
while [ $i -lt 40 ]; do
	mkdir -p "$tmp/tree/d$i"
	j=0
	while [ $j -lt 100 ]; do : >"$tmp/tree/d$i/f$j"; j=$((j + 1)); done
	i=$((i + 1))
done
# the C project: 8 files and a main
mkdir -p "$tmp/proj"
k=0
objs=""
while [ $k -lt 8 ]; do
	printf '#include <stdio.h>\n#include <string.h>\nint f%d(int x){return x*%d;}\n' $k $k \
		>"$tmp/proj/f$k.c"
	objs="$objs f$k.o"
	k=$((k + 1))
done
printf 'int main(void){return 0;}\n' >"$tmp/proj/main.c"
printf 'p: main.o%s\n\tcc -o p main.o%s\n%%.o: %%.c\n\tcc -O1 -c $<\nclean:\n\trm -f p *.o\n' \
	"$objs" "$objs" >"$tmp/proj/Makefile"
printf 'find %s/tree -type f | wc -l >/dev/null\nfind %s/tree -type f | xargs cat >/dev/null\nmake -s -C %s/proj clean p\n' \
	"$tmp" "$tmp" "$tmp" >"$tmp/work.sh"
# the file-heavy workload and the three policies
sh "$(dirname "$0")/monitor_fixture.sh" "$tmp"
# The bare and strace rows get the environment the policies keep (PATH
# and HOME), so that every row runs the same programs the same way.
case "$PATH$HOME" in *[[:space:]\'\"\\]*)
	echo "monitor.sh: PATH or HOME with spaces or quotes is not supported" >&2; exit 2;;
esac
clean="env -i PATH=$PATH HOME=$HOME"
rows="$clean sh $tmp/work.sh"
rows="$rows ::: $cagerun -q -p $tmp/covered.cage -- sh $tmp/work.sh"
rows="$rows ::: $cagerun -q -p $tmp/bare.cage --log $tmp/log -- sh $tmp/work.sh"
names="bare monitor(covered) monitor(logging)"
if command -v strace >/dev/null; then
	rows="$rows ::: $clean strace -f -e trace=file,network -o /dev/null sh $tmp/work.sh"
	names="$names strace"
else
	echo "skipped strace: not installed (Debian: apt-get install strace)"
fi
rows="$rows ::: $cagerun -q -p $tmp/enforce.cage -- sh $tmp/work.sh"
rows="$rows ::: $cagerun -q -p $tmp/enforce.cage --log-denials --log $tmp/dlog -- sh $tmp/work.sh"
names="$names enforce enforce+log-denials"
rows="$rows ::: $clean sh $tmp/usr.sh"
rows="$rows ::: $cagerun -q -p $tmp/covered.cage -- sh $tmp/usr.sh"
rows="$rows ::: $cagerun -q -p $tmp/enforce.cage -- sh $tmp/usr.sh"
rows="$rows ::: $cagerun -q -p $tmp/enforce.cage --log-denials --log $tmp/ulog -- sh $tmp/usr.sh"
names="$names usr:bare usr:monitor(covered) usr:enforce usr:enforce+log-denials"

echo "machine: $(nproc) cores, $(uname -r), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "workloads: find over 4000 files + cat of each + make clean build of 9 C files; usr: find /usr/share + cat of its first 5000 files; $runs interleaved rounds + 2 warm-up"
# shellcheck disable=SC2086 # rows is a word list built above
"$build/testsuite/bench_run" -w 2 "$runs" -- $rows >"$tmp/out"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "log lines written by monitor(logging): $(wc -l <"$tmp/log")"
printf '%-26s %10s %10s %8s\n' what median_ms p90_ms ratio
n=1
for name in $names; do
	line=$(sed -n "${n}p" "$tmp/out")
	med=$(echo "$line" | sed -n 's/^median_ms=\([0-9.]*\).*/\1/p')
	p90=$(echo "$line" | sed -n 's/.* p90_ms=\([0-9.]*\).*/\1/p')
	case $name in
	bare) base=$med ;;
	usr:bare) base=$med ;;
	esac
	case $name in
	enforce) e1=$med ;;
	enforce+log-denials) e2=$med ;;
	usr:enforce) u1=$med ;;
	usr:enforce+log-denials) u2=$med ;;
	esac
	printf '%-26s %10s %10s %8s\n' "$name" "$med" "$p90" "$(echo "$med $base" | awk '{printf "%.2fx", $1 / $2}')"
	n=$((n + 1))
done
echo "--log-denials vs enforce: $(echo "$e2 $e1" | awk '{printf "%+.1f %%", ($1 / $2 - 1) * 100}')," \
	"usr: $(echo "$u2 $u1" | awk '{printf "%+.1f %%", ($1 / $2 - 1) * 100}')"
