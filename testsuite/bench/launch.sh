#!/bin/sh
# launch.sh - what starting a command inside a sandbox costs: whole-process
# times of `/bin/true` run bare (the anchor), through `cagerun --mode
# enforce-fs` and `--mode enforce` with examples/claude-code.cage
# (compiling the policy included), through bubblewrap with a comparable
# set-up (bwrap --unshare-all, with and without --share-net), and through
# Anthropic's sandbox runtime (`srt`), all interleaved
# round by round in one bench_run call. Two more anchors say what part is
# the kernel's: `cagec` compiling the same policy (front end alone), and
# ns_floor, which makes the same namespaces and mounts, forks and execs
# /bin/true, and does nothing else (no policy, Landlock, seccomp, lease).
# One more cagerun row runs the layered form (`cagerun -- /bin/true` in
# the workspace), which is how users start an agent.
# Usage:
#   testsuite/bench/launch.sh BUILD_DIR [RUNS]
# Optional: BASE=BUILD_DIR adds the two cagerun rows of another build
# (before a change, say), interleaved with the rest so that both see the
# same load; SRT_PREFIX=DIR reuses an npm prefix that already holds
# @anthropic-ai/sandbox-runtime (otherwise it is installed into a scratch
# prefix with `npm install --prefix`); SKIP="srt bwrap ..." leaves rows out;
# WS_FILES=N fills the workspace with N empty files, 40 to a directory
# (what a checked-out project looks like to the launch's git discovery
# and its report at exit, which walk the workspace); GAP=MS pauses MS
# milliseconds before every run (bench_run -g), as between an agent host's
# tool calls, so that what a run leaves to be done after it exits does not
# fall on the next one; JOBS=N starts N copies of each row at once
# (bench_run -j), as an agent host running tool calls side by side does,
# and times each copy from its start to its exit; MOUNTS=N (root) runs
# every row in a mount namespace of its own with N more mounts (small
# tmpfs), as on hosts with many (snap packages, container runtimes' layers),
# since making the sandbox's view read-only is work per mount.
# With cage-launch in BUILD_DIR, a launcher (`cagerun launcher`, on a
# socket in the scratch folder) serves two more rows, the same two runs
# through cage-launch (docs/launcher.md); SKIP="launcher" leaves them out.
# Their cpu column is cage-launch's own: the CPU of the launcher and of
# all it forked for them is printed after the table, per run.
# A row whose tool is missing or fails its trial run is skipped with the
# reason; the benchmark never installs system packages itself.
set -eu
build=$(cd "${1:?usage: launch.sh BUILD_DIR [RUNS]}" && pwd)
runs=${2:-21}
src=$(cd "$(dirname "$0")/../.." && pwd)
skip=" ${SKIP:-} "
mounts=${MOUNTS:-0}
case "$mounts" in *[!0-9]* | "") echo "launch.sh: MOUNTS must be a number" >&2; exit 2;; esac
if [ "$mounts" -gt 0 ] && [ -z "${CAGE_LAUNCH_MOUNTS_IN:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "launch.sh: MOUNTS needs root" >&2; exit 2; }
	[ "$mounts" -le 2000 ] || { echo "launch.sh: MOUNTS is at most 2000" >&2; exit 2; }
	CAGE_LAUNCH_MOUNTS_IN=1 exec unshare -m --propagation private sh "$0" "$@"
fi
tmp=$(mktemp -d)
lpid=
trap 'if [ -n "$lpid" ]; then kill "$lpid"; wait "$lpid"; fi
if [ "$mounts" -gt 0 ]; then umount -R "$tmp/mounts" 2>/dev/null || :; fi; rm -rf "$tmp"' EXIT
if [ "$mounts" -gt 0 ]; then
	mkdir "$tmp/mounts"
	mount -t tmpfs -o size=1m cage-bench "$tmp/mounts"
	i=0
	while [ "$i" -lt "$mounts" ]; do
		mkdir "$tmp/mounts/m$i"
		mount -t tmpfs -o size=64k cage-bench "$tmp/mounts/m$i"
		i=$((i + 1))
	done
fi

# The workspace: a scratch git repository, so that the policy's
# "{workspace}/.git/hooks/**" deny has something to name.
ws="$tmp/ws"
mkdir -p "$ws"
git -C "$ws" init -q
mkdir -p "$ws/.git/hooks"
n=0
while [ "$n" -lt "${WS_FILES:-0}" ]; do
	d="$ws/src/m$((n / 2000))/d$((n / 40))"
	[ -d "$d" ] || mkdir -p "$d"
	: >"$d/f$n.js"
	n=$((n + 1))
done
cd "$ws"

policy="$src/examples/claude-code.cage"
cagerun="$build/cagerun"
add() { # add NAME COMMAND... : keep the row if one trial run succeeds
	name=$1
	shift
	case "$skip" in *" $name "*) echo "skipped $name: in SKIP"; return;; esac
	if ! out=$("$@" 2>&1 </dev/null); then
		echo "skipped $name: trial run failed: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
		return
	fi
	printf '%s\n' "$name" >>"$tmp/names"
	rows="$rows ::: $*"
}

# Rows are collected as one word list; every path here is free of spaces
# and quotes (mktemp, the build and source directories are checked below).
case "$tmp$build$src" in *[[:space:]\'\"\\]*)
	echo "launch.sh: paths with spaces or quotes are not supported" >&2; exit 2;;
esac
rows=""
: >"$tmp/names"
add "true" /bin/true
add "cagerun-enforce-fs" "$cagerun" -p "$policy" -D "workspace=$ws" --mode enforce-fs -- /bin/true
add "cagerun-enforce" "$cagerun" -p "$policy" -D "workspace=$ws" --mode enforce -- /bin/true
# The layered form, as users run an agent (no -p: the layers found from
# the workspace, the command's own layer; its mode is enforce).
add "cagerun-layered" "$cagerun" -q -- /bin/true
case "$skip" in *" launcher "*) ;; *)
	if [ -x "$build/cage-launch" ]; then
		mkdir -m 700 "$tmp/rt"
		export CAGE_LAUNCHER_SOCKET="$tmp/rt/cage/launcher.sock"
		"$cagerun" launcher -v --socket "$CAGE_LAUNCHER_SOCKET" >"$tmp/launcher.log" 2>&1 </dev/null &
		lpid=$!
		i=0
		while [ ! -S "$CAGE_LAUNCHER_SOCKET" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
		add "launch-enforce-fs" "$build/cage-launch" -p "$policy" -D "workspace=$ws" --mode enforce-fs -- /bin/true
		add "launch-enforce" "$build/cage-launch" -p "$policy" -D "workspace=$ws" --mode enforce -- /bin/true
		# cage-launch falls back to cagerun silently: rows the launcher
		# did not serve would be cagerun's, under another name.
		if [ "$(grep -c ': started ' "$tmp/launcher.log")" -lt 2 ]; then
			echo "launch.sh: the launcher did not serve the trial runs: $(tail -n 3 "$tmp/launcher.log")" >&2
			exit 2
		fi
	else
		echo "skipped launcher: no $build/cage-launch"
	fi;;
esac
if [ -n "${BASE:-}" ]; then
	base=$(cd "$BASE" && pwd)
	case "$base" in *[[:space:]\'\"\\]*)
		echo "launch.sh: paths with spaces or quotes are not supported" >&2; exit 2;;
	esac
	add "base-enforce-fs" "$base/cagerun" -p "$policy" -D "workspace=$ws" --mode enforce-fs -- /bin/true
	add "base-enforce" "$base/cagerun" -p "$policy" -D "workspace=$ws" --mode enforce -- /bin/true
fi
add "cagec-compile-only" "$build/cagec" "$policy" -D "workspace=$ws" --emit ir -o /dev/null
add "ns-floor-fs" "$build/testsuite/ns_floor" -- /bin/true
add "ns-floor-net" "$build/testsuite/ns_floor" --net -- /bin/true
# bubblewrap with what cagerun's two modes make: every namespace
# (--unshare-all: user, mount, PID, IPC, UTS, cgroup, network) for enforce;
# the same sharing the network for enforce-fs; the root read-only with
# /dev, /proc, a tmpfs /tmp and the workspace bound writable, as the
# example policy's plan does.
if command -v bwrap >/dev/null; then
	bw="bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $ws $ws --die-with-parent"
	# shellcheck disable=SC2086 # bw is a word list without spaces in its words
	add "bwrap-all" $bw --unshare-all /bin/true
	# shellcheck disable=SC2086
	add "bwrap-share-net" $bw --unshare-all --share-net /bin/true
else
	echo "skipped bwrap: not installed (Debian: apt-get install bubblewrap)"
fi

srt_row() {
	case "$skip" in *" srt "*) echo "skipped srt: in SKIP"; return;; esac
	for t in bwrap socat rg npm; do
		if ! command -v "$t" >/dev/null; then
			echo "skipped srt: needs $t (Debian: bubblewrap socat ripgrep npm)"
			return
		fi
	done
	prefix=${SRT_PREFIX:-$tmp/srt}
	bin="$prefix/node_modules/.bin/srt"
	if [ ! -x "$bin" ]; then
		echo "installing @anthropic-ai/sandbox-runtime into $prefix ..."
		if ! npm install --silent --no-audit --no-fund --prefix "$prefix" \
			@anthropic-ai/sandbox-runtime >"$tmp/npm.log" 2>&1; then
			echo "skipped srt: npm install failed: $(tail -n 3 "$tmp/npm.log" | tr '\n' ' ')"
			return
		fi
	fi
	# Nothing special allowed: no hosts, no extra writes, no denies.
	printf '%s\n' '{"network":{"allowedDomains":[],"deniedDomains":[]},' \
		'"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}' >"$tmp/srt.json"
	echo "srt: $(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' \
		"$prefix/node_modules/@anthropic-ai/sandbox-runtime/package.json")"
	add "srt" "$bin" --settings "$tmp/srt.json" /bin/true
}
srt_row

echo "machine: $(nproc) cores, $(uname -r), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "cagerun: $("$cagerun" --version | head -n 1); bwrap: $(bwrap --version 2>/dev/null || echo none)"
echo "mounts: $(wc -l </proc/self/mountinfo) in this mount namespace (MOUNTS=$mounts added)"
echo "workspace: git repository $ws with ${WS_FILES:-0} files; cwd = workspace; $runs interleaved rounds + 3 warm-up, ${JOBS:-1} at a time"
# The launcher's CPU and its reaped children's (spares, runs, sandboxes),
# in clock ticks, from /proc/PID/stat (fields 14 to 17, counted after the
# command's name, which may hold spaces): the rows' own cpu column counts
# only cage-launch.
lticks() { sed 's/.*) //' "/proc/$lpid/stat" | awk '{ print $12 + $13 + $14 + $15 }'; }
lserved() { grep -c ': started ' "$tmp/launcher.log"; }
if [ -n "$lpid" ]; then t0=$(lticks) s0=$(lserved); fi
# shellcheck disable=SC2086 # rows is a word list built above
"$build/testsuite/bench_run" -w 3 -g "${GAP:-0}" -j "${JOBS:-1}" "$runs" -- ${rows# ::: } >"$tmp/out"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$lpid" ]; then
	t1=$(lticks) s1=$(lserved) hz=$(getconf CLK_TCK)
	echo "launcher: $((s1 - s0)) runs served, $(awk -v t=$((t1 - t0)) -v n=$((s1 - s0)) -v hz="$hz" \
		'BEGIN { printf "%.3f", n ? t * 1000 / hz / n : 0 }') ms of CPU per run, both modes: the launcher, its spares, runs and sandboxes (ticks of $((1000 / hz)) ms; the spares still waiting not counted)"
fi
printf '%-20s %9s %9s %9s %10s %10s %9s %9s\n' what median p90 min "+median" "+p90" "rss" "cpu"
paste "$tmp/names" "$tmp/out" | awk '
function v(k,   i, kv) { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } return "" }
{ printf "%-20s %7.3fms %7.3fms %7.3fms %10s %10s %6.1fMB %7.3fms\n", $1, v("median_ms"), v("p90_ms"),
	v("min_ms"), (NR == 1 ? "anchor" : v("d_median_ms") "ms"), (NR == 1 ? "" : v("d_p90_ms") "ms"),
	v("maxrss_kb") / 1024, v("cpu_median_ms") }'
