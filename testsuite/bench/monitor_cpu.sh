#!/bin/sh
# monitor_cpu.sh - what the observer costs per watched call, counted
# rather than timed, so that it holds on a shared machine: the CPU time
# of the whole process tree (perf stat task-clock), its system calls and
# context switches, for the file-heavy workload of monitor.sh (`find
# /usr/share -type f`, the first 5000 files it lists read by `cat`
# through xargs) run bare, monitored (covered.cage of
# monitor_fixture.sh, default toggles: nothing is recorded), enforced
# (its enforce.cage), and enforced with
# --log-denials; each cagerun row for the build under test and, when a
# second build is given, for that one too, interleaved round by round.
# The watched calls are counted once, bare, with strace.
# Usage:
#   testsuite/bench/monitor_cpu.sh BUILD_DIR [BEFORE_BUILD_DIR] [RUNS]
# Needs perf (linux-perf) and strace.
set -eu
build=$(cd "${1:?usage: monitor_cpu.sh BUILD_DIR [BEFORE_BUILD_DIR] [RUNS]}" && pwd)
before=""
if [ $# -ge 2 ] && [ -d "$2" ]; then before=$(cd "$2" && pwd); fi
runs=${3:-${2:-7}}
case $runs in *[!0-9]*) runs=7 ;; esac
command -v perf >/dev/null || { echo "monitor_cpu.sh: perf is not installed" >&2; exit 2; }
command -v strace >/dev/null || { echo "monitor_cpu.sh: strace is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case "$tmp$build$before$PATH$HOME" in *[[:space:]\'\"\\]*)
	echo "monitor_cpu.sh: paths with spaces or quotes are not supported" >&2; exit 2;;
esac
sh "$(dirname "$0")/monitor_fixture.sh" "$tmp"
clean="env -i PATH=$PATH HOME=$HOME"
calls="open,openat,openat2,creat,execve,execveat,mkdir,mkdirat,mknod,mknodat,unlink,unlinkat"
calls="$calls,rmdir,rename,renameat,renameat2,link,linkat,symlink,symlinkat,truncate"
calls="$calls,chmod,fchmodat,chown,lchown,fchownat,connect,bind,sendmsg"
$clean strace -f -qq -e trace=$calls -o "$tmp/trace" sh "$tmp/usr.sh"
watched=$(grep -v -e 'O_PATH' -e 'resumed>' "$tmp/trace" | grep -c '(' || :)

# rows, one a line: the name, then the command
echo "bare $clean sh $tmp/usr.sh" >"$tmp/rows"
for b in $before $build; do
	tag=after
	[ "$b" = "$before" ] && tag=before
	{
		echo "monitor:$tag $b/cagerun -q -p $tmp/covered.cage -- sh $tmp/usr.sh"
		echo "enforce:$tag $b/cagerun -q -p $tmp/enforce.cage -- sh $tmp/usr.sh"
		echo "log-denials:$tag $b/cagerun -q -p $tmp/enforce.cage --log-denials --log $tmp/dlog -- sh $tmp/usr.sh"
	} >>"$tmp/rows"
done
echo "machine: $(nproc) cores, $(uname -r), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "watched calls of the workload (strace, bare): $watched; $runs interleaved rounds + 1 warm-up"
: >"$tmp/samples"
round=0
while [ $round -le "$runs" ]; do
	while read -r name cmd; do
		# shellcheck disable=SC2086 # cmd is a word list built above
		perf stat -x, -e task-clock,context-switches,raw_syscalls:sys_enter -o "$tmp/ps" -- $cmd </dev/null
		[ $round -gt 0 ] && awk -F, -v n="$name" '
			$3 == "task-clock" { t = $1 } $3 == "context-switches" { c = $1 }
			$3 == "raw_syscalls:sys_enter" { s = $1 }
			END { print n, t, c, s }' "$tmp/ps" >>"$tmp/samples"
	done <"$tmp/rows"
	round=$((round + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
# medians per row; per watched call against bare (monitor) or against
# enforce of the same build (log-denials)
awk -v w="$watched" '
function med(name, col,   n, i, j, t, a) {
	n = 0
	for (i = 1; i <= N; i++) if (nm[i] == name) a[++n] = v[i, col]
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ N++; nm[N] = $1; v[N, 1] = $2; v[N, 2] = $3; v[N, 3] = $4; if (!($1 in seen)) { seen[$1] = 1; order[++R] = $1 } }
END {
	printf "%-18s %12s %10s %10s %14s %14s\n", "row", "cpu_ms", "ctxsw", "syscalls", "us/watched", "sys/watched"
	for (r = 1; r <= R; r++) {
		x = order[r]; base = x ~ /^log-denials/ ? "enforce:" substr(x, 13) : "bare"
		c = med(x, 1); s = med(x, 3)
		if (x == "bare" || x ~ /^enforce/) { printf "%-18s %12.1f %10d %10d\n", x, c, med(x, 2), s; continue }
		printf "%-18s %12.1f %10d %10d %14.2f %14.2f\n", x, c, med(x, 2), s,
			(c - med(base, 1)) * 1000 / w, (s - med(base, 3)) / w
	}
}' "$tmp/samples"
