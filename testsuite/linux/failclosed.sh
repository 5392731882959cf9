#!/bin/sh
# failclosed.sh - every way cagerun's set-up can fail ends the run with 125,
# one line naming the cause, and the command never starts. Each case first
# shows the same command creating its marker under the same policy (so a
# missing marker means "never ran", not "could not write"), then breaks one
# step: from the outside, with lnx_failinj making one system call fail, or
# with bad input.
# usage: failclosed.sh CAGERUN FAILINJ
set -u
cagerun=$1
failinj=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
ws=$tmp/ws
mkdir -p "$ws/.git/hooks"
marker=$ws/ran
cat >"$tmp/p.cage" <<POL
cage 1
param workspace : path
profile t {
    mode enforce-fs
    allow read exec "/usr/**", "/bin/**", "/lib/**", "/lib64/**", "/etc/**", "/proc/**"
    allow read write "/dev/null"
    allow read write workspace
    deny write "{workspace}/.git/hooks/**"
}
POL
sed 's/mode enforce-fs/mode enforce/' "$tmp/p.cage" >"$tmp/net.cage"
printf 'cage 1\nprofile t {\n    allow read wirte "/x"\n}\n' >"$tmp/bad.cage"
passed=0
failed=0

# run NAME EXPECTED-STATUS STDERR-PATTERN CMD...: the command is cagerun's.
run() {
	name=$1 want=$2 pat=$3
	shift 3
	rm -f "$marker"
	timeout -k 5 20 "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -ne "$want" ] || [ -e "$marker" ] || ! grep -q -- "$pat" "$tmp/err"; then
		echo "FAIL: $name: status $got (want $want), marker $([ -e "$marker" ] && echo created || echo absent), stderr:" >&2
		sed 's/^/    /' "$tmp/err" >&2
		failed=$((failed + 1))
	else
		passed=$((passed + 1))
	fi
}

control() {
	rm -f "$marker"
	timeout -k 5 20 "$@" >/dev/null 2>"$tmp/err"
	if [ ! -e "$marker" ]; then
		echo "FAIL: control did not create the marker: $*" >&2
		sed 's/^/    /' "$tmp/err" >&2
		failed=$((failed + 1))
		return 1
	fi
	return 0
}

touch_it="touch $marker"
control "$cagerun" -p "$tmp/p.cage" -D workspace="$ws" -- sh -c "$touch_it"
control "$cagerun" -p "$tmp/net.cage" -D workspace="$ws" -- sh -c "$touch_it"
control "$failinj" acct 1 -- "$cagerun" -p "$tmp/p.cage" -D workspace="$ws" -- sh -c "$touch_it"

C="-D workspace=$ws -- sh -c"
# shellcheck disable=SC2086 # $C is words on purpose
{
run "policy error" 125 "policy has errors" "$cagerun" -p "$tmp/bad.cage" $C "$touch_it"
run "missing param" 125 "has no value" "$cagerun" -p "$tmp/p.cage" -- sh -c "$touch_it"
run "param path missing" 125 "param workspace" "$cagerun" -p "$tmp/p.cage" -D workspace="$ws/nope" -- sh -c "$touch_it"
run "pin mismatch" 125 "pin" "$cagerun" -p "$tmp/p.cage" --pin xxh3:0000000000000000 $C "$touch_it"
run "monitor mode" 125 "monitor" "$cagerun" -p "$tmp/p.cage" --mode monitor $C "$touch_it"
run "bad mode" 125 "mode" "$cagerun" -p "$tmp/p.cage" --mode bogus $C "$touch_it"
rm -rf "$ws/.git/hooks"
run "inexpressible rule" 125 "cannot be enforced exactly" "$cagerun" -p "$tmp/p.cage" $C "$touch_it"
mkdir -p "$ws/.git/hooks"
run "lease" 125 "private directory" env TMPDIR=/nonexistent/cage-test "$cagerun" -p "$tmp/p.cage" $C "$touch_it"
run "no Landlock" 125 "Landlock is not available" "$failinj" landlock_create_ruleset 38 -- "$cagerun" -p "$tmp/p.cage" $C "$touch_it"
run "Landlock refuses a rule" 125 "Landlock refused" "$failinj" landlock_add_rule 22 -- "$cagerun" -p "$tmp/p.cage" $C "$touch_it"
run "Landlock cannot enforce" 125 "cannot enforce" "$failinj" landlock_restrict_self 1 -- "$cagerun" -p "$tmp/p.cage" $C "$touch_it"
run "seccomp load" 125 "seccomp" "$failinj" seccomp 38 -- "$cagerun" -p "$tmp/p.cage" $C "$touch_it"
run "namespaces refused" 125 "namespaces" "$failinj" clone 1 clone-flag -- "$cagerun" -p "$tmp/p.cage" $C "$touch_it"
run "mount refused" 125 "mount" "$failinj" mount 1 -- "$cagerun" -p "$tmp/p.cage" $C "$touch_it"
run "plan mount refused" 125 "mount" "$failinj" open_tree 1 -- "$cagerun" -p "$tmp/p.cage" $C "$touch_it"
if grep -q epoll_create1 "$cagerun"; then
	run "proxy cannot start" 125 "proxy\|epoll" "$failinj" epoll_create1 24 -- "$cagerun" -p "$tmp/net.cage" $C "$touch_it"
else
	# The portable proxy (CAGE_PORTABLE_PROXY) makes no epoll call to
	# fail; a descriptor limit too low for its connections stops it.
	run "proxy cannot start" 125 "proxy" sh -c 'ulimit -n 64 && exec "$@"' sh "$cagerun" -p "$tmp/net.cage" $C "$touch_it"
fi
run "sandbox listener" 125 "listen" "$failinj" bind 98 -- "$cagerun" -p "$tmp/net.cage" $C "$touch_it"
run "capabilities" 125 "capab" "$failinj" capset 1 -- "$cagerun" -p "$tmp/p.cage" $C "$touch_it"
run "not found" 127 "No such file" "$cagerun" -p "$tmp/p.cage" -D workspace="$ws" -- /nonexistent/cmd
}
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
