#!/bin/sh
# tunnel.sh - a CONNECT tunnel from inside cagerun's sandbox (--mode
# enforce: the filtering proxy is the only way out of the sandbox's network
# namespace) to a server outside, next to the same tunnel through
# `cagerun --proxy-only` from outside, and to a direct connection (the
# anchor). Usage:
#   testsuite/bench/tunnel.sh BUILD_DIR [ROUNDS] [ITERS] [MIB]
# Each of ROUNDS rounds runs the three clients one after the other (the
# order rotates per round); each client sends MIB MiB (default 1024) one way
# through one connection, then times ITERS set-ups (connect [+ CONNECT] +
# 1-byte echo + close, after ITERS/10 untimed ones). Reported: median
# throughput over the rounds, and set-up p50/p99 over all samples.
# The servers (testsuite/tun_bench serve) listen on 127.0.0.2 only and stop
# on their own after 15 minutes at the latest.
set -eu
build=$(cd "${1:?usage: tunnel.sh BUILD_DIR [ROUNDS] [ITERS] [MIB]}" && pwd)
rounds=${2:-5}
iters=${3:-400}
mib=${4:-1024}
tb="$build/testsuite/tun_bench"
cagerun="$build/cagerun"
tmp=$(mktemp -d)
srv= px=
cleanup() {
	[ -n "$px" ] && kill -TERM "$px" 2>/dev/null && wait "$px" 2>/dev/null
	[ -n "$srv" ] && kill -TERM "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Servers: stdin is a fifo this script holds open; closing it (or the
# script's exit) ends them.
mkfifo "$tmp/srv.in"
"$tb" serve 127.0.0.2 900 <"$tmp/srv.in" >"$tmp/srv.out" &
srv=$!
exec 3>"$tmp/srv.in"
for _ in $(seq 100); do [ -s "$tmp/srv.out" ] && break; sleep 0.05; done
read -r _ sink _ echo <"$tmp/srv.out"

# The policy: the base system, the benchmark binary, and 127.0.0.2 only.
cat >"$tmp/tunnel.cage" <<EOF
cage 1
import "std/base"
profile tunnel {
    mode enforce
    allow read exec "$build/testsuite/**"
    allow connect "127.0.0.2"
}
EOF

"$cagerun" --proxy-only -p "$tmp/tunnel.cage" >"$tmp/px.out" 2>"$tmp/px.err" &
px=$!
for _ in $(seq 100); do [ -s "$tmp/px.out" ] && break; sleep 0.05; done
url=$(sed -n 's/^proxy \(http:.*\)$/\1/p' "$tmp/px.out")
[ -n "$url" ] || { echo "tunnel.sh: cagerun --proxy-only did not start:" >&2; cat "$tmp/px.err" >&2; exit 1; }

bytes=$((mib * 1048576))
run() { # run MODE ROUND
	case $1 in
	direct) "$tb" client direct 127.0.0.2 "$sink" "$echo" "$bytes" "$iters" ;;
	outside) "$tb" client "$url" 127.0.0.2 "$sink" "$echo" "$bytes" "$iters" ;;
	inside) "$cagerun" -p "$tmp/tunnel.cage" --mode enforce -- \
		"$tb" client env 127.0.0.2 "$sink" "$echo" "$bytes" "$iters" ;;
	esac >"$tmp/$1.$2" || { echo "tunnel.sh: $1 client failed in round $2" >&2; exit 1; }
}
# The inside client has no other way out: a direct connection from the
# sandbox to the server must fail, or "inside" would measure nothing.
if "$cagerun" -p "$tmp/tunnel.cage" --mode enforce -- \
	"$tb" client direct 127.0.0.2 "$sink" "$echo" 0 1 >/dev/null 2>&1; then
	echo "tunnel.sh: a direct connection from inside the sandbox succeeded" >&2
	exit 1
fi
echo "machine: $(nproc) cores, $(uname -r), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$rounds rounds; per client run: $mib MiB one way, $iters set-ups (+$((iters / 10)) warm-up)"
for r in $(seq "$rounds"); do
	case $((r % 3)) in
	1) order="direct outside inside" ;;
	2) order="outside inside direct" ;;
	0) order="inside direct outside" ;;
	esac
	for m in $order; do run "$m" "$r"; done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# Per mode: median throughput (GB/s) over rounds; set-up p50 and p99 (us)
# over all samples.
stats() {
	tput=$(cat "$tmp/$1".* | awk '$1 == "throughput" { printf "%.4f\n", $2 / $3 / 1e9 }' | sort -n |
		awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')
	cat "$tmp/$1".* | awk '$1 == "setup" { print $2 }' | sort -n >"$tmp/$1.setup"
	n=$(wc -l <"$tmp/$1.setup")
	p50=$(sed -n "$(((n + 1) / 2))p" "$tmp/$1.setup")
	p99=$(sed -n "$(((n * 99 + 99) / 100))p" "$tmp/$1.setup")
	echo "$1 $tput $p50 $p99 $n"
}
{ stats direct; stats outside; stats inside; } >"$tmp/stats"
printf '%-44s %10s %9s %10s %10s %10s\n' what GB/s "x direct" "p50 us" "p99 us" "p50 +us"
awk 'NR == 1 { dt = $2; dp = $3 }
{ name = $1 == "direct" ? "direct (anchor)" : "inside: cagerun --mode enforce -- client"
  if ($1 == "outside") name = "outside: cagerun --proxy-only"
  printf "%-44s %10.2f %9.2f %10.1f %10.1f %+10.1f\n", name, $2, $2 / dt, $3, $4, $3 - dp }' "$tmp/stats"
awk 'NR == 2 { ot = $2; op = $3 } NR == 3 { printf "inside vs outside: throughput %.2fx, set-up p50 %+.1f us\n", $2 / ot, $3 - op }' "$tmp/stats"
