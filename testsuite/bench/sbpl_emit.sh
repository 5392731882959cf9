#!/bin/bash
# sbpl_emit.sh - how long cagec takes to write a Seatbelt profile for
# policies of 1,000 and 10,000 rules, and how big the profile is.
#
# Whole-process timings of `cagec --emit sbpl`, RUNS repetitions each,
# medians, with two anchors measured in the same invocation: /bin/true
# (process start) and `cagec --emit ir` on the same policy (the same front
# end with the plain-text backend). The emitter alone is also timed in
# process (bench_sbpl_emit: one load, RUNS emits, median).
#
#   testsuite/bench/sbpl_emit.sh [BUILD_DIR] [RUNS]     (default: build 21)
set -eu
build=${1:-build}
runs=${2:-21}
cagec=$build/cagec
bench=$build/bench_sbpl_emit
for b in "$cagec" "$bench"; do
	[ -x "$b" ] || { echo "sbpl_emit.sh: no $b (build first)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A policy of N rules mixing every rule shape the emitter handles: subtrees,
# denies inside them, globs, /tmp paths, exec, hosts, Mach names, protects.
gen() {
	local n=$1 i
	{
		echo 'cage 1'
		echo 'profile big {'
		for ((i = 0; i < n; i++)); do
			case $((i % 8)) in
			0) echo "  allow read write \"/Users/alice/src/p$i/**\"" ;;
			1) echo "  deny write \"/Users/alice/src/p$((i - 1))/.git/hooks/**\"" ;;
			2) echo "  allow read \"/opt/data/d$i/*.csv\"" ;;
			3) echo "  allow exec \"/opt/tools/t$i/bin/*\"" ;;
			4) echo "  allow connect \"h$i.example.com:443\"" ;;
			5) echo "  allow read \"/tmp/cache$i/**\"" ;;
			6) echo "  protect \"~/secret$i/**\"" ;;
			7) echo "  allow mach \"com.example.svc$i\"" ;;
			esac
		done
		echo '}'
	} >"$tmp/p$n.cage"
}

# median_ms CMD...: runs CMD $runs times (bash's clock: no extra process per
# sample), prints the median wall time in milliseconds.
median_ms() {
	local r t0 t1
	: >"$tmp/times"
	for ((r = 0; r < runs; r++)); do
		t0=$EPOCHREALTIME
		"$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
		t1=$EPOCHREALTIME
		echo "$t0 $t1" >>"$tmp/times"
	done
	awk '{ print ($2 - $1) * 1000 }' "$tmp/times" | sort -g |
		awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] }'
}

printf '%-6s %8s %9s %9s %9s %11s %10s %9s %8s\n' rules true_ms ir_ms sbpl_ms \
	sbpl/ir emit_ms emit_min sb_bytes sb_lines
for n in 1000 10000; do
	gen "$n"
	t_true=$(median_ms /bin/true)
	t_ir=$(median_ms "$cagec" "$tmp/p$n.cage" --home /Users/alice --emit ir -o "$tmp/p$n.ir")
	t_sb=$(median_ms "$cagec" "$tmp/p$n.cage" --home /Users/alice --emit sbpl -o "$tmp/p$n.sb")
	read -r e_med e_min < <("$bench" "$tmp/p$n.cage" "$runs")
	ratio=$(awk -v a="$t_sb" -v b="$t_ir" 'BEGIN { printf "%.2f", a / b }')
	printf '%-6s %8s %9s %9s %9s %11s %10s %9s %8s\n' "$n" "$t_true" "$t_ir" "$t_sb" \
		"$ratio" "$e_med" "$e_min" "$(wc -c <"$tmp/p$n.sb")" "$(wc -l <"$tmp/p$n.sb")"
done
