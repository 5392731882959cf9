#!/bin/sh
# qual.sh - the macOS qualification suite, for a Mac (no Mac runs the
# project's CI; docs/cagerun.md lists what has been verified where).
#
#   sh testsuite/macos/qual.sh CAGERUN SRCDIR
#
# Each case first does the operation WITHOUT cagerun against a disposable
# fixture and requires it to work (a failing control fails the case, or
# skips it with the reason when the Mac itself refuses, e.g. a missing
# Automation permission), then does it under cagerun and requires it to be
# refused and nothing to have changed. Darwin cases never skip because
# Seatbelt could not load or launch a profile: that is a failure.
# Prints PASS/FAIL/SKIP per case and "N passed, N failed"; exit 1 on any
# failure.
set -u
[ $# -eq 2 ] || { echo "usage: qual.sh CAGERUN SRCDIR" >&2; exit 2; }
[ "$(uname -s)" = Darwin ] || { echo "qual.sh is for macOS" >&2; exit 2; }
CAGERUN=$1 SRC=$2
POL=$SRC/testsuite/macos/qual.cage
T=30
PASSED=0 FAILED=0 SKIPPED=0
pass() { PASSED=$((PASSED + 1)); echo "PASS $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $1: $2"; [ -s "$F/err" ] && sed 's/^/    /' "$F/err"; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "SKIP $1: $2"; }

# Fixtures in a fresh directory under /tmp (so the /private aliases are
# exercised), removed at the end.
F=$(mktemp -d /tmp/cage-macqual.XXXXXX) || exit 1
trap 'kill $SRV 2>/dev/null; rm -rf "$F"' EXIT
H=$F/home W=$F/ws O=$F/outside
mkdir -p "$H/.ssh" "$W" "$O"
echo "SENTINEL-$$" > "$H/.ssh/id_rsa"
echo readable > "$H/notes"
(cd "$W" && git init -q && mkdir -p .git/hooks && git config user.email q@x && git config user.name q)

# A local HTTP server for the proxy cases (127.0.0.1 only).
# Two: the first is reachable through the proxy; the second is named by no
# rule, for the direct-connection case.
server() {
	/usr/bin/python3 -c '
import http.server, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"qual-ok")
    def log_message(self, *a): pass
s = socketserver.TCPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()' > "$1" &
}
server "$F/port"
SRV=$!
server "$F/port2"
SRV="$SRV $!"
for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "$F/port" ] && [ -s "$F/port2" ] && break; sleep 0.2; done
PORT=$(cat "$F/port") PORT2=$(cat "$F/port2")

# cage CMD...: the command under the policy; a marker line proves the
# sandbox started (a refusal is never a sandbox that failed to start).
cage() {
	# shellcheck disable=SC2086 # MODE: empty, or "--mode monitor"
	(cd "$W" && HOME="$H" "$CAGERUN" -p "$POL" ${MODE:-} -D workspace="$W" -D home="$H" -D port="$PORT" \
		--resolve "qual.test:$PORT:127.0.0.1" -- /bin/sh -c 'echo CAGE-STARTED; '"$1" \
		>"$F/out" 2>"$F/err")
}
started() { grep -q CAGE-STARTED "$F/out"; }
ctl() { (cd "$W" && HOME="$H" /bin/sh -c "$1") >"$F/cout" 2>&1; }

# case NAME CONTROL UNDER-CAGE CHECK: control must succeed; under cage the
# sandbox must start and CHECK (a shell test) must hold afterwards.
case_() {
	name=$1 control=$2 caged=$3 check=$4
	if ! ctl "$control"; then fail "$name" "control did not work without cagerun: $(head -c 200 "$F/cout")"; return; fi
	cage "$caged"
	if ! started; then fail "$name" "the sandbox did not start (Seatbelt refused the profile?)"; return; fi
	if sh -c "$check"; then pass "$name"; else fail "$name" "not refused: $(head -c 200 "$F/out")"; fi
}

# ---- secrets -------------------------------------------------------------
case_ ssh/cat "cat '$H/.ssh/id_rsa'" "cat '$H/.ssh/id_rsa'" "! grep -q SENTINEL '$F/out'"
case_ ssh/ls "ls '$H/.ssh' | grep -q id_rsa" "ls '$H/.ssh'" "! grep -q id_rsa '$F/out'"
ln -s "$H/.ssh/id_rsa" "$W/link"
case_ ssh/symlink-in-workspace "cat '$W/link'" "cat '$W/link'" "! grep -q SENTINEL '$F/out'"
case_ ssh/grandchild "sh -c \"sh -c 'cat $H/.ssh/id_rsa'\"" "sh -c \"sh -c 'cat $H/.ssh/id_rsa'\"" "! grep -q SENTINEL '$F/out'"
case_ ssh/private-alias "cat '/private$H/.ssh/id_rsa'" "cat '/private$H/.ssh/id_rsa'" "! grep -q SENTINEL '$F/out'"
case_ home/readable "cat '$H/notes'" "cat '$H/notes'" "grep -q readable '$F/out'"

# ---- writes --------------------------------------------------------------
case_ write/outside "touch '$O/c' && rm '$O/c'" "touch '$O/x'" "test ! -e '$O/x'"
case_ write/private-alias "touch '/private$O/c' && rm '/private$O/c'" "touch '/private$O/x'" "test ! -e '$O/x'"
case_ write/git-hook "touch '$W/.git/hooks/c' && rm '$W/.git/hooks/c'" "echo x > '$W/.git/hooks/pre-commit'" "test ! -e '$W/.git/hooks/pre-commit'"
case_ write/rename-ssh-parent "true" "mv '$H/.ssh' '$W/stolen'" "test -d '$H/.ssh' && test ! -e '$W/stolen'"
case_ work/workspace "true" "echo hi > a.txt && cat a.txt | tr a-z A-Z > b.txt && git add . && git commit -qm x" "grep -q HI '$W/b.txt' && (cd '$W' && git log --oneline | grep -q x)"

# ---- Mach services, keychain, Apple Events, LaunchServices ---------------
LOOKUP='/usr/bin/python3 -c "
import ctypes, sys
lib = ctypes.CDLL(\"/usr/lib/libSystem.B.dylib\")
bp = ctypes.c_uint.in_dll(lib, \"bootstrap_port\")
port = ctypes.c_uint(0)
kr = lib.bootstrap_look_up(bp, sys.argv[1].encode(), ctypes.byref(port))
print(\"kr\", kr); sys.exit(0 if kr == 0 else 1)"'
case_ mach/SecurityServer "$LOOKUP com.apple.SecurityServer" "$LOOKUP com.apple.SecurityServer; echo status=\$?" "grep -q status=1 '$F/out'"
case_ mach/securityd.xpc "$LOOKUP com.apple.securityd.xpc" "$LOOKUP com.apple.securityd.xpc; echo status=\$?" "grep -q status=1 '$F/out'"
# A keychain of the fixture's own, in the workspace (readable there): only
# the security daemons stand between the command and the password.
KC=$W/q.keychain
security create-keychain -p pw "$KC" >/dev/null 2>&1 && security unlock-keychain -p pw "$KC" >/dev/null 2>&1 &&
	security add-generic-password -a q -s cage-qual -w KC-SECRET "$KC" >/dev/null 2>&1
case_ keychain/generic-password "security find-generic-password -s cage-qual -w '$KC' | grep -q KC-SECRET" \
	"security find-generic-password -s cage-qual -w '$KC'" "! grep -q KC-SECRET '$F/out'"
security delete-keychain "$KC" >/dev/null 2>&1
if ctl "osascript -e 'tell application \"Finder\" to get version'"; then
	case_ appleevents/finder "osascript -e 'tell application \"Finder\" to get version'" \
		"osascript -e 'tell application \"Finder\" to get version'; echo status=\$?" "! grep -q status=0 '$F/out'"
else
	skip appleevents/finder "the control needs Automation permission for this terminal (System Settings > Privacy)"
fi
echo note > "$F/open-control.txt"
echo note > "$W/open-caged.txt"
case_ launchservices/open "open -g -j -a TextEdit '$F/open-control.txt'" \
	"open -g -j -a TextEdit '$W/open-caged.txt'; echo status=\$?" "! grep -q status=0 '$F/out'"
osascript -e 'tell application "TextEdit" to quit' >/dev/null 2>&1

# ---- network -------------------------------------------------------------
case_ net/direct "curl -sf http://127.0.0.1:$PORT2/ | grep -q qual-ok" "curl -sf --noproxy '*' http://127.0.0.1:$PORT2/; echo status=\$?" "! grep -q qual-ok '$F/out'"
case_ net/through-proxy "true" "curl -sf http://qual.test:$PORT/" "grep -q qual-ok '$F/out'"
case_ net/denied-host "true" "curl -s -o /dev/null -w '%{http_code}' http://other.test:$PORT/" "grep -q 403 '$F/out'"
case_ unix/socket "true" "/usr/bin/python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"/var/run/mDNSResponder\")'; echo status=\$?" "! grep -q status=0 '$F/out'"

# ---- reports, environment --------------------------------------------------
cage "cat '$H/.ssh/id_rsa'"
if started && grep -q "what the sandbox refused" "$F/err" && grep -q "read .*/home/\.ssh" "$F/err"; then
	pass report/summary
else
	fail report/summary "no tagged denial of the sentinel in the summary (log stream)"
fi
# Monitor mode: nothing refused, and the same read reported from the
# tagged (with report) rules' log lines as would-block.
MODE="--mode monitor"
cage "cat '$H/.ssh/id_rsa'"
MODE=
if started && grep -q SENTINEL "$F/out" && grep -q "would-block" "$F/err" &&
	grep -q "read .*/home/\.ssh" "$F/err"; then
	pass report/monitor
else
	fail report/monitor "monitor mode did not report the read of the sentinel (log stream): $(head -c 300 "$F/err")"
fi
cage 'echo TMPDIR=$TMPDIR; touch "$TMPDIR/x" && echo tmp-ok'
if started && grep -q "^TMPDIR=/private/var/\|^TMPDIR=/var/\|^TMPDIR=/private/tmp/" "$F/out" && grep -q tmp-ok "$F/out"; then
	pass env/private-tmp
else
	fail env/private-tmp "TMPDIR not a writable private directory: $(cat "$F/out")"
fi

# ---- fail closed ---------------------------------------------------------
ctl "sandbox-exec -p '(version 1)(allow default)' touch '$O/nest-control'" && rm -f "$O/nest-control"
(cd "$W" && sandbox-exec -p '(version 1)(allow default)' "$CAGERUN" -p "$POL" -D workspace="$W" -D home="$H" -D port="$PORT" -- touch "$O/nested") >/dev/null 2>"$F/err"
rc=$?
if [ $rc = 125 ] && [ ! -e "$O/nested" ] && grep -q "already running inside a Seatbelt sandbox" "$F/err"; then
	pass closed/nested
else
	fail closed/nested "status $rc"
fi
(cd "$W" && "$CAGERUN" -p "$POL" -D workspace="$O/missing" -D home="$H" -D port="$PORT" -- touch "$O/never") >/dev/null 2>"$F/err"
rc=$?
if [ $rc = 125 ] && [ ! -e "$O/never" ]; then pass closed/missing-param; else fail closed/missing-param "status $rc"; fi

echo "$SKIPPED skipped"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
