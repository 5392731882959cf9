#!/bin/sh
# terminal.sh CAGERUN SRCDIR - denials while a full-screen program owns
# the terminal (docs/cagerun.md, "Denials on a terminal"), under tmux:
#
#   control   standard error not a terminal: the proxy's denial line is
#             written there while the command runs;
#   screen    in a tmux pane, a program on the alternate screen makes a
#             request the policy denies: the pane shows the program's own
#             screen and none of cagerun's lines;
#   follow    `cagerun denials --follow`, started while the program runs,
#             prints the denial as it happens and ends with the session;
#   summary   after the program leaves the alternate screen and exits, the
#             pane shows cagerun's summary naming the denied host;
#   view      `cagerun denials` shows a log's control characters as '?'.
#
# Every wait is bounded (W tenths of a second).
set -u
cagerun=$1 src=$2
W=150
if ! command -v tmux >/dev/null 2>&1; then
	echo "FAIL: tmux is not installed (.ci/deps installs it)"
	exit 1
fi
tmp=$(mktemp -d) || exit 1
tmp=$(cd "$tmp" && pwd -P)
sock=$tmp/tmux.sock
fpid=
cleanup() {
	tmux -S "$sock" kill-server 2>/dev/null
	[ -n "$fpid" ] && kill "$fpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
passes=0 fails=0
ok() { passes=$((passes + 1)); echo "ok: $1"; }
bad() {
	echo "FAIL: $1"
	for f in "$@"; do [ -f "$f" ] && sed "s|^|  $(basename "$f"): |" "$f"; done
	fails=$((fails + 1))
}
# wait_for FILE-OR-COMMAND PATTERN: bounded poll until the output has it.
wait_grep() {
	i=0
	while [ $i -lt $W ]; do
		"$@" 2>/dev/null | grep -q -- "$pat" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
pane() { tmux -S "$sock" capture-pane -p -t cage; }

H=$tmp/home ws=$tmp/ws
mkdir -p "$H" "$ws" "$tmp/run" && chmod 700 "$tmp/run" || exit 1
git init -q "$ws" || exit 1
# The full-screen program: the alternate screen, a request the policy
# denies when told to, then back to the normal screen when told to.
cat >"$ws/app.sh" <<'APP'
#!/bin/sh
printf '\033[?1049h\033[2J\033[H'
echo "FULLSCREEN-APP running"
i=0; while [ ! -e "$1.connect" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
curl -sS -o /dev/null https://example.com >/dev/null 2>&1
echo "FULLSCREEN-APP asked"
i=0; while [ ! -e "$1.exit" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
printf '\033[?1049l'
echo "FULLSCREEN-APP done"
APP
ENVV="HOME=$H PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 XDG_RUNTIME_DIR=$tmp/run"
run_cage="$cagerun -p $src/examples/claude-code.cage -D workspace=$ws -- sh $ws/app.sh $ws/go"

# control: not a terminal
touch "$ws/go.connect" "$ws/go.exit"
(cd "$ws" && env -i $ENVV TERM=dumb timeout 60 $run_cage) >"$tmp/c.out" 2>"$tmp/c.err" </dev/null
if grep -q '^cage proxy: connection to example.com:443 denied' "$tmp/c.err"; then
	ok "control: without a terminal the denial is written to stderr as it happens"
else
	bad "control: no live denial line on stderr" "$tmp/c.err"
fi
rm -f "$ws/go.connect" "$ws/go.exit"

# screen
# (tmux runs the command with $SHELL, else the login shell: nologin for a
# system user)
SHELL=/bin/sh tmux -S "$sock" -f /dev/null new-session -d -s cage -x 100 -y 30 \
	"cd $ws && env -i $ENVV TERM=screen $run_cage" \; set-option -t cage remain-on-exit on || {
	echo "FAIL: tmux new-session"
	exit 1
}
pat="FULLSCREEN-APP running"
if ! wait_grep pane; then
	pane >"$tmp/pane"
	bad "screen: the program did not start" "$tmp/pane"
	exit 1
fi
# follow, started while the program runs and before the request
env -i $ENVV "$cagerun" denials --follow >"$tmp/follow" 2>&1 &
fpid=$!
pat="cagerun: session "
wait_grep cat "$tmp/follow" || bad "follow: no session header" "$tmp/follow"
touch "$ws/go.connect"
pat="FULLSCREEN-APP asked"
wait_grep pane || bad "screen: the program did not make its request"
pat="connection to example.com:443 denied"
if wait_grep cat "$tmp/follow"; then
	ok "follow: the denial shows live in another terminal"
else
	bad "follow: the denial did not show" "$tmp/follow"
fi
pane >"$tmp/pane"
if grep -q "FULLSCREEN-APP asked" "$tmp/pane" && ! grep -q 'cage proxy\|cagerun' "$tmp/pane"; then
	ok "screen: the program's screen shows none of cagerun's lines while it runs"
else
	bad "screen: cagerun wrote over the program's screen" "$tmp/pane"
fi
# summary
touch "$ws/go.exit"
i=0
while [ $i -lt $W ] && [ "$(tmux -S "$sock" display-message -p -t cage '#{pane_dead}')" != 1 ]; do
	sleep 0.1
	i=$((i + 1))
done
pane >"$tmp/pane"
if grep -q "FULLSCREEN-APP done" "$tmp/pane" && grep -q '^cagerun: hosts the policy denied:' "$tmp/pane" &&
	grep -q '^cagerun: *example.com:443 ' "$tmp/pane"; then
	ok "summary: after the program exits, the pane lists the denied host"
else
	bad "summary: no summary of the denial after the program exited" "$tmp/pane"
fi
pat="cagerun: session [0-9]* ended"
i=0
while [ $i -lt $W ] && kill -0 "$fpid" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
if ! kill -0 "$fpid" 2>/dev/null && grep -q "$pat" "$tmp/follow"; then
	ok "follow: it ends with the session"
else
	bad "follow: still running, or no end line, after the session ended" "$tmp/follow"
fi
fpid=
# a planted log cannot drive the terminal through the view
printf 'cagerun: session 1: x\n\033]0;owned\007 \033[2J\n' >"$tmp/run/cage/session-1.log"
env -i $ENVV "$cagerun" denials 1 >"$tmp/plant" 2>&1
if ! LC_ALL=C grep -q "$(printf '\033')" "$tmp/plant" && grep -q '^?\]0;owned? ?\[2J$' "$tmp/plant"; then
	ok "view: control characters in a session log are shown as ?"
else
	bad "view: control characters reached the output" "$tmp/plant"
fi
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
