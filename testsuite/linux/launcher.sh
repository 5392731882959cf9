#!/bin/sh
# launcher.sh CAGERUN CAGE_LAUNCH CONFINE CLIENT_PY - the per-user launcher
# (docs/launcher.md): `cagerun launcher` and its client cage-launch.
#   - a run through it is the run cagerun makes: the same working
#     directory, umask, limits, identity and environment (all but the
#     private TMPDIR's random name), the same statuses and output, the
#     key unreadable (and, the control, readable without cagerun);
#   - it starts nothing for a client that is confined otherwise: with
#     no_new_privs, a seccomp filter, another user namespace, or a
#     Landlock domain (a client that sends its own memfd as its proof,
#     which is all a process in a domain can send, against the control
#     that sends the launcher's and is accepted); and the client falls
#     back to cagerun, so the command is still sandboxed;
#   - no launcher, or a terminal on descriptors 0 to 2: cagerun runs it;
#   - SIGTERM to the client ends the command with 143; the client killed,
#     or the launcher stopped, ends the run, and nothing of it outlives;
#   - the socket's folder must be the user's alone, and one launcher
#     listens on it at a time; another user's client never reaches it.
# Every wait is bounded.
set -u
cagerun=$1
launch=$2
confine=$3
client_py=$4
tmp=$(mktemp -d)
lpid=
stop_launcher() {
	[ -n "$lpid" ] && kill "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
	lpid=
}
trap 'stop_launcher; pkill -f "sleep 3[0-9].$$" 2>/dev/null; rm -rf "$tmp"' EXIT
export PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8
unset CAGE_LAUNCHER_SOCKET XDG_CACHE_HOME 2>/dev/null
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/out" ] && tail -c 1500 "$tmp/out" >&2
	fails=$((fails + 1))
}
export HOME="$tmp/home" XDG_RUNTIME_DIR="$tmp/rt"
mkdir -p "$HOME/w" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
echo "key-$$" >"$HOME/key"
sock=$XDG_RUNTIME_DIR/cage/launcher.sock
cat >"$tmp/p.cage" <<'POL'
cage 1
profile t {
    mode enforce-fs
    allow read exec "/usr/**", "/bin/**", "/lib/**", "/lib64/**", "/etc/**", "/proc/**"
    allow read write "/dev/null"
    allow read write "~/**"
    allow read exec "~/bin/**"
    deny read write "~/key"
}
POL
cd "$HOME/w" || exit 1
log=$tmp/launcher.log
: >"$log"

start_launcher() { # [--socket PATH]: then $sock must be PATH
	"$cagerun" launcher -v "$@" >>"$log" 2>&1 </dev/null &
	lpid=$!
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	[ -S "$sock" ]
}
started() { grep -c ': started cagerun' "$log"; }
# run CLIENT MODE CMD...: the command under CLIENT (cagerun or cage-launch).
run() {
	c=$1 m=$2
	shift 2
	timeout -s KILL 60 "$c" -q -p "$tmp/p.cage" --mode "$m" -- "$@" </dev/null
}
alive() { pgrep -f "$1" >/dev/null; }

if ! start_launcher; then
	echo "FAIL: the launcher did not start: $(cat "$log")" >&2
	exit 1
fi

# ---- the same run as cagerun's ------------------------------------------
if cat "$HOME/key" 2>/dev/null | grep -q "key-$$"; then ok; else bad "control: the key is not readable"; fi
obs='pwd; umask; ulimit -Sn; ulimit -Hn; id; env | grep -v "^TMPDIR=" | sort; cat ~/key 2>&1 | sed "s/: .*/: denied/"'
for m in enforce-fs enforce; do
	n0=$(started)
	(umask 027; ulimit -Sn 700; run "$cagerun" $m sh -c "$obs" >"$tmp/direct" 2>&1)
	(umask 027; ulimit -Sn 700; run "$launch" $m sh -c "$obs" >"$tmp/out" 2>&1)
	if [ "$(started)" -ne $((n0 + 1)) ]; then
		bad "$m: the launcher did not run it"
	elif ! cmp -s "$tmp/direct" "$tmp/out"; then
		bad "$m: not what cagerun gives: $(diff "$tmp/direct" "$tmp/out" | head -n 8)"
	elif grep -q "key-$$" "$tmp/out" || ! grep -q "0027" "$tmp/out" || ! grep -qx 700 "$tmp/out"; then
		bad "$m: key read, or umask or limit not carried over"
	else
		ok
	fi
	run "$launch" $m sh -c 'exit 7' >"$tmp/out1" 2>&1
	s1=$?
	run "$launch" $m sh -c 'kill -TERM $$' >"$tmp/out2" 2>&1
	s2=$?
	run "$launch" $m sh -c 'i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i + 1)); done' \
		>"$tmp/out" 2>&1
	s3=$?
	n=$(grep -c '^line ' "$tmp/out")
	if [ $s1 -eq 7 ] && [ $s2 -eq 143 ] && [ $s3 -eq 0 ] && [ "$n" -eq 2000 ]; then ok; else
		bad "$m: statuses $s1 $s2 $s3 and $n lines, expected 7 143 0 and 2000;" \
			"the first two said [$(cat "$tmp/out1")] [$(cat "$tmp/out2")];" \
			"the launcher: $(tail -n 6 "$log")"
	fi
done

# The run answers its client before it cleans up (run.h, status_hook);
# the client's leaving then must not stop that clean-up: no run's TMPDIR
# is left behind (cagerun makes them in its TMPDIR, as cage-tmp.*: here a
# folder of this test's, which other tests' runs do not use).
mkdir -p "$tmp/leases"
leases() { ls -d "$tmp/leases"/cage-tmp.* 2>/dev/null | wc -l; }
l0=$(leases)
n0=$(grep -c '(sent by the run)' "$log")
i=0
while [ $i -lt 20 ]; do
	TMPDIR=$tmp/leases run "$launch" enforce-fs sh -c 'echo x >"$TMPDIR/f" && echo "$TMPDIR"' \
		>"$tmp/out" 2>&1
	i=$((i + 1))
done
sleep 0.5
# (-ge: the launcher logs a status when it reaps the run, which can be
# after the client of the run before has returned.)
if [ "$(leases)" -eq "$l0" ] && [ "$(grep -c '(sent by the run)' "$log")" -ge $((n0 + 20)) ] &&
	grep -q "^$tmp/leases/cage-tmp\." "$tmp/out"; then ok; else
	bad "20 runs: $(($(leases) - l0)) TMPDIRs left, $(($(grep -c '(sent by the run)' "$log") - n0)) statuses sent by the run"
fi

# Not quiet, cagerun has its last words after the command, and answers
# the client itself after them (with -q, as above, init answers as soon
# as the sandbox is empty): the status is the run's, and it came from
# the run, not from the launcher reaping it.
n0=$(grep -c '(sent by the run)' "$log")
i=0 good=0
while [ $i -lt 5 ]; do
	TMPDIR=$tmp/leases timeout -s KILL 60 "$launch" -p "$tmp/p.cage" --mode enforce-fs -- \
		sh -c 'exit 6' </dev/null >"$tmp/out" 2>&1
	[ $? -eq 6 ] && good=$((good + 1))
	i=$((i + 1))
done
sleep 0.3
if [ $good -eq 5 ] && [ "$(grep -c '(sent by the run)' "$log")" -ge $((n0 + 5)) ] &&
	[ "$(leases)" -eq "$l0" ]; then ok; else
	bad "5 runs not quiet: $good with status 6, $(($(grep -c '(sent by the run)' "$log") - n0)) statuses from the run, $(($(leases) - l0)) TMPDIRs left"
fi
# Nothing of the run is left running when its status arrives: a
# background loop that the command leaves behind appends to a file; it
# grows after the status only if it survived (the control, without
# cagerun, shows that it would).
ticks=$HOME/ticks
ticker="(while :; do echo t >>'$ticks'; sleep 0.01; done) & echo \$! >'$ticks.pid'; sleep 0.1; exit 4"
grows() { # grows: whether $ticks grew in 0.3 s since now
	a=$(wc -l <"$ticks" 2>/dev/null || echo 0)
	sleep 0.3
	[ "$(wc -l <"$ticks" 2>/dev/null || echo 0)" -gt "$a" ]
}
rm -f "$ticks"
sh -c "$ticker"
if grows; then ok; else bad "control: the left-behind loop did not run on"; fi
kill "$(cat "$ticks.pid")"
sleep 0.1
for m in enforce-fs enforce; do
	rm -f "$ticks"
	run "$launch" $m sh -c "$ticker" >"$tmp/out" 2>&1
	s=$?
	if [ $s -eq 4 ] && [ -s "$ticks" ] && ! grows; then ok; else
		bad "$m: status $s, or the loop ran on after the status"
	fi
done

# A run that ends at once (`--mode off` runs the command in cagerun's
# place, so the launcher hears of its start and its end together) still
# gets its status, 30 times in a row.
i=0 bad_runs=0
while [ $i -lt 30 ]; do
	run "$launch" off sh -c 'exit 3' >"$tmp/out" 2>&1
	[ $? -eq 3 ] || bad_runs=$((bad_runs + 1))
	i=$((i + 1))
done
if [ $bad_runs -eq 0 ]; then ok; else bad "$bad_runs of 30 runs that ended at once lost their status"; fi

# ---- where it is not used, cagerun runs it ------------------------------
n0=$(started)
CAGE_LAUNCHER_SOCKET=$tmp/nowhere.sock run "$launch" enforce-fs sh -c 'cat ~/key; exit 6' >"$tmp/out" 2>&1
s=$?
if [ $s -ne 6 ] || grep -q "key-$$" "$tmp/out" || [ "$(started)" -ne "$n0" ]; then
	bad "no launcher: status $s (expected 6 from cagerun itself, the key denied)"
else
	ok
fi
if command -v script >/dev/null; then
	n0=$(started)
	timeout -s KILL 60 script -qec "'$launch' -q -p '$tmp/p.cage' -- sh -c 'echo on-a-tty; cat ~/key'" \
		/dev/null >"$tmp/out" 2>&1 </dev/null
	if ! grep -q on-a-tty "$tmp/out" || grep -q "key-$$" "$tmp/out" || [ "$(started)" -ne "$n0" ]; then
		bad "a terminal: not run by cagerun itself, or the key read"
	else
		ok
	fi
fi

# ---- a caged command cannot ask for a wider run -------------------------
# The launcher would start `--mode off` for an unconfined caller (the
# control reads the key that way). A command inside a cage, run through
# the launcher, with the socket's path readable to it, gets nowhere: the
# cage refuses unix sockets, and its fallback cagerun cannot build a
# sandbox inside one.
inner_sock=$HOME/rt/launcher.sock
mkdir -p "$HOME/rt" "$HOME/bin"
chmod 700 "$HOME/rt"
# The clients where the cage lets the command run them (the build and
# source trees are not in the test's policy).
cp "$cagerun" "$launch" "$client_py" "$tmp/p.cage" "$HOME/bin/"
in_launch=$HOME/bin/$(basename "$launch")
in_py=$HOME/bin/$(basename "$client_py")
stop_launcher
sock=$inner_sock
start_launcher --socket "$inner_sock"
ask_off="python3 '$client_py' '$inner_sock' fair -- -q -p '$tmp/p.cage' --mode off -- cat '$HOME/key'"
sh -c "$ask_off" >"$tmp/out" 2>&1 </dev/null
if ! grep -q "key-$$" "$tmp/out"; then
	bad "control: --mode off through the launcher did not read the key: $(cat "$tmp/out")"
else
	for m in enforce-fs enforce; do
		n0=$(started)
		inner="export HOME='$HOME'; python3 '$in_py' '$inner_sock' fair -- -q -p '$HOME/bin/p.cage' --mode off -- cat '$HOME/key'"
		inner="$inner; CAGE_LAUNCHER_SOCKET='$inner_sock' '$in_launch' -q -p '$HOME/bin/p.cage' --mode off -- cat '$HOME/key'"
		CAGE_LAUNCHER_SOCKET=$inner_sock run "$launch" $m sh -c "$inner; echo inner-done" \
			>"$tmp/out" 2>&1
		# Both got as far as the socket: the cage refused the Python
		# client's (EAFNOSUPPORT), and cage-launch ran cagerun, whose
		# --mode off runs cat inside the outer cage.
		if [ "$(started)" -ne $((n0 + 1)) ] || ! grep -q inner-done "$tmp/out" ||
			! grep -q 'Address family not supported' "$tmp/out" ||
			[ "$(grep -c 'WITHOUT any sandbox' "$tmp/out")" -ne 1 ]; then
			bad "$m: the caged attempt did not run as expected: $(tail -n 5 "$tmp/out")"
		elif grep -q "key-$$" "$tmp/out"; then
			bad "$m: a caged command got a run without its cage through the launcher"
		else
			ok
		fi
	done
fi
stop_launcher
sock=$XDG_RUNTIME_DIR/cage/launcher.sock
start_launcher

# ---- clients confined otherwise: refused, and sandboxed anyway ----------
for how in nnp seccomp; do
	n0=$(started) r0=$(grep -c refused "$log")
	"$confine" $how -- "$launch" -q -p "$tmp/p.cage" -- sh -c 'echo ran; cat ~/key' \
		>"$tmp/out" 2>&1 </dev/null
	if [ "$(started)" -ne "$n0" ] || [ "$(grep -c refused "$log")" -ne $((r0 + 1)) ]; then
		bad "$how: the launcher did not refuse it"
	elif ! grep -q '^ran$' "$tmp/out" || grep -q "key-$$" "$tmp/out"; then
		bad "$how: the fallback did not run it in the cage"
	else
		ok
	fi
done
if unshare -U true 2>/dev/null; then
	r0=$(grep -c refused "$log")
	unshare -U "$launch" -q -p "$tmp/p.cage" -- true >"$tmp/out" 2>&1 </dev/null
	if [ "$(grep -c refused "$log")" -eq $((r0 + 1)) ]; then ok; else bad "another user namespace: not refused"; fi
fi
# A Landlock domain hides nothing /proc shows: only the proof tells.
py() { timeout -s KILL 60 python3 "$client_py" "$sock" "$@" -- -q -p "$tmp/p.cage" -- sh -c 'exit 5' </dev/null; }
py fair >"$tmp/out" 2>&1
if ! grep -q '^status 5$' "$tmp/out"; then
	bad "control: a client sending the launcher's memfd is not accepted: $(cat "$tmp/out")"
else
	py own >"$tmp/out" 2>&1
	if ! grep -q '^refused: it could not look at the launcher' "$tmp/out"; then bad "its own memfd as proof: not refused"; else ok; fi
	# As root the domain comes without no_new_privs, so the proof alone
	# can tell; an ordinary user's domain needs no_new_privs, seen first.
	want='^refused: '
	[ "$(id -u)" = 0 ] && want='^refused: it could not look at the launcher'
	"$confine" landlock -- python3 "$client_py" "$sock" own -- -q -p "$tmp/p.cage" -- true \
		>"$tmp/out" 2>&1 </dev/null
	if grep -q "$want" "$tmp/out"; then ok; else
		bad "a client in a Landlock domain: not refused: $(cat "$tmp/out")"
	fi
	# Malformed requests are refused whole, and the launcher serves on.
	for how in bad-magic short fewfds badcount unended; do
		py $how >"$tmp/out" 2>&1
		if grep -q '^refused: a malformed request' "$tmp/out"; then ok; else
			bad "a request with $how: not refused as malformed: $(cat "$tmp/out")"
		fi
	done
	py fair >"$tmp/out" 2>&1
	if grep -q '^status 5$' "$tmp/out"; then ok; else bad "the launcher did not serve on after malformed requests"; fi
	n0=$(started)
	"$confine" landlock -- "$launch" -q -p "$tmp/p.cage" -- true >"$tmp/out" 2>&1 </dev/null
	if [ "$(started)" -eq "$n0" ]; then ok; else bad "cage-launch in a Landlock domain was run by the launcher"; fi
fi

# ---- signals and ends ----------------------------------------------------
# bg TAG: cage-launch running a shell that starts `sleep TAG` and waits.
bg() {
	rm -f "$HOME/w/ready"
	"$launch" -q -p "$tmp/p.cage" -- sh -c "sleep $1 & echo ready > ready; wait" \
		>"$tmp/out" 2>&1 </dev/null &
	job=$!
	i=0
	while [ ! -e "$HOME/w/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	[ -e "$HOME/w/ready" ]
}
gone() { # gone TAG: bounded wait until nothing of the run is left
	i=0
	while alive "sleep $1" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	! alive "sleep $1"
}
tag=31.$$
if ! bg $tag; then bad "the command did not start"; kill "$job"; else
	kill -TERM "$job"
	wait "$job"
	s=$?
	if [ $s -ne 143 ] || ! gone $tag; then bad "SIGTERM to the client: status $s, or the run lived on"; else ok; fi
fi
# The client killed, or the launcher stopped: the run stops its sandbox
# at once and then cleans up as after any run (LCH_ABORT_SIG): its
# TMPDIR goes and, where the policy's process limit made one (root), its
# cgroup. Both are seen there while the command runs (the control), and
# gone after, within a bounded wait. The runs use a TMPDIR of their own.
sed 's/^profile t {$/profile t {\n    limit processes 64/' "$tmp/p.cage" >"$tmp/pl.cage"
mkdir -p "$tmp/kl"
# bgl TAG: bg, with that policy and TMPDIR; sets run_cg to the run's
# cgroup (the run is init's parent, init the shell's, the shell sleep's),
# or "".
bgl() {
	rm -f "$HOME/w/ready"
	TMPDIR=$tmp/kl "$launch" -q -p "$tmp/pl.cage" -- sh -c "sleep $1 & echo ready > ready; wait" \
		>"$tmp/out" 2>&1 </dev/null &
	job=$!
	i=0
	while [ ! -e "$HOME/w/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	sp=$(pgrep -f "^sleep $1" | head -n 1)
	shp=$(ps -o ppid= -p "${sp:-0}" | tr -d ' ')
	ip=$(ps -o ppid= -p "${shp:-0}" | tr -d ' ')
	rp=$(ps -o ppid= -p "${ip:-0}" | tr -d ' ')
	run_cg=$(find /sys/fs/cgroup -maxdepth 4 -type d -name "cage-run.${rp:-none}" 2>/dev/null | head -n 1)
	[ -e "$HOME/w/ready" ]
}
klease() { ls -d "$tmp/kl"/cage-tmp.* 2>/dev/null | wc -l; }
cleaned() { # cleaned: bounded wait until the run's TMPDIR and cgroup are gone
	i=0
	while { [ "$(klease)" -ne 0 ] || { [ -n "$run_cg" ] && [ -d "$run_cg" ]; }; } && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ "$(klease)" -eq 0 ] && { [ -z "$run_cg" ] || [ ! -d "$run_cg" ]; }
}
want_cg=no
[ "$(id -u)" = 0 ] && [ -d /sys/fs/cgroup/pids ] && want_cg=yes
tag=32.$$
if ! bgl $tag; then bad "the command did not start"; kill "$job"; else
	had=$(klease)
	kill -KILL "$job"
	wait "$job" 2>/dev/null
	if ! gone $tag; then
		bad "the client killed: the run lived on"
	elif [ "$had" -ne 1 ] || { [ $want_cg = yes ] && [ -z "$run_cg" ]; }; then
		bad "the client killed: the run's TMPDIR ($had) or cgroup (${run_cg:-none}) not seen while it ran"
	elif ! cleaned; then
		bad "the client killed: $(klease) TMPDIRs left, cgroup ${run_cg:-none} left: $(ls -d "$run_cg" 2>/dev/null)"
	else
		ok
	fi
fi
tag=33.$$
if ! bgl $tag; then bad "the command did not start"; kill "$job"; else
	had=$(klease)
	stop_launcher
	wait "$job"
	s=$?
	if [ $s -ne 125 ] || ! grep -Eq 'launcher went away|stopped by the launcher' "$tmp/out" ||
		! gone $tag; then
		bad "the launcher stopped: status $s, or the run lived on"
	elif [ "$had" -ne 1 ] || { [ $want_cg = yes ] && [ -z "$run_cg" ]; }; then
		bad "the launcher stopped: the run's TMPDIR ($had) or cgroup (${run_cg:-none}) not seen while it ran"
	elif ! cleaned; then
		bad "the launcher stopped: $(klease) TMPDIRs left, cgroup ${run_cg:-none} left"
	else
		ok
	fi
fi

# ---- an upgrade: the launcher's program replaced ------------------------
# Its children would run the old program, which looks for its standard
# library beside itself; so it refuses, and the client runs the new one.
mkdir -p "$tmp/bin"
cp "$cagerun" "$launch" "$tmp/bin/"
cagerun_was=$cagerun
cagerun=$tmp/bin/$(basename "$cagerun_was")
start_launcher
rm "$cagerun"
cp "$cagerun_was" "$cagerun"
r0=$(grep -c 'program was replaced' "$log")
"$tmp/bin/$(basename "$launch")" -q -p "$tmp/p.cage" -- sh -c 'exit 9' \
	>"$tmp/out" 2>&1 </dev/null
s=$?
if [ "$(grep -c 'program was replaced' "$log")" -ne $((r0 + 1)) ] || [ $s -ne 9 ]; then
	bad "the launcher's program replaced: not refused, or the fallback failed (status $s)"
else
	ok
fi
stop_launcher
cagerun=$cagerun_was

# ---- spares: forked ahead, holding nothing ------------------------------
# spares: the launcher's children that run nothing yet (all of them, when
# no run is going on), once there are $1 of them; bounded.
spares() {
	i=0
	while [ $i -lt 100 ]; do
		set -- "$1" $(pgrep -P "$lpid")
		[ $(($# - 1)) -ge "$1" ] && break
		sleep 0.05
		i=$((i + 1))
	done
	shift
	echo "$@"
}
fds() { ls "/proc/$1/fd" 2>/dev/null | sort -n | tr '\n' ' '; }
# A spare's own: 0 to 2, its socket pair (3), the listening socket (4),
# which must be the launcher's; from 5 on, the namespaces made ahead
# (docs/launcher.md): a user and a network namespace, neither the host's,
# the proxy's listener (as root: seen listening on 127.0.0.1:3128 inside
# that network namespace), the helper's eventfd and pidfd, and then the
# spare's epoll set. The helper is the spare's one child, in that user
# namespace.
listening() { awk -v p="$sock" '$NF == p { print "socket:[" $7 "]" }' /proc/net/unix; }
host_user=$(readlink /proc/self/ns/user) host_net=$(readlink /proc/self/ns/net)
spare_ok() {
	[ "$(fds "$1" | cut -d' ' -f1-5)" = "0 1 2 3 4" ] &&
		[ "$(readlink "/proc/$1/fd/4")" = "$(listening)" ] || return 1
	kinds= u= n= nfd=
	for f in $(fds "$1"); do
		[ "$f" -ge 5 ] || continue
		l=$(readlink "/proc/$1/fd/$f")
		case $l in
		user:*) u=$l k=user ;;
		net:*) n=$l nfd=$f k=net ;;
		socket:*) k=socket ;;
		"anon_inode:[eventfd]") k=eventfd ;;
		"anon_inode:[pidfd]") k=pidfd ;;
		"anon_inode:[eventpoll]") k=epoll ;;
		*) return 1 ;;
		esac
		kinds="$kinds$k "
	done
	[ "$(printf '%s\n' $kinds | sort | tr '\n' ' ')" = "epoll eventfd net pidfd socket user " ] &&
		[ "$u" != "$host_user" ] && [ "$n" != "$host_net" ] || return 1
	h=$(pgrep -P "$1")
	[ -n "$h" ] && [ "$(readlink "/proc/$h/ns/user")" = "$u" ] || return 1
	[ "$(id -u)" != 0 ] || nsenter --net="/proc/$1/fd/$nfd" cat /proc/net/tcp |
		awk '$2 == "0100007F:0C38" && $4 == "0A" { f = 1 } END { exit !f }'
}
start_launcher
sp=$(spares 2)
set -- $sp
if [ $# -eq 2 ] && spare_ok "$1" && spare_ok "$2" && [ -n "$(listening)" ] &&
	[ "$(ps -o sid= -p "$1" | tr -d ' ')" = "$1" ] && [ "$(ls "/proc/$lpid/fd" | wc -l)" -ge 6 ]; then
	ok
else
	bad "idle spares: [$sp], descriptors [$(fds "${1:-0}")], launcher's [$(fds "$lpid")]"
fi
# A spare forked while clients are connected holds nothing of theirs:
# two runs take both spares, and the launcher forks the next at once.
n0=$(started)
run "$launch" enforce-fs sh -c 'sleep 2' >"$tmp/out2" 2>&1 &
bg2=$!
run "$launch" enforce-fs sh -c 'sleep 2' >"$tmp/out" 2>&1 &
bg=$!
i=0
new=
while [ -z "$new" ] && [ $i -lt 100 ]; do
	for p in $(pgrep -P "$lpid"); do
		case " $sp " in *" $p "*) ;; *) spare_ok "$p" && new=$p ;; esac
	done
	sleep 0.05
	i=$((i + 1))
done
lfds=$(ls "/proc/$lpid/fd" | wc -l)
wait $bg
s=$?
wait $bg2
s2=$?
if [ -n "$new" ] && [ $s -eq 0 ] && [ $s2 -eq 0 ] && [ "$(started)" -eq $((n0 + 2)) ] &&
	[ "$lfds" -ge 10 ]; then
	ok
else
	bad "a spare beside two runs: new spare [$new] with [$(fds "${new:-0}")], launcher's $lfds descriptors, statuses $s $s2"
fi
# Sixteen clients at once: each is run, and the spares' lines in the
# launcher's log stay whole (no line holds two, none is empty). That a
# line is one write, which keeps it whole, is checked under strace below.
n0=$(started)
pids=
k=0
while [ $k -lt 16 ]; do
	run "$launch" enforce-fs true >/dev/null 2>&1 &
	pids="$pids $!"
	k=$((k + 1))
done
fails6=0
for p in $pids; do wait "$p" || fails6=$((fails6 + 1)); done
if [ $fails6 -eq 0 ] && [ "$(started)" -ge $((n0 + 16)) ] &&
	! grep -q 'cagerun launcher:.*cagerun launcher:' "$log" && ! grep -q '^$' "$log"; then
	ok
else
	bad "sixteen at once: $fails6 failed, $(($(started) - n0)) started; log: $(tail -n 8 "$log")"
fi
# A signal to an idle spare acts now: it does not wait, blocked, for the
# run the spare takes later (which it would end with 143).
sp=$(spares 2)
kill -TERM $sp 2>/dev/null
i=0
while [ $i -lt 100 ] && ps -o stat= -p $sp 2>/dev/null | grep -qv Z; do sleep 0.05; i=$((i + 1)); done
n0=$(started)
run "$launch" enforce-fs sh -c 'echo after' >"$tmp/out" 2>&1
s=$?
if [ $s -eq 0 ] && grep -qx after "$tmp/out" && [ "$(started)" -eq $((n0 + 1)) ]; then ok; else
	bad "a run after SIGTERM to the spares [$sp]: status $s"
fi
# The launcher moved to another cgroup: a spare forked before stays
# behind, and refuses a client from the new one (its check reads its own
# cgroup), so every run goes where the client is: the fallback's cagerun
# at first, then spares forked in the new cgroup.
cgdir=
if [ "$(id -u)" = 0 ]; then
	if [ -w /sys/fs/cgroup/freezer/cgroup.procs ]; then
		cgdir=/sys/fs/cgroup/freezer/cage-launcher-$$ cgkey=freezer
	elif [ -w /sys/fs/cgroup/cgroup.procs ] && [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		cgdir=/sys/fs/cgroup/cage-launcher-$$ cgkey=0
	fi
fi
if [ -n "$cgdir" ] && mkdir "$cgdir"; then
	spares 2 >/dev/null
	n0=$(started)
	r0=$(grep -c 'refused a client: its cgroup differs' "$log")
	echo "$lpid" >"$cgdir/cgroup.procs"
	cgrun() {
		sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cgdir" \
			timeout -s KILL 60 "$launch" -q -p "$tmp/p.cage" --mode off -- cat /proc/self/cgroup \
			</dev/null >"$tmp/out" 2>&1
	}
	good=0 k=0
	while [ $k -lt 4 ]; do
		cgrun && [ "$(grep "^[0-9]*:$cgkey:" "$tmp/out" | sed 's/.*://')" = "/cage-launcher-$$" ] &&
			good=$((good + 1))
		spares 2 >/dev/null
		k=$((k + 1))
	done
	n1=$(started)
	r1=$(grep -c 'refused a client: its cgroup differs' "$log")
	if [ $good -eq 4 ] && [ $((r1 - r0)) -ge 1 ] && [ $((n1 - n0)) -ge 1 ]; then
		ok
	else
		bad "a moved launcher: $good of 4 runs in its new cgroup, $((r1 - r0)) refused by old spares, $((n1 - n0)) run by it"
	fi
	stop_launcher
	i=0
	while ! rmdir "$cgdir" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
else
	echo "launcher.sh: not root or no cgroup to move to: the moved launcher's check is skipped"
fi
stop_launcher

# ---- namespaces made ahead -----------------------------------------------
# In enforce a run through the launcher is cloned into the user and network
# namespaces its spare made before the request (docs/launcher.md,
# "Namespaces made ahead"): neither the host's, a pair of its own (two
# runs at once have two), with the proxy's listener on 127.0.0.1:3128 the
# only one listening there; the helper that held them is gone once the
# command runs; a run that did not use its pair (enforce-fs) gives it back
# for a later one; and with --mode off, whose run execs the command, no
# helper lives on beside it.
start_launcher
nsrun() { # nsrun OUT SECONDS: an enforce run printing its namespaces and listeners
	timeout -s KILL 60 "$launch" -v -p "$tmp/p.cage" --mode enforce -- sh -c '
		readlink /proc/self/ns/user /proc/self/ns/net
		awk "\$4 == \"0A\" { print \"listen \" \$2 }" /proc/net/tcp /proc/net/tcp6
		echo ready; sleep '"$2" >"$1" 2>&1 </dev/null
}
nsrun "$tmp/ns1" 3 &
bg=$!
nsrun "$tmp/ns2" 3 &
bg2=$!
i=0
while [ $i -lt 100 ] && ! { grep -q ready "$tmp/ns1" && grep -q ready "$tmp/ns2"; } 2>/dev/null; do
	sleep 0.05
	i=$((i + 1))
done
u1=$(grep '^user:' "$tmp/ns1") n1=$(grep '^net:' "$tmp/ns1")
u2=$(grep '^user:' "$tmp/ns2") n2=$(grep '^net:' "$tmp/ns2")
# The processes in run 1's user namespace whose parent is not: init alone
# (the run's child); the helper, left, would be a second.
roots=0
for d in /proc/[0-9]*; do
	[ "$(readlink "$d/ns/user" 2>/dev/null)" = "$u1" ] || continue
	pp=$(awk '/^PPid:/ { print $2 }' "$d/status" 2>/dev/null)
	[ -n "$pp" ] && [ "$(readlink "/proc/$pp/ns/user" 2>/dev/null)" != "$u1" ] && roots=$((roots + 1))
done
wait $bg
s=$?
wait $bg2
s2=$?
if [ $s -eq 0 ] && [ $s2 -eq 0 ] && [ -n "$u1" ] && [ -n "$n1" ] && [ -n "$u2" ] && [ -n "$n2" ] &&
	grep -q 'namespaces the launcher made ahead' "$tmp/ns1" &&
	grep -q 'namespaces the launcher made ahead' "$tmp/ns2" &&
	[ "$u1" != "$host_user" ] && [ "$n1" != "$host_net" ] && [ "$u1" != "$u2" ] && [ "$n1" != "$n2" ] &&
	[ "$(grep '^listen' "$tmp/ns1")" = "listen 0100007F:0C38" ] && [ "$roots" -eq 1 ]; then
	ok
else
	bad "enforce runs in namespaces made ahead: statuses $s $s2, $roots processes of run 1 with a parent outside, run 1: $(tr '\n' ' ' <"$tmp/ns1"), run 2: $(tr '\n' ' ' <"$tmp/ns2")"
fi
# Given back: an enforce-fs run keeps its pair for a later spare, and the
# next enforce runs are still cloned into a pair made ahead.
k0=$(grep -c 'kept the namespaces' "$log")
run "$launch" enforce-fs true >"$tmp/out" 2>&1
s=$?
i=0
while [ $i -lt 100 ] && [ "$(grep -c 'kept the namespaces' "$log")" -eq "$k0" ]; do sleep 0.05; i=$((i + 1)); done
k1=$(grep -c 'kept the namespaces' "$log")
aheads=0
for k in 1 2 3; do
	nsrun "$tmp/ns3" 0
	grep -q 'namespaces the launcher made ahead' "$tmp/ns3" && aheads=$((aheads + 1))
done
if [ $s -eq 0 ] && [ "$k1" -eq $((k0 + 1)) ] && [ $aheads -eq 3 ]; then ok; else
	bad "a pair given back: status $s, kept $((k1 - k0)), $aheads of 3 enforce runs in a pair made ahead"
fi
# --mode off: the run execs the command; none of its children is in a
# user namespace of the launcher's making.
timeout -s KILL 60 "$launch" -q -p "$tmp/p.cage" --mode off -- sh -c 'sleep 2' </dev/null &
bg=$!
rp= i=0
while [ -z "$rp" ] && [ $i -lt 100 ]; do
	for c in $(pgrep -P "$lpid"); do
		[ "$(cat "/proc/$c/comm" 2>/dev/null)" = sh ] && [ -n "$(pgrep -P "$c")" ] && rp=$c
	done
	sleep 0.05
	i=$((i + 1))
done
left=0
for c in $(pgrep -P "${rp:-0}"); do
	[ "$(readlink "/proc/$c/ns/user")" = "$host_user" ] || left=$((left + 1))
done
wait $bg
s=$?
if [ -n "$rp" ] && [ $s -eq 0 ] && [ $left -eq 0 ]; then ok; else
	bad "--mode off through the launcher: run [$rp], status $s, $left children in another user namespace"
fi
stop_launcher

# ---- a compile kept ahead -------------------------------------------------
# The launcher compiles the -p request it ran last, every spare forked
# after inherits that compile, and a run of the same request uses it while
# nothing it read has changed (docs/launcher.md, "A compile kept ahead").
# Shown used (and its policy in force), made once for runs that used it,
# then refused, with the new policy in force, after each kind of change
# between two runs: an imported file edited, a file appearing earlier on
# the search path, the policy's symlink pointed elsewhere (and made again
# by the launcher); and not used for another environment or working
# directory. --mode is not part of it: the mode asked for is the one in
# force. ~/o1 is readable through ./extra, ~/o2 through the module "mod".
hd=$tmp/held
mkdir -p "$hd/i1" "$hd/i2" "$hd/other"
echo "o1-$$" >"$HOME/o1"
echo "o2-$$" >"$HOME/o2"
cat >"$hd/p.cage" <<'POL'
cage 1
import "./extra"
import "mod"
profile t {
    mode enforce-fs
    allow read exec "/usr/**", "/bin/**", "/lib/**", "/lib64/**", "/etc/**", "/proc/**"
    allow read write "/dev/null"
    allow read write "~/w/**"
}
POL
grep -v '^import "./extra"' "$hd/p.cage" >"$hd/p2.cage"
printf 'cage 1\nallow read "~/o1"\n' >"$hd/extra.cage"
printf 'cage 1\nallow read "~/o2"\n' >"$hd/i2/mod.cage"
ln -s p.cage "$hd/link.cage"
start_launcher
# hrun OUT [MODE [DIR]]: the request, reading ~/o1 and ~/o2 (a pause
# first: the launcher compiles once the run before has ended)
hrun() {
	sleep 0.3
	timeout -s KILL 60 env -C "${3:-.}" "$launch" -v -p "$hd/link.cage" -I "$hd/i1" -I "$hd/i2" \
		--mode "${2:-enforce-fs}" \
		-- sh -c "cat '$HOME/o1' '$HOME/o2'; readlink /proc/self/ns/net" >"$1" 2>&1 </dev/null
}
warm() { for k in 1 2 3; do hrun "$tmp/hw"; done; }
kept() { grep -q 'compile: the one the launcher kept' "$1"; }
reads() { grep -qx "o1-$$" "$1" && grep -qx "o2-$$" "$1"; }
made() { grep -c 'made the compile of the last request' "$log"; }
m0=$(made)
warm
m1=$(made)
hrun "$tmp/h1"
hrun "$tmp/h1e" enforce
hrun "$tmp/h1f" enforce-fs
# Made after the first run, and perhaps after the second (whose spare was
# forked before it), then not again while runs use it.
if [ "$((m1 - m0))" -ge 1 ] && [ "$((m1 - m0))" -le 2 ] && [ "$(made)" -eq "$m1" ] &&
	kept "$tmp/h1f"; then
	ok
else
	bad "the launcher's compile: made $((m1 - m0)) times in 3 runs, $(($(made) - m1)) in 3 more"
fi
if kept "$tmp/h1" && reads "$tmp/h1" && kept "$tmp/h1e" && reads "$tmp/h1e" &&
	[ "$(grep '^net:' "$tmp/h1e")" != "$host_net" ] && [ "$(grep '^net:' "$tmp/h1")" = "$host_net" ]; then
	ok
else
	bad "the compile kept ahead: not used, or not in force: $(tr '\n' ' ' <"$tmp/h1") / $(tr '\n' ' ' <"$tmp/h1e")"
fi
# held_changed LABEL FILE: the run after a change compiled afresh, and
# its policy no longer lets it read FILE
held_changed() {
	mc=$(made)
	hrun "$tmp/h2"
	# The spares forked before the launcher compiled again hold the old
	# compile (refused by their runs, as above); a later one the new.
	j=0
	while [ $j -lt 4 ]; do
		hrun "$tmp/h2b"
		grep -qx "$2-$$" "$tmp/h2b" && break
		kept "$tmp/h2b" && break
		j=$((j + 1))
	done
	if grep -q 'compile: not the one the launcher kept: .*changed' "$tmp/h2" &&
		! grep -qx "$2-$$" "$tmp/h2" && [ "$(made)" -gt "$mc" ] && kept "$tmp/h2b" &&
		! grep -qx "$2-$$" "$tmp/h2b"; then
		ok
	else
		bad "$1: the kept compile used after the change, or not made again: $(tr '\n' ' ' <"$tmp/h2") / $(tr '\n' ' ' <"$tmp/h2b")"
	fi
}
printf 'cage 1\n' >"$hd/extra.cage"
held_changed "an imported file edited" o1
printf 'cage 1\nallow read "~/o1"\n' >"$hd/extra.cage"
warm
printf 'cage 1\n' >"$hd/i1/mod.cage"
held_changed "a module earlier on the search path" o2
rm "$hd/i1/mod.cage"
warm
ln -sfn p2.cage "$hd/link.cage"
held_changed "the policy's symlink pointed elsewhere" o1
ln -sfn p.cage "$hd/link.cage"
warm
CAGE_TEST_EXTRA=1 hrun "$tmp/h3"
hrun "$tmp/h4" enforce-fs "$hd/other" # (env -C: the environment, PWD too, as before)
if grep -q 'not the one the launcher kept: kept for another environment' "$tmp/h3" && reads "$tmp/h3" &&
	grep -q 'not the one the launcher kept: kept for another working directory' "$tmp/h4" &&
	reads "$tmp/h4"; then
	ok
else
	bad "another environment or directory: $(tr '\n' ' ' <"$tmp/h3") / $(tr '\n' ' ' <"$tmp/h4")"
fi
stop_launcher

# ---- a plan bound ahead ----------------------------------------------------
# Beside the compile it keeps, the launcher binds that compile's kept plan
# (docs/launcher.md, "A plan bound ahead"), and a run that takes the
# compile takes the plan, which it confirms as it would the cache's. Shown
# taken, and its policy in force; then a directory the policy denies is
# created between two runs (something the plan depends on, not the
# compile): that run finds the launcher's plan stale and cannot read what
# was created (the control: cat reads it without cagerun), and a later run
# takes a plan the launcher bound again, with the denial still in force.
pa=$tmp/pa
mkdir -p "$HOME/pw"
echo "pw-$$" >"$HOME/pw/ok"
cat >"$pa.cage" <<'POL'
cage 1
profile t {
    mode enforce-fs
    allow read exec "/usr/**", "/bin/**", "/lib/**", "/lib64/**", "/etc/**", "/proc/**"
    allow read write "/dev/null"
    allow read write "~/pw/**"
    deny read write "~/pw/new/**"
}
POL
start_launcher
# prun OUT: the request, reading ~/pw/ok and ~/pw/new/f (a pause first:
# the launcher compiles once the run before has ended)
prun() {
	sleep 0.3
	timeout -s KILL 60 "$launch" -v -p "$pa.cage" --mode enforce-fs -- \
		sh -c "cat '$HOME/pw/ok' '$HOME/pw/new/f' 2>&1 | sed 's/^cat: .*/cat: refused/'" \
		>"$1" 2>&1 </dev/null
}
ahead() { grep -q 'plan: .*, bound by the launcher ahead' "$1"; }
j=0
while [ $j -lt 5 ]; do
	prun "$tmp/pa1"
	ahead "$tmp/pa1" && break
	j=$((j + 1))
done
if ahead "$tmp/pa1" && grep -q 'plan: reused ' "$tmp/pa1" && grep -qx "pw-$$" "$tmp/pa1" &&
	grep -qx 'cat: refused' "$tmp/pa1"; then
	ok
else
	bad "the plan bound ahead: not taken in 5 runs, or not in force: $(tr '\n' ' ' <"$tmp/pa1")"
fi
mkdir -p "$HOME/pw/new"
echo "new-$$" >"$HOME/pw/new/f"
if grep -qx "new-$$" "$HOME/pw/new/f"; then ok; else bad "control: ~/pw/new/f is not readable"; fi
prun "$tmp/pa2"
# The spares forked before the launcher bound again hold the old plan
# (found stale by their runs, as above); a later one the new.
j=0
while [ $j -lt 5 ]; do
	prun "$tmp/pa3"
	ahead "$tmp/pa3" && ! grep -q 'changed since' "$tmp/pa3" && break
	j=$((j + 1))
done
if ahead "$tmp/pa2" && grep -q 'pw/new changed since the kept plan was built' "$tmp/pa2" &&
	! grep -q "new-$$" "$tmp/pa2" && grep -qx "pw-$$" "$tmp/pa2" &&
	ahead "$tmp/pa3" && ! grep -q 'changed since' "$tmp/pa3" && ! grep -q "new-$$" "$tmp/pa3"; then
	ok
else
	bad "the plan bound ahead, after a denied directory was created: $(tr '\n' ' ' <"$tmp/pa2") / $(tr '\n' ' ' <"$tmp/pa3")"
fi
stop_launcher

# ---- a project layer judged through the launcher -------------------------
# A layered run through the launcher asks cage-lint as cagerun does
# (docs/cagerun.md, "Trust: a repository is untrusted input"): a clean
# project layer runs (the control), one with a lint error is refused, its
# finding on the client's standard error, and neither falls back.
start_launcher
pj=$tmp/proj
mkdir -p "$pj/.git" "$pj/.cage"
# lrun: the layered form through the client in the project, creating ran
lrun() {
	rm -f "$pj/ran"
	(cd "$pj" && timeout -s KILL 60 "$launch" -- sh -c ': >"$1"' _ "$pj/ran" >"$tmp/out" 2>&1 </dev/null)
	rc=$?
}
n0=$(started)
printf 'cage 1\ndeny write "%s/frozen/**"\n' "$pj" >"$pj/.cage/policy.cage"
lrun
if [ "$rc" -eq 0 ] && [ -e "$pj/ran" ] && [ "$(started)" -gt "$n0" ]; then ok; else
	bad "a clean project layer through the launcher: status $rc, $(($(started) - n0)) started"
fi
n0=$(started)
printf 'cage 1\nallow read "~/.ssh/**"\n' >"$pj/.cage/policy.cage"
lrun
if [ "$rc" -eq 125 ] && [ ! -e "$pj/ran" ] && [ "$(started)" -gt "$n0" ] &&
	grep -q 'policy.cage:2:12: error: .*\[protect-violation\]' "$tmp/out" &&
	grep -q 'the project layer is refused; nothing was run' "$tmp/out"; then ok; else
	bad "a project layer with a lint error through the launcher: status $rc, $(($(started) - n0)) started"
fi
stop_launcher

# ---- the launcher's lines: one write each --------------------------------
# Its spares write to the same standard error at once, so a line written
# in pieces can be cut into by another's (it was, once, in CI).
if command -v strace >/dev/null 2>&1; then
	mkdir -p "$tmp/s2"
	chmod 700 "$tmp/s2"
	strace -s 512 -o "$tmp/s2/trace" -e trace=write -e signal=none \
		"$cagerun" launcher --socket "$tmp/s2/sock" >"$tmp/s2/log" 2>&1 </dev/null &
	spid=$!
	i=0
	while [ ! -S "$tmp/s2/sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	# The launcher is strace's child: stopping it ends strace too.
	kill $(pgrep -P "$spid") 2>/dev/null
	i=0
	while kill -0 "$spid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	kill -KILL "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	if grep -q '^write(2, "cagerun launcher: listening on .*\\n", [0-9]*) = ' "$tmp/s2/trace" &&
		! grep -q '^write(2, "cagerun launcher: ", 18)' "$tmp/s2/trace"; then ok; else
		bad "the launcher's line is not one write: $(grep '^write(2' "$tmp/s2/trace" | head -n 3)"
	fi
else
	echo "launcher.sh: no strace: the one-write check is skipped"
fi

# ---- the socket's folder -------------------------------------------------
start_launcher
if [ "$(stat -c %a "$sock")" = 600 ] && [ "$(stat -c %a "$(dirname "$sock")")" = 700 ]; then ok; else
	bad "the socket is $(stat -c %a "$sock") in a folder $(stat -c %a "$(dirname "$sock")"), not 600 in 700"
fi
"$cagerun" launcher --socket "$sock" >"$tmp/out" 2>&1 </dev/null
s=$?
if [ $s -eq 125 ] && grep -q 'already listens' "$tmp/out"; then ok; else bad "a second launcher on the socket: status $s"; fi
mkdir -p "$tmp/open"
chmod 755 "$tmp/open"
"$cagerun" launcher --socket "$tmp/open/s.sock" >"$tmp/out" 2>&1 </dev/null
s=$?
if [ $s -eq 125 ] && grep -q 'only it can open' "$tmp/out"; then ok; else bad "a folder others may enter: status $s"; fi
if [ "$(id -u)" = 0 ] && id cage-test >/dev/null 2>&1; then
	n0=$(started)
	chmod 755 "$tmp" "$tmp/home" "$tmp/home/w"
	runuser -u cage-test -- env CAGE_LAUNCHER_SOCKET="$sock" HOME=/nonexistent \
		timeout -s KILL 60 "$launch" -q -p "$tmp/p.cage" --mode off -- true >"$tmp/out" 2>&1 </dev/null
	if [ "$(started)" -eq "$n0" ]; then ok; else bad "another user's client was run by the launcher"; fi
fi
stop_launcher

echo "launcher.sh: $passes passed, $fails failed"
[ $fails -eq 0 ]
