#!/bin/sh
# The Seatbelt launcher's steps after the plan, on Linux: cagerun_fakesbx
# is cagerun with fake-sandbox-exec.sh in place of /usr/bin/sandbox-exec
# (it records what it gets and runs the command unsandboxed). Checks the
# exact argv shape and -D values, the profile (mode 0600, tagged), the
# environment (the proxy URL with the run's secret, the private TMPDIR),
# that the proxy serves the command (403 for a denied host with the
# secret, 407 without), exit statuses and signals, and that the lease is
# removed. Usage: launch.sh CAGERUN_FAKESBX
set -u
CAGERUN=$1
stem=sbx-launch . "$(dirname "$0")/lib.sh"
cat > "$T/p.cage" <<'P'
cage 1
import "std/base"
param workspace : path
profile main {
    private tmp home
    allow read write workspace
    deny write "{workspace}/.git/**"
    allow connect "allowed.test:443"
    env keep PATH SBX_FAKE_LOG
}
P
L=$T/rec
export SBX_FAKE_LOG=$L HOME_LEAK=1 # the policy keeps SBX_FAKE_LOG, not HOME_LEAK
run() { TMPDIR="$T/tmp" timeout -s KILL 30 "$CAGERUN" --backend seatbelt -p "$T/p.cage" -D workspace="$T/ws" "$@"; }

run -- printf '%s|' 'a b' '$(touch x)' "it's" '' > "$T/out" 2>"$T/err"
rc=$?
check "status 0" test $rc = 0
check "argv reaches the command verbatim" test "$(cat "$T/out")" = 'a b|$(touch x)|it'"'"'s||'
check "argv shape" sh -c "head -2 '$L.argv' | tr -d '\n' | grep -q '^\[-f\]\[$T/tmp/cage-tmp\.[A-Za-z0-9]*/profile.sb\]\$'"
check "-- then the command" sh -c "grep -A1 -x '\[--\]' '$L.argv' | tail -1 | grep -qx '\[printf\]'"
check "profile mode 0600" test "$(cat "$L.mode")" = 600
check "profile tagged" grep -q '^(deny default (with message "cage-[0-9a-f]\{16\}"))$' "$L.profile"
check "every deny tagged" sh -c "! grep '^(deny' '$L.profile' | grep -v 'with message \"cage-'"
check "three -D values" test "$(wc -l < "$L.defines")" = 3
port=$(sed -n 's/^PROXY_PORT=//p' "$L.defines")
check "PROXY_PORT" sh -c "echo '$port' | grep -qx '[0-9]\{1,5\}'"
check "PRIVATE_TMP canonical, in the lease" grep -qx "PRIVATE_TMP=$T/tmp/cage-tmp\.[A-Za-z0-9]*/tmp" "$L.defines"
check "PRIVATE_HOME in the lease" grep -qx "PRIVATE_HOME=$T/tmp/cage-tmp\.[A-Za-z0-9]*/home" "$L.defines"
check "TMPDIR is PRIVATE_TMP" test "$(sed -n 's/^TMPDIR=//p' "$L.env")" = "$(sed -n 's/^PRIVATE_TMP=//p' "$L.defines")"
check "https_proxy carries the secret and the port" grep -qx "https_proxy=http://cage:[0-9a-f]\{32\}@127.0.0.1:$port" "$L.env"
check "nothing else leaks in" sh -c "! grep -q '^HOME_LEAK=' '$L.env'"
check "the lease is removed" leases_gone

# The proxy serves the command: a denied host gets 403 with the secret,
# and no secret gets 407. Only the proxy is contacted.
if command -v curl >/dev/null; then
	run -- sh -c 'curl -s -o /dev/null -w "%{http_code} " http://denied.test/; curl -s -o /dev/null -w "%{http_code}" --proxy "http://127.0.0.1:${https_proxy##*@127.0.0.1:}" http://denied.test/' > "$T/out" 2>"$T/err"
	check "proxy: 403 with the secret, 407 without" test "$(cat "$T/out")" = "403 407"
	check "proxy: summary of denied hosts" grep -q "denied.test:80" "$T/err"
else
	echo "FAIL curl is needed"; fails=$((fails + 1))
fi

run -- sh -c 'exit 7' >/dev/null 2>&1
check "the command's status" test $? = 7
run -- sh -c 'kill -TERM $$' >/dev/null 2>&1
check "a signal ends it: 128+15" test $? = 143
run -- /nonexistent/cmd >/dev/null 2>&1
check "command not found: 127" test $? = 127

# Signals sent to cagerun reach the command.
TMPDIR="$T/tmp" "$CAGERUN" --backend seatbelt -p "$T/p.cage" -D workspace="$T/ws" -- sleep 30 >/dev/null 2>&1 &
pid=$!
i=0
while [ $i -lt 100 ] && [ ! -s "$L.env" -o "$(cat "$L.argv" | tail -1)" != "[30]" ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.2
kill -TERM $pid
i=0
while [ $i -lt 100 ] && kill -0 $pid 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
if kill -0 $pid 2>/dev/null; then kill -KILL $pid; fi
wait $pid
check "SIGTERM to cagerun is forwarded: 143" test $? = 143
check "the lease is removed after a signal" leases_gone

# Resource limits on Seatbelt's host: open files are bounded (the rlimit
# sandbox-exec and the command inherit); processes, memory and tmp have no
# per-sandbox mechanism, so a strict one refuses the run (the command never
# starts) and a best-effort one runs and says so in one line.
lim() { sed "s|^    private tmp home|    private tmp home\n    $1|" "$T/p.cage" > "$T/lim.cage"; }
runlim() { TMPDIR="$T/tmp" timeout -s KILL 30 "$CAGERUN" --backend seatbelt -p "$T/lim.cage" -D workspace="$T/ws" "$@"; }
run -- sh -c 'ulimit -Hn' > "$T/out" 2>"$T/err"
check "control: without a limit the command gets cagerun's hard open-file limit" test "$(cat "$T/out")" = "$(ulimit -Hn)"
lim 'limit files 64'
runlim -- sh -c 'ulimit -Hn; ulimit -Sn' > "$T/out" 2>"$T/err"
check "limit files 64: hard and soft 64" test "$(tr '\n' ' ' < "$T/out")" = "64 64 "
for l in 'processes 100' 'memory 64 MiB' 'tmp 64 MiB'; do
	lim "limit $l"
	rm -f "$T/ws/ran"
	runlim -- touch "$T/ws/ran" > "$T/out" 2>"$T/err"
	rc=$?
	check "strict limit $l: 125" test $rc = 125
	check "strict limit $l: said, with its place" grep -q "lim.cage:6:5: limit $l cannot be enforced here" "$T/err"
	check "strict limit $l: the command never ran" test ! -e "$T/ws/ran"
	lim "limit $l best-effort"
	runlim -- touch "$T/ws/ran" > "$T/out" 2>"$T/err"
	rc=$?
	check "best-effort limit $l: runs" test $rc = 0 -a -e "$T/ws/ran"
	check "best-effort limit $l: one line" test "$(grep -c "best-effort limits NOT enforced here: $l" "$T/err")" = 1
	runlim -q -- true > "$T/out" 2>"$T/err"
	check "best-effort limit $l: nothing with --quiet" sh -c "! grep -q 'NOT enforced' '$T/err'"
done

echo "$fails failures"
[ "$fails" = 0 ]
