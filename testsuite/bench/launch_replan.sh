#!/bin/sh
# launch_replan.sh - the launches that cannot reuse what an earlier one
# kept: a launch whose kept plan is gone (the first in a workspace, or one
# after a path the plan depends on changed), against one that reuses it,
# and the layered form in a workspace with a trusted project layer (whose
# lint runs on every launch), against the same workspace without one.
# Every row is a small script run by sh, so that each pays the same shell
# start-up and the same `rm -rf` of a plan folder (the anchor does only
# that, then /bin/true), all interleaved round by round in one bench_run
# call. examples/claude-code.cage for the -p rows; HOME is a scratch
# folder for the layered ones, so no layer of the machine's user counts.
# Usage:
#   testsuite/bench/launch_replan.sh BUILD_DIR [RUNS]
# Optional: BASE=BUILD_DIR adds the same rows for another build (before a
# change, say), each with plan folders of its own.
set -eu
build=$(cd "${1:?usage: launch_replan.sh BUILD_DIR [RUNS]}" && pwd)
runs=${2:-21}
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case "$tmp$build$src${BASE:-}" in *[[:space:]\'\"\\]*)
	echo "launch_replan.sh: paths with spaces or quotes are not supported" >&2; exit 2;;
esac

ws="$tmp/ws"
mkdir -p "$ws/.git/hooks"
git -C "$ws" init -q
# A workspace with a project layer of one grant, approved the way a user
# approves one (cagerun trust), and one without.
home="$tmp/home"
proj="$tmp/proj"
plain="$tmp/plain"
mkdir -p "$home" "$proj/.cage" "$plain"
git -C "$proj" init -q
git -C "$plain" init -q
printf 'cage 1\nallow read "/opt/**"\n' >"$proj/.cage/policy.cage"
(cd "$proj" && HOME=$home XDG_CONFIG_HOME= XDG_CACHE_HOME= "$build/cagerun" trust >/dev/null)

rows=""
: >"$tmp/names"
script() { # script NAME BODY : a row running BODY under sh, kept if a trial run succeeds
	printf '%s\n' "$2" >"$tmp/$1.sh"
	if ! out=$(sh "$tmp/$1.sh" 2>&1 </dev/null); then
		echo "skipped $1: trial run failed: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
		return
	fi
	printf '%s\n' "$1" >>"$tmp/names"
	rows="$rows ::: sh $tmp/$1.sh"
}
p="-q -p $src/examples/claude-code.cage -D workspace=$ws"
rows_of() { # rows_of PREFIX CAGERUN
	x="$tmp/xc-$1"
	script "$1-replan-fs" "rm -rf $x-a/cage/.plans; cd $ws && XDG_CACHE_HOME=$x-a exec $2 $p --mode enforce-fs -- /bin/true"
	script "$1-replan" "rm -rf $x-b/cage/.plans; cd $ws && XDG_CACHE_HOME=$x-b exec $2 $p --mode enforce -- /bin/true"
	script "$1-kept-fs" "rm -rf $x-c/none; cd $ws && XDG_CACHE_HOME=$x-c exec $2 $p --mode enforce-fs -- /bin/true"
	l="rm -rf $x-d/none; HOME=$home XDG_CONFIG_HOME= XDG_CACHE_HOME=$x-d exec $2 -q"
	script "$1-layers-fs" "cd $plain && $l --mode enforce-fs -- /bin/true"
	script "$1-project-layer-fs" "cd $proj && $l --mode enforce-fs -- /bin/true"
	script "$1-project-layer" "cd $proj && $l --mode enforce -- /bin/true"
}
script "anchor" "rm -rf $tmp/xc-none/cage/.plans; exec /bin/true"
rows_of cagerun "$build/cagerun"
if [ -n "${BASE:-}" ]; then
	rows_of base "$(cd "$BASE" && pwd)/cagerun"
fi
rows=${rows# ::: }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086 # rows is a word list without spaces in its words
"$build/testsuite/bench_run" -w 3 "$runs" -- $rows >"$tmp/out"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-28s %9s %9s %10s %10s %9s\n' what median p90 "+median" "+p90" "cpu"
paste "$tmp/names" "$tmp/out" | awk '
function v(k,   i, kv) { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } return "" }
{ printf "%-28s %7.3fms %7.3fms %10s %10s %7.3fms\n", $1, v("median_ms"), v("p90_ms"),
	(NR == 1 ? "anchor" : v("d_median_ms") "ms"), (NR == 1 ? "" : v("d_p90_ms") "ms"), v("cpu_median_ms") }'
