#!/bin/sh
# denials.sh - what a user sees when the proxy refuses a request, since
# curl hides a 403's body: one line on cagerun's standard error per denial
# (host, port, the deciding rule's file:line:col, or "no rule allows it"),
# none with --quiet; for a name that resolves to an internal address, the
# rule that would allow it, which is then added to the policy to show that
# it does; the note for a profile in mode enforce-fs, off or monitor given
# to --proxy-only. Both for `cagerun --proxy-only` and for the proxy cagerun
# runs for a sandboxed command. A name looked up for real (by the
# cage-lookup helper) and one that cannot be, the helper missing. Only
# local servers on 127.0.0.1.
set -u
cagerun=$1
tmp=$(mktemp -d)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0 passes=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { passes=$((passes + 1)); }

# A local HTTP server on a free port of 127.0.0.1 ("hello" for every GET).
python3 - "$tmp/port" <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "5"); self.end_headers()
        self.wfile.write(b"hello")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.timeout = 1
import time; end = time.time() + 120
while time.time() < end: s.handle_request()
PY
pids="$pids $!"
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$tmp/port") || { echo "FAIL: the local server did not start" >&2; exit 1; }

cat >"$tmp/p.cage" <<CAGE
cage 1
profile p {
    allow connect "api.test:$port"
    deny connect "blocked.test"
}
CAGE

# proxy NAME POLICY [ARGS...]: starts cagerun --proxy-only, waits for its
# URL; its stderr goes to $tmp/NAME.err. Sets $url and $ppid_.
proxy() {
	name=$1 pol=$2
	shift 2
	"$cagerun" --proxy-only -p "$pol" --resolve "api.test:$port:127.0.0.1" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err" &
	started "$name"
}
# started NAME: the proxy just started in the background; waits for its URL.
started() {
	ppid_=$!
	pids="$pids $ppid_"
	i=0
	while ! grep -q '^proxy http' "$tmp/$1.out" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	url=$(sed -n 's/^proxy //p' "$tmp/$1.out")
	[ -n "$url" ] || { cat "$tmp/$1.err" >&2; fail "$1: the proxy did not start"; }
}
stop() { kill "$ppid_" 2>/dev/null; wait "$ppid_" 2>/dev/null; }
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 -x "$url" "$1"; }

# expect_line FILE TEXT WHAT: FILE has a line containing TEXT (fixed string).
expect_line() {
	if grep -qF -- "$2" "$1"; then ok; else cat "$1" >&2; fail "$3: no line '$2'"; fi
}

# ---- --proxy-only ----
proxy po "$tmp/p.cage"
[ "$(code "http://api.test:$port/")" = 403 ] && ok || fail "api.test (loopback) was not refused"
[ "$(code http://blocked.test/)" = 403 ] && ok || fail "blocked.test was not refused"
[ "$(code http://other.test/)" = 403 ] && ok || fail "other.test was not refused"
stop
hint="allow connect \"127.0.0.1:$port\""
expect_line "$tmp/po.err" "cage proxy: connection to api.test:$port denied: api.test resolves to 127.0.0.1 (loopback), an internal address no rule allows; to allow it, add the rule: $hint" "proxy-only, internal address"
expect_line "$tmp/po.err" "cage proxy: connection to blocked.test:80 denied by the rule at $tmp/p.cage:4:18" "proxy-only, deny rule"
expect_line "$tmp/po.err" "cage proxy: connection to other.test:80 denied: no rule allows it (default deny)" "proxy-only, default deny"
grep -q 'note:' "$tmp/po.err" && fail "an enforce profile got a mode note" || ok
# and the summary when it stops
expect_line "$tmp/po.err" "cagerun: hosts the policy denied:" "proxy-only, summary"
expect_line "$tmp/po.err" "cagerun:   other.test:80  1 time  (no rule allows it)" "proxy-only, summary line"
expect_line "$tmp/po.err" "cagerun:   api.test:$port  1 time  (resolves only to internal addresses)" "proxy-only, summary of an internal address"

# The rule the message names does allow the request.
rule=$(sed -n 's/.*to allow it, add the rule: //p' "$tmp/po.err" | head -n 1)
sed "s|^}|    $rule\n}|" "$tmp/p.cage" >"$tmp/p2.cage"
proxy fixed "$tmp/p2.cage"
[ "$(code "http://api.test:$port/")" = 200 ] && ok ||
	fail "the rule the denial suggested ($rule) does not allow api.test"
stop
grep -q 'cage proxy:' "$tmp/fixed.err" && { cat "$tmp/fixed.err" >&2; fail "an allowed request printed a denial"; } || ok

# --quiet: refused all the same, nothing said
proxy quiet "$tmp/p.cage" --quiet
[ "$(code http://other.test/)" = 403 ] && ok || fail "--quiet: other.test was not refused"
stop
grep -q 'cage proxy:\|hosts the policy denied' "$tmp/quiet.err" && { cat "$tmp/quiet.err" >&2; fail "--quiet printed a denial"; } || ok

# Mode notes: enforce-fs, off and monitor are explained, located at the
# mode statement.
for mode in enforce-fs off monitor; do
	printf 'cage 1\nprofile p {\n    mode %s\n    allow connect "github.com:443"\n}\n' "$mode" >"$tmp/m.cage"
	proxy "mode-$mode" "$tmp/m.cage"
	stop
	expect_line "$tmp/mode-$mode.err" "$tmp/m.cage:3:10: note: profile 'p' is in mode $mode:" "mode $mode note"
done
grep -qF 'connect rules not enforced); here the proxy still enforces them' "$tmp/mode-enforce-fs.err" && ok ||
	fail "the enforce-fs note does not say what it means"

# ---- the proxy of a sandboxed command ----
run_curl='for u in "$@"; do curl -s -o /dev/null -w "%{http_code} " --max-time 10 "$u"; done'
cat >"$tmp/s.cage" <<CAGE
cage 1
import "std/base"
profile p {
    allow connect "api.test:$port"
    deny connect "blocked.test"
}
CAGE
"$cagerun" -p "$tmp/s.cage" --resolve "api.test:$port:127.0.0.1" -- sh -c "$run_curl" sh \
	"http://api.test:$port/" http://blocked.test/ http://other.test/ >"$tmp/sb.out" 2>"$tmp/sb.err"
[ "$(cat "$tmp/sb.out")" = "403 403 403 " ] && ok || { cat "$tmp/sb.err" >&2; fail "sandbox: codes $(cat "$tmp/sb.out")"; }
expect_line "$tmp/sb.err" "cage proxy: connection to api.test:$port denied: api.test resolves to 127.0.0.1 (loopback), an internal address no rule allows; to allow it, add the rule: $hint" "sandbox, internal address"
expect_line "$tmp/sb.err" "cage proxy: connection to blocked.test:80 denied by the rule at $tmp/s.cage:5:18" "sandbox, deny rule"
expect_line "$tmp/sb.err" "cage proxy: connection to other.test:80 denied: no rule allows it (default deny)" "sandbox, default deny"
# the live lines come before the summary at exit
first_live=$(grep -n 'cage proxy:' "$tmp/sb.err" | head -n 1 | cut -d: -f1)
summary=$(grep -n 'hosts the policy denied' "$tmp/sb.err" | cut -d: -f1)
[ -n "$first_live" ] && [ -n "$summary" ] && [ "$first_live" -lt "$summary" ] && ok ||
	{ cat "$tmp/sb.err" >&2; fail "sandbox: no live lines before the summary"; }
"$cagerun" -p "$tmp/s.cage" --quiet -- sh -c "$run_curl" sh http://other.test/ >"$tmp/sq.out" 2>"$tmp/sq.err"
[ "$(cat "$tmp/sq.out")" = "403 " ] && ok || fail "sandbox --quiet: code $(cat "$tmp/sq.out")"
grep -q 'cage proxy:\|hosts the policy denied' "$tmp/sq.err" && { cat "$tmp/sq.err" >&2; fail "sandbox --quiet printed denials"; } || ok

# ---- name lookups: the cage-lookup helper (runtime/lookup/lookup.h) ----
# A name with no --resolve goes to the helper, which asks the C library:
# lookup.test, which only this test's /etc/hosts knows (bind-mounted in a
# user and mount namespace of its own), is served; then the same request
# from a copy of cagerun with no helper beside it or at ../libexec/cage is
# refused with the reason, never resolved some other way.
cat >"$tmp/l.cage" <<CAGE
cage 1
profile p {
    allow connect "lookup.test:$port"
    allow connect "127.0.0.1:$port"
}
CAGE
printf '127.0.0.1 lookup.test\n' >"$tmp/hosts"
# with_hosts COMMAND...: execs COMMAND with $tmp/hosts as /etc/hosts; run
# it in a subshell. It execs (unshare, then the command) so that a
# background job started with it is the command itself: stop (and the
# cleanup at exit) then ends the proxy, not a subshell that leaves it
# running.
with_hosts() {
	exec unshare -rm sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$tmp/hosts" "$@"
}
lookup_proxy() { # lookup_proxy NAME CAGERUN
	(with_hosts "$2" --proxy-only -p "$tmp/l.cage") >"$tmp/$1.out" 2>"$tmp/$1.err" &
	started "$1"
}
if ! (with_hosts sh -c 'grep -q lookup.test /etc/hosts') 2>/dev/null; then
	echo "note: no user namespace with a mount of /etc/hosts here; name lookups not tested"
else
	lookup_proxy lk "$cagerun"
	[ "$(code "http://lookup.test:$port/")" = 200 ] && ok ||
		{ cat "$tmp/lk.err" >&2; fail "lookup.test through the helper was not served"; }
	stop
	mkdir "$tmp/alone"
	cp "$cagerun" "$tmp/alone/cagerun"
	"$tmp/alone/cagerun" --version | grep -q '^name lookups: unavailable: ' && ok ||
		fail "--version of a cagerun without its helper does not say so"
	# and an enforce launch says so before the command starts
	"$tmp/alone/cagerun" -p "$tmp/l.cage" -- /bin/true >/dev/null 2>"$tmp/lw.err"
	grep -q 'cagerun: warning: no name lookups: cage-lookup (' "$tmp/lw.err" && ok ||
		{ cat "$tmp/lw.err" >&2; fail "an enforce launch without the helper gave no warning"; }
	"$cagerun" -p "$tmp/l.cage" -- /bin/true >/dev/null 2>"$tmp/lw2.err"
	grep -q 'no name lookups' "$tmp/lw2.err" && fail "a launch with its helper warned" || ok
	lookup_proxy lk-missing "$tmp/alone/cagerun"
	body=$(curl -s --max-time 10 -x "$url" "http://lookup.test:$port/")
	got=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -x "$url" "http://lookup.test:$port/")
	stop
	[ "$got" = 502 ] && ok || fail "without the helper: code $got, not 502"
	case $body in
	*"cannot resolve lookup.test: cage-lookup ("*) ok ;;
	*) fail "without the helper: the answer does not name it: $body" ;;
	esac
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
