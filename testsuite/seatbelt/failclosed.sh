#!/bin/sh
# `cagerun --backend seatbelt` on a machine without /usr/bin/sandbox-exec:
# it compiles the policy for macOS, takes the lease, writes the profile,
# starts the proxy, builds the launch plan, and then refuses (125) because
# sandbox-exec is missing. The command must never run: each case gives it
# a sentinel file to create, after a control shows that the same command
# does create it when run directly. Usage: failclosed.sh CAGERUN
set -u
CAGERUN=$1
if [ -e /usr/bin/sandbox-exec ]; then
	echo "SKIP: /usr/bin/sandbox-exec exists here (macOS runs testsuite/macos/qual.sh)"
	exit 0
fi
stem=sbx-failclosed . "$(dirname "$0")/lib.sh"
cat > "$T/p.cage" <<'P'
cage 1
import "std/base"
param workspace : path
profile main {
    private tmp home
    allow read write workspace
    allow connect "example.com:443"
}
P
S="$T/ws/SENTINEL"

# Control: the command itself works and creates the sentinel.
touch "$S"
check "control: the command creates the sentinel when run directly" test -e "$S"
rm -f "$S"

run() { # expected-status, stderr-pattern, description, cagerun args...
	want=$1 pat=$2 d=$3; shift 3
	TMPDIR="$T/tmp" "$CAGERUN" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	check "$d: status $want (got $rc)" test "$rc" = "$want"
	check "$d: says why" grep -q -- "$pat" "$T/err"
	check "$d: one line names the cause" test "$(grep -c 'nothing was run' "$T/err")" = 1
	check "$d: the command never ran" test ! -e "$S"
	check "$d: the lease is gone" leases_gone
	[ "$rc" = "$want" ] || cat "$T/err"
}

run 125 "/usr/bin/sandbox-exec: No such file or directory" "enforce" \
	--backend seatbelt -v -p "$T/p.cage" -D workspace="$T/ws" -- touch "$S"
check "enforce: the proxy was started" grep -q "proxy on 127.0.0.1:" "$T/err"
check "enforce: the profile was written into the lease" grep -q "profile $T/tmp/cage-tmp\.[A-Za-z0-9]*/profile.sb, tag cage-[0-9a-f]\{16\}" "$T/err"

run 125 "/usr/bin/sandbox-exec: No such file or directory" "enforce-fs" \
	--backend seatbelt -v --mode enforce-fs -p "$T/p.cage" -D workspace="$T/ws" -- touch "$S"
check "enforce-fs: no proxy" test -z "$(grep 'proxy on' "$T/err")"

run 125 "/usr/bin/sandbox-exec: No such file or directory" "monitor" \
	--backend seatbelt --mode monitor -p "$T/p.cage" -D workspace="$T/ws" -- touch "$S"

run 125 "param workspace: $T/nope: No such file" "missing path param" \
	--backend seatbelt -p "$T/p.cage" -D workspace="$T/nope" -- touch "$S"

# A shell metacharacter in the command is an argv element, never a shell
# string: the plan is built, and nothing runs.
run 125 "sandbox-exec" "metacharacters" \
	--backend seatbelt -p "$T/p.cage" -D workspace="$T/ws" -- sh -c "touch '$S'"

TMPDIR="$T/tmp" "$CAGERUN" --backend nope -p "$T/p.cage" -D workspace="$T/ws" -- touch "$S" 2>"$T/err"
check "unknown backend: 125" test $? = 125
check "unknown backend: the command never ran" test ! -e "$S"

echo "$fails failures"
[ "$fails" = 0 ]
