#!/bin/sh
# qual.sh - the Linux sandbox's qualification suite (testsuite/qual/README.md
# says what each case shows).
#
#   qual.sh [--user NAME] CAGERUN CAGEC SRCDIR
#
# Every case is non-vacuous: it first does the operation WITHOUT cagerun
# against a disposable fixture (a control that fails fails the case), then
# does it under cagerun and checks that it is refused and, where it
# matters, that nothing changed on disk. Fixtures live in a fresh directory
# per run, removed at the end.
#
# --user NAME: when run as root, create the fixture directory owned by NAME
# and run the whole suite as NAME (setpriv) with the soft open-files limit
# an ordinary login has (1024); when not root, run as the current user.
#
# Prints PASS/FAIL/SKIP per case (QUAL_VERBOSE=1: with each case's output),
# the number of skips, and a closing "N passed, N failed" line; exits 1 on
# any failure.
set -u

user= base=
while [ $# -gt 0 ]; do
	case $1 in
	--user) user=$2; shift 2 ;;
	--base) base=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -eq 3 ] || { echo "usage: qual.sh [--user NAME] CAGERUN CAGEC SRCDIR" >&2; exit 2; }
abs() { case $1 in /*) echo "$1" ;; *) echo "$(pwd -P)/$1" ;; esac; }
CAGERUN=$(abs "$1") CAGEC=$(abs "$2") SRC=$(abs "$3")
QDIR=$SRC/testsuite/qual
SYSPATH=/usr/local/bin:/usr/bin:/bin
PY=/usr/bin/python3
T=30 # the bound on any one command, in seconds

# Root running the user variant: hand over to the user, fixtures made
# inside a directory the user owns.
if [ -n "$user" ] && [ -z "$base" ] && [ "$(id -u)" -eq 0 ]; then
	if ! id "$user" >/dev/null 2>&1; then
		echo "FAIL setup: user $user does not exist (.ci/deps creates it)"
		echo "0 passed, 1 failed"
		exit 1
	fi
	for f in "$CAGERUN" "$CAGEC" "$SRC/testsuite/qual/qual.sh"; do
		if ! setpriv --reuid="$user" --regid="$user" --init-groups test -r "$f"; then
			echo "FAIL setup: $user cannot read $f (build where every user can reach it)"
			echo "0 passed, 1 failed"
			exit 1
		fi
	done
	base=$(mktemp -d "${TMPDIR:-/tmp}/cage-qual.XXXXXX") || exit 1
	chmod 755 "$base" && chown "$user:" "$base" || exit 1
	# An ordinary login's soft open-files limit (Debian's, Ubuntu's).
	if [ "$(ulimit -Sn)" = unlimited ] || [ "$(ulimit -Sn)" -gt 1024 ]; then
		ulimit -Sn 1024 || exit 1
	fi
	setpriv --reuid="$user" --regid="$user" --init-groups \
		env -i PATH="$SYSPATH" LANG=C.UTF-8 HOME="$base" \
		sh "$0" --base "$base" "$CAGERUN" "$CAGEC" "$SRC"
	rc=$?
	rm -rf "$base"
	exit $rc
fi
if [ -z "$base" ]; then
	base=$(mktemp -d "${TMPDIR:-/tmp}/cage-qual.XXXXXX") || exit 1
	own_base=1
else
	own_base=
fi
# $base may sit under a symlink (e.g. /tmp): the policy sees real paths.
F=$(cd "$base" && pwd -P)/f
WS=$F/ws H=$F/home OUTSIDE=$F/outside
OUT=$F/out
SENT=qual-sentinel-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
MARK=$(od -An -N3 -tu4 /dev/urandom | tr -d ' ')
PASS=0 FAILED=0 SKIPPED=0
PIDS=

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do { wait "$p"; } 2>/dev/null; done
	chmod -R u+rwX "$F" 2>/dev/null
	if [ -n "$own_base" ]; then rm -rf "$base"; else rm -rf "$F"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
# Environments are passed as one word-split list ($ENVV): no blanks.
case $F in *[[:space:]]*)
	echo "FAIL setup: the fixture path '$F' has blanks; set TMPDIR to a path without"
	echo "0 passed, 1 failed"
	exit 1 ;;
esac

# ---- reporting ---------------------------------------------------------

# QUAL_VERBOSE=1 in the environment shows the last output of passing
# cases too (what the refusal looked like).
pass() {
	PASS=$((PASS + 1))
	echo "PASS $1${2:+ ($2)}"
	[ -n "${QUAL_VERBOSE:-}" ] && [ -s "$OUT" ] && head -n 6 "$OUT" | sed 's/^/    | /'
	return 0
}
skip() { SKIPPED=$((SKIPPED + 1)); echo "SKIP $1: $2"; }
fail() {
	FAILED=$((FAILED + 1))
	echo "FAIL $1: $2"
	[ -s "$OUT" ] && head -n 15 "$OUT" | sed 's/^/    | /'
	return 0
}

# ---- running things ----------------------------------------------------

# The environment of both the controls and cagerun: a secret that must not
# get in, and a name the policy keeps.
# TMPDIR: cagerun makes each run's private directory there, so what a run
# leaves behind is seen (proc/leases-removed) and removed with the fixture.
ENVV="PATH=$SYSPATH LANG=C.UTF-8 HOME=$H TMPDIR=$F/tmp QUAL_KEPT=kept-$MARK AWS_SECRET_ACCESS_KEY=aws-$SENT"

# ctl CMD...: the control, without cagerun, in the workspace.
ctl() { (cd "$WS" && env -i $ENVV timeout -s KILL $T "$@"); }

# cage MODE CMD...: the same under cagerun with the suite's policy; a few
# cases set CDIR (the working directory), CHOME (the home param) or CT
# (the time bound) first, and empty them after.
CDIR= CHOME= CT=
cage() {
	m=$1
	shift
	(cd "${CDIR:-$WS}" && env -i $ENVV timeout -s KILL "${CT:-$T}" "$CAGERUN" \
		-p "$QDIR/policies/qual.cage" --profile qual -D workspace="$WS" -D home="${CHOME:-$H}" \
		--mode "$m" --quiet -- "$@")
}

# cage_started MODE CMD...: cagerun's output in $OUT and its status in $RC;
# false (and the case failed) when the command never started, so that a
# refused operation is never mistaken for a sandbox that did not start.
# The command is started by a shell that first prints a marker line,
# removed from $OUT afterwards.
cage_started() {
	m=$1
	shift
	cage "$m" sh -c 'echo qual-started; exec "$@"' sh "$@" >"$OUT" 2>&1
	RC=$?
	if ! grep -aq '^qual-started$' "$OUT"; then
		fail "$CASE" "cagerun --mode $m did not start the command (status $RC)"
		return 1
	fi
	grep -av '^qual-started$' "$OUT" >"$OUT.tmp"
	mv "$OUT.tmp" "$OUT"
	return 0
}

# wait_for FILE: bounded wait (10 s) for a file to appear.
wait_for() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ -s "$1" ]
}

# serve KIND ARGS...: starts a listener from servers.py, waits until it
# listens, leaves its address in $ADDR.
serve() {
	k=$1
	shift
	n=$(($(echo $PIDS | wc -w) + 1))
	rdy=$F/srv/ready-$n
	$PY "$QDIR/servers.py" "$k" "$@" "$rdy" "$F/srv/log-$n" >"$F/srv/err-$n" 2>&1 &
	PIDS="$PIDS $!"
	SLOG=$F/srv/log-$n
	: >"$SLOG"
	if ! wait_for "$rdy"; then
		ADDR=
		return 1
	fi
	ADDR=$(cat "$rdy")
}

# alive_marked TAG: true while a process whose command line carries TAG runs.
alive_marked() {
	for c in /proc/[0-9]*/cmdline; do
		{ tr '\0' ' ' <"$c"; } 2>/dev/null | grep -q -- "$1" && return 0
	done
	return 1
}

# needs PIECE: false (and the case failed) when the probe at the start
# found the piece missing from this build.
needs() {
	eval "have=\$HAVE_$1"
	[ "$have" = yes ] && return 0
	fail "$CASE" "needs $1, which failed its probe at the start: $(eval "echo \$WHY_$1")"
	return 1
}

# ---- fixtures ----------------------------------------------------------

# $H/.cache/go-build: the Go build cache examples/go-offline's imported
# default (std/toolchains/go-paths) names.
mkdir -p "$WS" "$H/.ssh" "$H/run" "$H/.cache/go-build" "$OUTSIDE" "$F/srv" "$F/tmp" "$F/killed-tmp" || exit 1
chmod 755 "$H/run"
printf '%s\n' "$SENT" >"$H/.ssh/id_rsa"
chmod 600 "$H/.ssh/id_rsa"
printf 'original\n' >"$OUTSIDE/existing"
cc -O1 -o "$WS/probe" "$QDIR/probe.c" 2>"$OUT" || { fail setup "cannot compile probe.c"; exit 1; }
(
	cd "$WS" && git init -q . && git config user.name qual && git config user.email qual@test &&
		printf '#!/bin/sh\ntouch "%s/hook-ran"\n' "$WS" >.git/hooks/pre-commit &&
		chmod 755 .git/hooks/pre-commit && printf 'x\n' >tracked && git add tracked &&
		git -c core.hooksPath=/dev/null commit -q -m init
) >"$OUT" 2>&1 || { fail setup "cannot make the fixture repository"; exit 1; }
HOOK_SUM=$(cksum <"$WS/.git/hooks/pre-commit")

# What this build has: seccomp (a filter on the command) and a working
# enforce mode (its proxy).
if cage enforce-fs grep -q '^Seccomp:[[:space:]]*2' /proc/self/status >"$OUT" 2>&1; then
	HAVE_seccomp=yes
else
	HAVE_seccomp=no WHY_seccomp="the command runs without a seccomp filter"
fi
if cage enforce true >"$OUT" 2>&1; then
	HAVE_proxy=yes
else
	HAVE_proxy=no WHY_proxy="cagerun --mode enforce -- true: status $?: $(head -n 1 "$OUT")"
fi
echo "# $(id -un) (uid $(id -u)), fixtures in $F; seccomp: $HAVE_seccomp, enforce mode: $HAVE_proxy"

# ---- the sentinel in HOME/.ssh ------------------------------------------

# read_case NAME PATTERN CMD...: CMD shows PATTERN without cagerun; under
# cagerun it starts and does not.
read_case() {
	CASE=$1 pat=$2
	shift 2
	ctl "$@" >"$OUT" 2>&1
	grep -q -- "$pat" "$OUT" || { fail "$CASE" "control: no '$pat' without cagerun"; return; }
	cage_started enforce-fs "$@" || return
	if grep -q -- "$pat" "$OUT"; then fail "$CASE" "'$pat' seen inside the sandbox"; return; fi
	pass "$CASE"
}

read_case ssh/cat "$SENT" cat "$H/.ssh/id_rsa"
read_case ssh/ls id_rsa ls "$H/.ssh"
read_case ssh/find id_rsa find "$H" -name id_rsa
read_case ssh/cp "$SENT" sh -c 'cp "$1" copied && cat copied; rm -f copied' sh "$H/.ssh/id_rsa"
ln -s "$H/.ssh/id_rsa" "$WS/ssh-link"
read_case ssh/symlink-in-workspace "$SENT" cat "$WS/ssh-link"
ln -s "$H/.ssh" "$WS/ssh-dir-link"
read_case ssh/dir-symlink-in-workspace "$SENT" cat "$WS/ssh-dir-link/id_rsa"
read_case ssh/proc-self-root "$SENT" cat "/proc/self/root$H/.ssh/id_rsa"
read_case ssh/dotdot "$SENT" cat "$WS/../home/./.ssh/../.ssh/id_rsa"
read_case ssh/dirfd-before-cd "$SENT" ./probe dirfd "$H" .ssh/id_rsa /
read_case ssh/tar "$SENT" sh -c 'tar -C "$1" -cf - .ssh | tar -xOf -' sh "$H"

# cagerun started from inside the hidden directory: the command's working
# directory is looked up again inside the sandbox.
CASE=ssh/cwd-inside
(cd "$H/.ssh" && env -i $ENVV timeout -s KILL $T cat id_rsa) >"$OUT" 2>&1
if ! grep -q "$SENT" "$OUT"; then
	fail "$CASE" "control: cat id_rsa in $H/.ssh"
else
	CDIR=$H/.ssh
	cage enforce-fs sh -c 'echo qual-started; cat id_rsa; ls /proc/1/cwd/; cat /proc/1/cwd/id_rsa' >"$OUT" 2>&1
	CDIR=
	if ! grep -q qual-started "$OUT"; then
		pass "$CASE" "cagerun refused to start there"
	elif grep -q -e "$SENT" -e '^id_rsa' "$OUT"; then
		fail "$CASE" "the sentinel was read from the inherited working directory"
	else
		pass "$CASE"
	fi
fi

# A home whose .ssh is a symlink to another directory: the plan hides
# the directory the link leads to.
CASE=ssh/symlinked-ssh-dir
H2=$F/home2
mkdir -p "$H2/dotfiles/ssh" && printf '%s\n' "$SENT" >"$H2/dotfiles/ssh/id_rsa" && ln -s dotfiles/ssh "$H2/.ssh"
ctl cat "$H2/.ssh/id_rsa" >"$OUT" 2>&1
if ! grep -q "$SENT" "$OUT"; then
	fail "$CASE" "control: cannot read through the link"
else
	CHOME=$H2
	if cage_started enforce-fs sh -c 'cat "$1/.ssh/id_rsa" "$1/dotfiles/ssh/id_rsa"; ls "$1/dotfiles/ssh"' sh "$H2"; then
		if grep -q -e "$SENT" -e '^id_rsa' "$OUT"; then fail "$CASE" "the sentinel was readable"; else pass "$CASE"; fi
	fi
	CHOME=
fi

# A hard link made beforehand, outside the sandbox, is a second path to the
# same file, inside the workspace. Landlock and mounts act on paths: the
# file is readable through it. This case pins that documented behaviour.
CASE=ssh/hardlink-made-beforehand
if ln "$H/.ssh/id_rsa" "$WS/ssh-hard" 2>"$OUT"; then
	ctl cat "$WS/ssh-hard" >"$OUT" 2>&1
	if ! grep -q "$SENT" "$OUT"; then
		fail "$CASE" "control: cannot read the hard link"
	elif cage_started enforce-fs cat "$WS/ssh-hard"; then
		if grep -q "$SENT" "$OUT"; then
			pass "$CASE" "documented: readable inside through the link; a link into the workspace made outside is outside the policy's reach"
		else
			fail "$CASE" "the documented behaviour changed: update README.md and this case"
		fi
	fi
	rm -f "$WS/ssh-hard"
else
	skip "$CASE" "no hard link possible from $H to $WS: $(cat "$OUT")"
fi

# Descriptors open when cagerun starts: a file and a directory.
CASE=fd/inherited
(cd "$WS" && env -i $ENVV timeout $T sh -c 'cat <&3; ls /proc/self/fd/4/' 3<"$H/.ssh/id_rsa" 4<"$H/.ssh") >"$OUT" 2>&1
if ! grep -q "$SENT" "$OUT" || ! grep -q id_rsa "$OUT"; then
	fail "$CASE" "control: fds 3 and 4 not readable without cagerun"
else
	cage enforce-fs sh -c 'echo qual-started; cat <&3; ls /proc/self/fd/4/; ls /proc/self/fd' \
		3<"$H/.ssh/id_rsa" 4<"$H/.ssh" >"$OUT" 2>&1
	if ! grep -q qual-started "$OUT"; then
		fail "$CASE" "the command did not start"
	elif grep -q -e "$SENT" -e id_rsa "$OUT"; then
		fail "$CASE" "an inherited descriptor was readable inside"
	else
		pass "$CASE"
	fi
fi

# ---- writing outside the workspace --------------------------------------

# write_case NAME TARGET CMD...: CMD creates or changes TARGET without
# cagerun; under cagerun TARGET is as it was before.
write_case() {
	CASE=$1 tgt=$2
	shift 2
	before=$({ cksum <"$tgt"; } 2>/dev/null || echo absent)
	ctl "$@" >"$OUT" 2>&1
	after=$({ cksum <"$tgt"; } 2>/dev/null || echo absent)
	if [ "$before" = "$after" ]; then fail "$CASE" "control: $tgt unchanged without cagerun"; return; fi
	# Put the fixture back as it was.
	if [ "$before" = absent ]; then rm -rf "$tgt"; else printf 'original\n' >"$tgt"; fi
	cage_started enforce-fs "$@" || return
	after=$({ cksum <"$tgt"; } 2>/dev/null || echo absent)
	if [ "$before" != "$after" ]; then
		fail "$CASE" "$tgt changed under cagerun"
	else
		pass "$CASE"
	fi
}

write_case write/absolute-new "$OUTSIDE/new" sh -c "echo x > '$OUTSIDE/new'"
write_case write/absolute-existing "$OUTSIDE/existing" sh -c "echo x >> '$OUTSIDE/existing'"
write_case write/truncate-existing "$OUTSIDE/existing" truncate -s 0 "$OUTSIDE/existing"
write_case write/mkdir "$OUTSIDE/dir" mkdir "$OUTSIDE/dir"
write_case write/home-readonly "$H/new" touch "$H/new"
write_case write/dotdot "$OUTSIDE/new" sh -c "echo x > ../outside/new"
ln -s "$OUTSIDE" "$WS/out-link"
write_case write/dir-symlink "$OUTSIDE/new" sh -c 'echo x > out-link/new'
ln -s "$OUTSIDE/existing" "$WS/out-file-link"
write_case write/file-symlink "$OUTSIDE/existing" sh -c 'echo x >> out-file-link'
write_case write/rename-into-outside "$OUTSIDE/moved" sh -c 'echo x > w && mv w "$1/moved"' sh "$OUTSIDE"
printf 'original\n' >"$H/plain"
write_case write/hardlink-from-inside "$H/plain" sh -c 'ln "$1" hl && echo x >> hl; rm -f hl' sh "$H/plain"
write_case write/delete-outside "$OUTSIDE/existing" rm -f "$OUTSIDE/existing"

# A setuid or setgid program left in the workspace runs with its owner's
# privileges for whoever starts it later, outside the sandbox. When the
# sandbox runs as root, that owner is root: the command must not be able to
# leave one behind (the macOS profile never allows file-write-setugid).
CASE=write/setuid-left-behind
mkdir -p "$F/suid" && cp /usr/bin/true "$F/suid/t" && chmod 4755 "$F/suid/t"
if [ ! -u "$F/suid/t" ]; then
	fail "$CASE" "control: chmod 4755 did not make a setuid file"
elif [ "$(id -u)" -ne 0 ]; then
	skip "$CASE" "not root: a setuid file made by $(id -un) carries only $(id -un)'s own privileges"
elif cage_started enforce-fs sh -c 'cp /usr/bin/true s1; chmod 4755 s1; cp /usr/bin/true s2; chmod 2755 s2
	$0 -c "import os; os.close(os.open(\"s3\", os.O_CREAT | os.O_WRONLY, 0o6755))"' $PY; then
	left=$(cd "$WS" && find . -maxdepth 1 -type f -perm /6000 | tr '\n' ' ')
	if [ -n "$left" ]; then fail "$CASE" "setuid/setgid files owned by root left in the workspace: $left"; else pass "$CASE"; fi
fi
rm -f "$WS/s1" "$WS/s2" "$WS/s3"

# ---- git hooks ------------------------------------------------------------

# hook_case NAME CMD...: CMD run in a throw-away copy of the repository
# changes its hooks/pre-commit (control); in the real one under cagerun the
# hook is untouched, and .git is still where it was.
hook_case() {
	CASE=$1
	shift
	rm -rf "$F/copy" && cp -a "$WS" "$F/copy" || { fail "$CASE" "cannot copy the fixture"; return; }
	(cd "$F/copy" && env -i $ENVV timeout -s KILL $T "$@") >"$OUT" 2>&1
	if [ -f "$F/copy/.git/hooks/pre-commit" ] &&
		[ "$(cksum <"$F/copy/.git/hooks/pre-commit")" = "$HOOK_SUM" ] &&
		! grep -q evil "$F/copy/.git-moved/hooks/pre-commit" 2>/dev/null &&
		! grep -q evil "$F/copy/hk/pre-commit" 2>/dev/null; then
		fail "$CASE" "control: the hook is unchanged without cagerun"
		return
	fi
	rm -rf "$F/copy"
	cage_started enforce-fs "$@" || return
	if [ ! -d "$WS/.git" ] || [ -e "$WS/.git-moved" ]; then
		fail "$CASE" ".git was moved under cagerun"
		[ -d "$WS/.git-moved" ] && [ ! -e "$WS/.git" ] && mv "$WS/.git-moved" "$WS/.git"
	elif [ "$(cksum <"$WS/.git/hooks/pre-commit" 2>/dev/null)" != "$HOOK_SUM" ] ||
		[ -e "$WS/.git/hooks/post-checkout" ]; then
		fail "$CASE" "a hook changed under cagerun"
	else
		pass "$CASE"
	fi
}

hook_case hooks/write-direct sh -c 'echo "echo evil" >> .git/hooks/pre-commit'
hook_case hooks/create-new sh -c 'echo "echo evil" > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout; echo "echo evil" > .git/hooks/pre-commit'
hook_case hooks/delete sh -c 'rm -f .git/hooks/pre-commit'
hook_case hooks/rename-git sh -c 'mv .git .git-moved && echo "echo evil" >> .git-moved/hooks/pre-commit'
hook_case hooks/rename-hooks sh -c 'mv .git/hooks .git/hooks-old && mkdir .git/hooks && echo "echo evil" > .git/hooks/pre-commit'
hook_case hooks/symlink sh -c 'ln -s .git/hooks hk && echo "echo evil" >> hk/pre-commit'
rm -f "$WS/hk"

# ---- environment --------------------------------------------------------

CASE=env/secret
ctl sh -c 'echo "secret=$AWS_SECRET_ACCESS_KEY kept=$QUAL_KEPT"' >"$OUT" 2>&1
if ! grep -q "secret=aws-$SENT" "$OUT"; then
	fail "$CASE" "control: the secret is not in the environment without cagerun"
elif cage_started enforce-fs sh -c 'echo "secret=$AWS_SECRET_ACCESS_KEY kept=$QUAL_KEPT"; env'; then
	if grep -q "$SENT" "$OUT"; then
		fail "$CASE" "the secret reached the command"
	elif ! grep -q "kept=kept-$MARK" "$OUT"; then
		fail "$CASE" "env keep QUAL_KEPT did not pass the name (the check would be vacuous)"
	else
		pass "$CASE"
	fi
fi

CASE=env/private-tmpdir
cage_started enforce-fs sh -c 'echo "$TMPDIR"; echo tmp-ok > "$TMPDIR/f" && cat "$TMPDIR/f"' &&
	tdir=$(head -n 1 "$OUT") &&
	if ! grep -q tmp-ok "$OUT"; then
		fail "$CASE" "cannot write in TMPDIR"
	elif [ "${tdir#"$F/tmp/cage-tmp."}" = "$tdir" ]; then
		fail "$CASE" "TMPDIR '$tdir' is not in the run's directory under \$TMPDIR"
	elif [ -e "$tdir" ]; then
		fail "$CASE" "TMPDIR '$tdir' is left behind after the run"
	else
		pass "$CASE"
	fi

# ---- processes ------------------------------------------------------------

CASE=proc/c-program
printf '#include <stdio.h>\nint main(void){puts("hello-from-c");return 0;}\n' >"$WS/hello.c"
cc -o "$WS/hello" "$WS/hello.c" 2>"$OUT" && ctl ./hello >"$OUT" 2>&1
if ! grep -q hello-from-c "$OUT"; then
	fail "$CASE" "control: cannot build or run hello"
elif cage_started enforce-fs ./hello; then
	if grep -q hello-from-c "$OUT" && [ $RC -eq 0 ]; then pass "$CASE"; else fail "$CASE" "status $RC"; fi
fi

# Children and grandchildren that outlive the command: gone when cagerun
# returns, and it returns at once (the bound, 20 s, is below their 30 s).
CASE=proc/orphans-killed
tag=30.$MARK
ctl sh -c "(sleep $tag &) ; exit 0" >"$OUT" 2>&1
if ! alive_marked "sleep $tag"; then
	fail "$CASE" "control: the orphan did not outlive sh"
else
	pkill -f "sleep $tag"
	tag=31.$MARK
	CT=20
	cage enforce-fs sh -c "(sleep $tag &) ; (setsid sleep $tag &) ; sleep $tag & exit 0" >"$OUT" 2>&1
	RC=$?
	CT=
	if [ $RC -ne 0 ]; then
		fail "$CASE" "cagerun did not return 0 promptly (status $RC)"
	elif alive_marked "sleep $tag"; then
		fail "$CASE" "a child outlived cagerun"
		pkill -f "sleep $tag"
	else
		pass "$CASE"
	fi
fi

CASE=proc/signal-inside
cage_started enforce-fs sh -c 'sleep 30 & kill $!; wait $!; echo "status $?"' &&
	if grep -q 'status 143' "$OUT"; then pass "$CASE"; else fail "$CASE" "the child was not killed"; fi

# SIGINT to cagerun (as Ctrl-C sends it): the command and its group end,
# cagerun exits 130. The job is started with SIGINT at its default: a
# shell starts background jobs with it ignored. The command is the probe in
# pause() (see proc/ctrl-c-terminal), with a background child that ignores
# SIGINT and must still be gone afterwards.
CASE=proc/sigint
tag=32.$MARK
rm -f "$WS/int-ready"
(cd "$WS" && exec env -i --default-signal=INT $ENVV timeout -s KILL $T "$CAGERUN" \
	-p "$QDIR/policies/qual.cage" --profile qual -D workspace="$WS" -D home="$H" \
	--mode enforce-fs --quiet -- sh -c "sleep $tag & exec ./probe pause > int-ready") >"$OUT" 2>&1 &
job=$!
if ! wait_for "$WS/int-ready"; then
	fail "$CASE" "the command did not start"
	kill "$job" 2>/dev/null
else
	# $job is timeout's pid; cagerun is its child.
	crun=$(pgrep -P "$job" | head -n 1)
	kill -INT "$crun"
	{ wait "$job"; } 2>/dev/null
	RC=$?
	if [ $RC -ne 130 ]; then
		fail "$CASE" "cagerun exited $RC, not 130"
	elif alive_marked "sleep $tag"; then
		fail "$CASE" "the command's child survived"
	else
		pass "$CASE"
	fi
fi
pkill -f "sleep $tag" 2>/dev/null

# Ctrl-C typed on the terminal cagerun runs on: the command has the
# terminal's foreground, so the interrupt reaches its whole group, and
# cagerun exits 130. The command is the probe waiting in pause(), which
# says "ready" only when a SIGINT can do nothing but end it (a shell that
# prints and then starts a child has a window where it defers SIGINT until
# that child exits).
for m in enforce-fs enforce; do
	CASE=proc/ctrl-c-terminal/$m
	[ $m = enforce ] && ! needs proxy && continue
	(cd "$WS" && env -i $ENVV timeout -s KILL $T $PY "$QDIR/ptyrun.py" "$CAGERUN" \
		-p "$QDIR/policies/qual.cage" --profile qual -D workspace="$WS" -D home="$H" --mode $m \
		--quiet -- ./probe pause) >"$OUT" 2>&1
	if grep -q 'status 130 typed' "$OUT"; then pass "$CASE"; else fail "$CASE" "Ctrl-C did not end the command with 130"; fi
done

# The sandbox's init is a copy of cagerun: its environment is cagerun's
# (with the secret), its working directory cagerun's. Neither is reachable.
CASE=proc/init-environ
ctl sh -c 'cat /proc/$$/environ' >"$OUT" 2>&1
if ! grep -aq "aws-$SENT" "$OUT"; then
	fail "$CASE" "control: a process's own environ is not readable"
elif cage_started enforce-fs sh -c 'cat /proc/1/environ; cat /proc/1/cmdline; ls /proc/1/fd /proc/1/cwd/'; then
	if grep -aq "aws-$SENT" "$OUT"; then fail "$CASE" "init's environment was readable"; else pass "$CASE"; fi
fi

# Exit statuses: the command's, and 128+N for a signal, in both modes (in
# enforce the proxy's loop is what sees init exit); the output the command
# left behind is all there when cagerun returns.
for m in enforce-fs enforce; do
	CASE=proc/exit-status/$m
	[ $m = enforce ] && ! needs proxy && continue
	cage $m sh -c 'exit 7' >"$OUT" 2>&1
	s1=$?
	cage $m sh -c 'kill -TERM $$' >"$OUT" 2>&1
	s2=$?
	cage $m sh -c 'i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i + 1)); done; exit 3' \
		>"$OUT" 2>&1
	s3=$?
	n=$(grep -c '^line ' "$OUT")
	if [ $s1 -eq 7 ] && [ $s2 -eq 143 ] && [ $s3 -eq 3 ] && [ "$n" -eq 2000 ]; then
		pass "$CASE"
	else
		fail "$CASE" "statuses $s1, $s2, $s3 and $n lines, expected 7, 143, 3 and 2000"
	fi
done

# cagerun killed outright (SIGKILL, no chance to clean up): the sandbox's
# init dies with it, and with init every process of the sandbox.
CASE=proc/cagerun-killed
tag=35.$MARK
rm -f "$WS/kill-ready"
# (Its run directory cannot be removed: it goes to a TMPDIR of its own.)
(cd "$WS" && exec env -i $ENVV TMPDIR="$F/killed-tmp" "$CAGERUN" -p "$QDIR/policies/qual.cage" --profile qual \
	-D workspace="$WS" -D home="$H" --mode enforce-fs --quiet -- \
	sh -c "(setsid sleep $tag &); sleep $tag & echo ready > kill-ready; wait") >"$OUT" 2>&1 &
job=$!
if ! wait_for "$WS/kill-ready"; then
	fail "$CASE" "the command did not start"
	kill "$job" 2>/dev/null
else
	kill -KILL "$job"
	{ wait "$job"; } 2>/dev/null
	i=0
	while alive_marked "sleep $tag" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	if alive_marked "sleep $tag"; then
		fail "$CASE" "a process of the sandbox outlived cagerun"
		pkill -f "sleep $tag"
	else
		pass "$CASE"
	fi
fi

# The sandbox's init is cloned from cagerun and goes on to call malloc (in
# libseccomp, in fork). If cagerun has other threads at that moment (the
# proxy's resolver threads), a lock one of them held stays held forever in
# the child, and the run hangs before the command starts. So no thread may
# exist when the namespaces are cloned. strace shows the order of the
# clone calls; the control is that it sees the sandbox's clone at all.
CASE=proc/no-threads-at-clone
if ! command -v strace >/dev/null; then
	skip "$CASE" "strace is not installed"
else
	for m in enforce-fs enforce; do
		CASE=proc/no-threads-at-clone/$m
		[ $m = enforce ] && ! needs proxy && continue
		(cd "$WS" && env -i $ENVV timeout -s KILL $T strace -f -qq -e trace=clone,clone3 -o "$F/strace" \
			"$CAGERUN" -p "$QDIR/policies/qual.cage" --profile qual -D workspace="$WS" -D home="$H" \
			--mode $m --quiet -- true) >"$OUT" 2>&1
		ns=$(grep -n CLONE_NEWUSER "$F/strace" | head -n 1 | cut -d: -f1)
		th=$(grep -n CLONE_THREAD "$F/strace" | head -n 1 | cut -d: -f1)
		if [ -z "$ns" ]; then
			cp "$F/strace" "$OUT"
			fail "$CASE" "control: strace did not show the sandbox's clone"
		elif [ -n "$th" ] && [ "$th" -lt "$ns" ]; then
			fail "$CASE" "cagerun started a thread before cloning the sandbox (strace line $th, clone at line $ns)"
		else
			pass "$CASE"
		fi
	done
fi

# A sibling in the sandbox and a child of its own: ptrace refused.
CASE=proc/ptrace
tag=33.$MARK
ctl sh -c "sleep $tag & ./probe ptrace \$!; kill \$!; ./probe ptrace-child" >"$OUT" 2>&1
if [ "$(grep -c '^ok ptrace' "$OUT")" -ne 2 ]; then
	fail "$CASE" "control: ptrace did not work without cagerun"
elif needs seccomp && cage_started enforce-fs sh -c "sleep $tag & ./probe ptrace \$!; kill \$!; ./probe ptrace-child"; then
	if grep -q '^ok ptrace' "$OUT"; then fail "$CASE" "ptrace worked inside"; else pass "$CASE"; fi
fi

# A process outside: no signal reaches it, its environment is unreadable.
CASE=proc/outside-process
tag=34.$MARK
env -i QUAL_ENV_MARK="env-$SENT" sleep "$tag" &
victim=$!
PIDS="$PIDS $victim"
env -i sleep "$tag" &
ctl_victim=$!
ctl ./probe kill $ctl_victim >"$OUT" 2>&1
{ wait $ctl_victim; } 2>/dev/null
krc=$?
ctl cat /proc/$victim/environ >>"$OUT" 2>&1
if [ $krc -ne 143 ] || ! grep -q "env-$SENT" "$OUT"; then
	fail "$CASE" "control: could not signal a process or read its environ without cagerun"
elif cage_started enforce-fs sh -c "./probe kill $victim; cat /proc/$victim/environ; echo done"; then
	if ! kill -0 $victim 2>/dev/null; then
		fail "$CASE" "the outside process was killed from inside"
	elif grep -q -e "env-$SENT" -e '^ok kill' "$OUT"; then
		fail "$CASE" "signal or environ got through"
	else
		pass "$CASE"
	fi
fi

# ---- sockets and system calls -----------------------------------------------

# sys_case NAME REFUSAL PROBE-ARGS...: the probe succeeds without cagerun
# (run by $SYS_CTL: in a user, mount and network namespace of its own, as
# the sandbox has) and, under cagerun, fails at the step REFUSAL names, in
# both modes.
SYS_CTL="unshare -rnm"
sys_case() {
	name=$1 refusal=$2
	shift 2
	CASE=$name
	(cd "$WS" && $SYS_CTL ./probe "$@") >"$OUT" 2>&1
	if ! grep -q '^ok' "$OUT"; then
		if [ "$refusal" = TIOCSTI ] && [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)" = 0 ]; then
			skip "$CASE" "dev.tty.legacy_tiocsti=0: the kernel itself refuses TIOCSTI here"
		else
			fail "$CASE" "control: the operation failed without cagerun"
		fi
		return
	fi
	for m in enforce-fs enforce; do
		CASE=$name/$m
		[ $m = enforce ] && ! needs proxy && continue
		cage_started $m ./probe "$@" || continue
		if grep -q "^denied $refusal:" "$OUT"; then pass "$CASE"; else fail "$CASE" "not refused by $refusal"; fi
	done
}
mkdir -p "$WS/mnt"
sys_case sys/raw-socket 'raw socket' raw
sys_case sys/packet-socket 'packet socket' packet
sys_case sys/io_uring io_uring_setup io_uring
sys_case sys/unshare-userns unshare unshare-user
sys_case sys/clone-userns clone clone-user
sys_case sys/mount mount mount "$WS/mnt"
# TIOCSTI is checked against the initial namespace's CAP_SYS_ADMIN: its
# control runs without a namespace of its own.
SYS_CTL=
sys_case sys/tiocsti TIOCSTI tiocsti

# System calls through the i386 entry point: the filter kills the process
# (SIGSYS) rather than let a call meet no rule.
CASE=sys/i386-abi
ctl ./probe i386 >"$OUT" 2>&1
if ! grep -q '^ok' "$OUT"; then
	skip "$CASE" "this kernel has no i386 entry point to test ($(head -n 1 "$OUT"))"
elif cage_started enforce-fs ./probe i386; then
	if [ $RC -eq 159 ] && ! grep -q '^ok' "$OUT"; then pass "$CASE"; else fail "$CASE" "status $RC, expected 159 (SIGSYS)"; fi
fi

# sock_case NAME PROBE-ARGS...: a listener started outside answers the
# probe without cagerun; under cagerun, in both modes, it is not reached.
sock_case() {
	name=$1
	shift
	CASE=$name
	ctl ./probe "$@" >"$OUT" 2>&1
	grep -q qual-hello "$OUT" || { fail "$CASE" "control: cannot connect without cagerun"; return; }
	for m in enforce-fs enforce; do
		CASE=$name/$m
		[ $m = enforce ] && ! needs proxy && continue
		cage_started $m ./probe "$@" || continue
		if grep -q qual-hello "$OUT"; then fail "$CASE" "connected"; else pass "$CASE"; fi
	done
}

# At a path the policy lets the command read (AF_UNIX sockets are not
# allowed by this policy), and in the abstract namespace.
if serve unix "$H/run/qual.sock"; then
	sock_case net/unix-path unix "$H/run/qual.sock"
else
	CASE=net/unix-path fail net/unix-path "the listener did not start"
fi
name=qual-abstract-$MARK
if serve abstract "$name"; then
	sock_case net/abstract-unix abstract "$name"
else
	CASE=net/abstract-unix fail net/abstract-unix "the listener did not start"
fi

# TCP to a loopback listener outside: open in enforce-fs (the documented
# meaning), no route in enforce.
CASE=net/tcp-loopback
if ! serve tcp; then
	fail "$CASE" "the listener did not start"
else
	TCPPORT=$ADDR
	ctl ./probe tcp "$TCPPORT" >"$OUT" 2>&1
	if ! grep -q qual-hello "$OUT"; then
		fail "$CASE" "control: cannot connect without cagerun"
	elif cage_started enforce-fs ./probe tcp "$TCPPORT" && ! grep -q qual-hello "$OUT"; then
		fail "$CASE" "enforce-fs should leave the network open"
	elif needs proxy && cage_started enforce ./probe tcp "$TCPPORT"; then
		if grep -q qual-hello "$OUT"; then fail "$CASE" "connected in enforce mode"; else pass "$CASE"; fi
	fi
fi

# UDP: loopback delivery happens during sendto, so once the outside
# "end" datagram is logged, one sent from inside earlier would be too.
CASE=net/udp-loopback
if ! serve udp; then
	fail "$CASE" "the listener did not start"
else
	UPORT=$ADDR ULOG=$SLOG
	ctl ./probe udp "$UPORT" control-$MARK >"$OUT" 2>&1
	wait_for "$ULOG"
	if ! grep -q "control-$MARK" "$ULOG"; then
		fail "$CASE" "control: the datagram did not arrive"
	elif needs proxy && cage_started enforce ./probe udp "$UPORT" inside-$MARK; then
		"$WS/probe" udp "$UPORT" end-$MARK >/dev/null
		i=0
		while ! grep -q "end-$MARK" "$ULOG" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
		if ! grep -q "end-$MARK" "$ULOG"; then
			fail "$CASE" "the closing datagram did not arrive"
		elif grep -q "inside-$MARK" "$ULOG"; then
			fail "$CASE" "a datagram from inside arrived"
		else
			pass "$CASE"
		fi
	fi
fi

# ---- through the proxy (enforce) --------------------------------------------

# net_cage CMD...: cagerun in enforce mode with net.cage, qual.test and
# denied.test resolved to the test server.
net_cage() {
	(cd "$WS" && env -i $ENVV timeout -s KILL $T "$CAGERUN" -p "$QDIR/policies/net.cage" \
		--profile net -D workspace="$WS" -D home="$H" -D port="$HPORT" -D fwdport="$FPORT" -D rport="$RPORT" \
		--resolve "qual.test:$HPORT:127.0.0.1" --resolve "denied.test:$HPORT:127.0.0.1" \
		--resolve "denied.test:443:127.0.0.1" --resolve "rebind.test:$RPORT:127.0.0.1" --mode enforce --quiet -- "$@") >"$OUT" 2>&1
	RC=$?
	[ $RC -eq 137 ] && echo "(cagerun was killed after $T s: it hung)" >>"$OUT"
	return 0
}
serve http && HPORT=$ADDR || HPORT=
serve http && FPORT=$ADDR || FPORT=
serve http && RPORT=$ADDR || RPORT=
CURL="curl -sS -m 20 -o /dev/null -w code=%{http_code}"

# proxy_control NAME HOST PORT: without cagerun, http://HOST:PORT/
# (HOST resolved to the local server) answers 200; true when the case can
# go on to its enforce part.
proxy_control() {
	CASE=$1
	[ -n "$3" ] || { fail "$CASE" "the HTTP server did not start"; return 1; }
	ctl $CURL --noproxy '*' --resolve "$2:$3:127.0.0.1" "http://$2:$3/" >"$OUT" 2>&1
	grep -q code=200 "$OUT" || { fail "$CASE" "control: no 200 without cagerun"; return 1; }
	needs proxy
}

if proxy_control proxy/allowed-name qual.test "$HPORT"; then
	net_cage $CURL "http://qual.test:$HPORT/"
	if grep -q code=200 "$OUT"; then pass "$CASE"; else fail "$CASE" "no 200 through the proxy"; fi
fi

if proxy_control proxy/denied-name denied.test "$HPORT"; then
	net_cage $CURL "http://denied.test:$HPORT/"
	if grep -q code=403 "$OUT"; then pass "$CASE"; else fail "$CASE" "not answered 403"; fi
fi

# Through the proxy, loopback addresses no IP rule names stay closed: a
# name the policy allows but that resolves to 127.0.0.1, and 127.0.0.1 or
# localhost on a port without a rule (asked of the proxy explicitly:
# no_proxy would send curl around it).
if proxy_control proxy/internal-address rebind.test "$RPORT"; then
	via="--noproxy '' -x \"\$http_proxy\""
	net_cage sh -c "$CURL http://rebind.test:$RPORT/; echo; $CURL $via http://127.0.0.1:$RPORT/; echo; $CURL $via http://localhost:$RPORT/; echo"
	if [ "$(grep -c code=403 "$OUT")" -ne 3 ]; then fail "$CASE" "not all three answered 403"; else pass "$CASE"; fi
fi

if proxy_control proxy/localhost-forward localhost "$FPORT"; then
	net_cage sh -c "$CURL --noproxy '*' http://localhost:$FPORT/; echo; $CURL --noproxy '*' http://127.0.0.1:$TCPPORT/; echo"
	if ! grep -q code=200 "$OUT"; then
		fail "$CASE" "the allowed port was not forwarded"
	elif [ "$(grep -c code=200 "$OUT")" -ne 1 ]; then
		fail "$CASE" "a port without a rule was reachable"
	else
		pass "$CASE"
	fi
fi

# ---- git ----------------------------------------------------------------------

# A repository whose own config names a credential helper and an askpass
# program that leave markers, and a pre-commit hook (made with the
# fixture) that leaves one.
CASE=git/no-hooks-helpers-askpass
(
	cd "$WS" && git config credential.helper "!touch $WS/helper-ran; true" &&
		printf '#!/bin/sh\ntouch "%s/askpass-ran"\n' "$WS" >askpass.sh && chmod 755 askpass.sh &&
		git config core.askPass "$WS/askpass.sh"
) >"$OUT" 2>&1
gitrun='echo y >> tracked && git commit -q -am change; git log --oneline | wc -l; git fetch "$1" </dev/null; echo fetch-done'
url=http://127.0.0.1:$HPORT/auth/repo.git
rm -rf "$F/copy" && cp -a "$WS" "$F/copy"
(cd "$F/copy" && env -i $ENVV GIT_TERMINAL_PROMPT=0 timeout -s KILL $T sh -c "$gitrun" sh "$url") >"$OUT" 2>&1
if [ -z "$HPORT" ] || [ ! -e "$WS/hook-ran" ] || [ ! -e "$WS/helper-ran" ] || [ ! -e "$WS/askpass-ran" ]; then
	fail "$CASE" "control: hook, helper and askpass did not all run without cagerun"
else
	rm -rf "$F/copy" "$WS/hook-ran" "$WS/helper-ran" "$WS/askpass-ran"
	if cage_started enforce-fs sh -c "$gitrun" sh "$url"; then
		if ! grep -q fetch-done "$OUT" || [ "$(sed -n 1p "$OUT" | tr -d ' ')" != 2 ]; then
			fail "$CASE" "the commit or the fetch did not finish (status $RC)"
		elif [ -e "$WS/hook-ran" ] || [ -e "$WS/helper-ran" ] || [ -e "$WS/askpass-ran" ]; then
			fail "$CASE" "ran: $(cd "$WS" && ls hook-ran helper-ran askpass-ran 2>/dev/null | tr '\n' ' ')"
		else
			pass "$CASE"
		fi
	fi
fi

CASE=git/fetch-denied-host
if needs proxy; then
	rm -f "$WS/helper-ran" "$WS/askpass-ran"
	net_cage sh -c 'git fetch https://denied.test/repo.git </dev/null; echo "fetch-status $?"'
	if ! grep -q 'fetch-status [1-9]' "$OUT"; then
		fail "$CASE" "the fetch did not fail promptly (status $RC)"
	elif [ -e "$WS/helper-ran" ] || [ -e "$WS/askpass-ran" ]; then
		fail "$CASE" "a credential helper or askpass ran"
	else
		pass "$CASE"
	fi
fi
(cd "$WS" && git config --unset credential.helper && git config --unset core.askPass && rm -f askpass.sh)

# ---- ordinary work ---------------------------------------------------------------

# work_case NAME PATTERN CMD...: CMD prints PATTERN both without and with
# cagerun and exits 0.
work_case() {
	CASE=$1 pat=$2
	shift 2
	ctl "$@" >"$OUT" 2>&1
	if [ $? -ne 0 ] || ! grep -q -- "$pat" "$OUT"; then fail "$CASE" "control failed"; return; fi
	cage_started enforce-fs "$@" || return
	if [ $RC -ne 0 ] || ! grep -q -- "$pat" "$OUT"; then fail "$CASE" "failed under cagerun (status $RC)"; return; fi
	pass "$CASE"
}

work_case work/pipeline 'A-B' sh -c 'printf "b\na\n" | sort > sorted && tr a-z A-Z < sorted | paste -sd- -; rm sorted'
printf 'all: hello2\nhello2: hello.c\n\tcc -o hello2 hello.c\n' >"$WS/Makefile"
work_case work/cc-make hello-from-c sh -c 'rm -f hello2 && make -s && ./hello2'
work_case work/git-local 'second' sh -c 'rm -rf r && git init -q r && cd r && echo a > a &&
	git add a && git -c user.name=q -c user.email=q@t commit -q -m first &&
	echo b >> a && git -c user.name=q -c user.email=q@t commit -q -am second && git log --oneline'
work_case work/socketpair pair-ok $PY -c 'import socket; a, b = socket.socketpair(); a.send(b"pair-ok"); print(b.recv(16).decode())'
printf 'const fs = require("fs");\nfs.writeFileSync("node-out", "n");\nconsole.log("node-ok " + fs.readFileSync("node-out"));\n' >"$WS/s.js"
if command -v node >/dev/null; then work_case work/node node-ok node s.js; else CASE=work/node skip work/node "node is not installed"; fi
printf 'import os, tempfile\nwith tempfile.NamedTemporaryFile() as f:\n    f.write(b"p")\nprint("python-ok", os.getcwd())\n' >"$WS/s.py"
work_case work/python3 python-ok $PY s.py
if command -v go >/dev/null; then
	mkdir -p "$WS/gomod"
	printf 'module qual.test/m\n\ngo 1.19\n' >"$WS/gomod/go.mod"
	printf 'package main\n\nimport "fmt"\n\nfunc Add(a, b int) int { return a + b }\n\nfunc main() { fmt.Println("go-ok", Add(1, 2)) }\n' >"$WS/gomod/main.go"
	printf 'package main\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("add")\n\t}\n}\n' >"$WS/gomod/main_test.go"
	gocmd='cd gomod && export GOCACHE="$TMPDIR/gocache" GOPATH="$TMPDIR/gopath" GOPROXY=off GOTOOLCHAIN=local GOFLAGS= && go build -o m . && ./m && go test ./...'
	# The control's caches go to a directory of its own.
	work_case work/go 'go-ok 3' sh -c "TMPDIR=\${TMPDIR:-$F/gotmp}; mkdir -p \$TMPDIR; $gocmd"
else
	skip work/go "go is not installed (Debian golang-go)"
fi

# Output reaches the caller while the command still runs: the command
# prints a line, then waits (bounded) for the test to answer it.
CASE=work/streaming
rm -f "$WS/go-on" "$F/stream"
cage enforce-fs sh -c 'echo early; i=0; while [ ! -e go-on ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; echo late' >"$F/stream" 2>&1 &
job=$!
if wait_for "$F/stream" && grep -q early "$F/stream" && ! grep -q late "$F/stream"; then
	touch "$WS/go-on"
	wait $job
	if grep -q late "$F/stream"; then pass "$CASE"; else fail "$CASE" "no second line"; fi
else
	wait $job
	cp "$F/stream" "$OUT"
	fail "$CASE" "the first line did not arrive while the command ran"
fi
rm -f "$WS/go-on"

# ---- fail closed --------------------------------------------------------------------

# closed_case NAME WANT CAGERUN-ARGS...: cagerun exits WANT and the
# command (touch marker) never ran.
closed_case() {
	CASE=$1 want=$2
	shift 2
	rm -f "$WS/closed-marker"
	(cd "$WS" && env -i $ENVV timeout -s KILL $T "$CAGERUN" "$@") >"$OUT" 2>&1
	RC=$?
	if [ $RC -ne "$want" ]; then
		fail "$CASE" "status $RC, expected $want"
	elif [ -e "$WS/closed-marker" ]; then
		fail "$CASE" "the command ran"
	else
		pass "$CASE"
	fi
}
P="-p $QDIR/policies/qual.cage --profile qual"
TOUCH="-- touch $WS/closed-marker"
CASE=closed/control
cage enforce-fs touch "$WS/closed-marker" >"$OUT" 2>&1
if [ -e "$WS/closed-marker" ]; then
	pass "$CASE" "the marker command works under the good policy"
	closed_case closed/bad-policy 125 -p "$QDIR/policies/bad.cage" -D workspace="$WS" $TOUCH
	closed_case closed/missing-p 125 -D workspace="$WS" -D home="$H" $TOUCH
	closed_case closed/missing-param 125 $P -D home="$H" $TOUCH
	closed_case closed/unknown-param 125 $P -D workspace="$WS" -D home="$H" -D nosuch=1 $TOUCH
	closed_case closed/nonexistent-workspace 125 $P -D workspace="$F/nonexistent" -D home="$H" $TOUCH
	closed_case closed/mode-monitor-log 125 $P -D workspace="$WS" -D home="$H" --mode monitor \
		--log "$F/nonexistent/log" $TOUCH
	closed_case closed/mode-unknown 125 $P -D workspace="$WS" -D home="$H" --mode permissive $TOUCH
	closed_case closed/plan-refused 125 -p "$QDIR/policies/badplan.cage" --profile badplan \
		-D workspace="$WS" -D home="$H" $TOUCH
	closed_case closed/command-not-found 127 $P -D workspace="$WS" -D home="$H" --mode enforce-fs \
		-- qual-no-such-command-$MARK
	printf 'touch closed-marker\n' >"$WS/not-exec.sh"
	closed_case closed/not-executable 126 $P -D workspace="$WS" -D home="$H" --mode enforce-fs \
		-- ./not-exec.sh
else
	fail "$CASE" "the marker command does not work under the good policy"
fi

# A path param with a `~` default that exists in HOME: the plan grants the
# expanded path (control: cagec), and cagerun runs with it.
CASE=closed/tilde-default-param
mkdir -p "$H/qual-cache"
(cd "$WS" && env -i $ENVV "$CAGEC" "$QDIR/policies/tilde.cage" --profile tilde -D workspace="$WS" \
	-D home="$H" --emit linux) >"$OUT" 2>&1
if ! grep -q "^grant $H/qual-cache " "$OUT"; then
	fail "$CASE" "control: cagec does not grant $H/qual-cache"
else
	(cd "$WS" && env -i $ENVV timeout -s KILL $T "$CAGERUN" -p "$QDIR/policies/tilde.cage" --profile tilde \
		-D workspace="$WS" -D home="$H" --mode enforce-fs --quiet -- sh -c 'echo x > "$1/f"' sh "$H/qual-cache") >"$OUT" 2>&1
	RC=$?
	if [ $RC -ne 0 ] || [ ! -s "$H/qual-cache/f" ]; then fail "$CASE" "status $RC"; else pass "$CASE"; fi
fi

# ---- the shipped examples ------------------------------------------------------------

# The examples' workspace is a git repository: the examples that deny
# writing .git/hooks say that is so nothing runs on the next commit
# outside the cage. plant redirects git's hooks to a directory of the
# workspace through .git/config; the control shows that a commit outside
# then runs the planted hook.
EXWS=$F/params/workspace
mkdir -p "$EXWS"
(cd "$EXWS" && git init -q . && echo a >a && git add a &&
	git -c user.name=q -c user.email=q@t -c core.hooksPath=/dev/null commit -q -m a) >"$OUT" 2>&1
plant='mkdir -p .githooks && printf "#!/bin/sh\ntouch \"%s\"\n" "$1" > .githooks/pre-commit &&
	chmod +x .githooks/pre-commit && git config core.hooksPath .githooks'
# commit_outside DIR: a commit as the user makes it, outside the sandbox.
commit_outside() {
	(cd "$1" && echo b >>a && env -i $ENVV git -c user.name=q -c user.email=q@t commit -q -am b) >>"$OUT" 2>&1
}
rm -rf "$F/copy" && cp -a "$EXWS" "$F/copy"
(cd "$F/copy" && sh -c "$plant" sh "$F/planted-ctl") >"$OUT" 2>&1
commit_outside "$F/copy"
[ -e "$F/planted-ctl" ] && PLANT_CTL=ok || PLANT_CTL=
rm -rf "$F/copy"

# The guard's attacks: write a .envrc, add .vscode/tasks.json, agent
# settings, move .git aside and plant hooks in a new one, replace
# .git/config by a rename. attack_left names what took effect.
attack='echo x >.envrc; mkdir -p .vscode && echo {} >.vscode/tasks.json;
mkdir -p .claude && echo {} >.claude/settings.json; echo {} >.mcp.json;
mv .git/hooks .git/hooks-old; echo "[core]" >.git/config.new && mv .git/config.new .git/config;
mv .git .git-old && mkdir -p .git/hooks && echo x >.git/hooks/pre-commit; true'
attack_left() {
	for x in .envrc .vscode/tasks.json .claude/settings.json .mcp.json .git-old .git/hooks-old; do
		[ -e "$1/$x" ] && printf ' %s' "$x"
	done
}
rm -rf "$F/copy" && cp -a "$EXWS" "$F/copy"
cfg_ctl=$(cat "$F/copy/.git/config" 2>/dev/null | cksum)
(cd "$F/copy" && sh -c "$attack") >"$OUT" 2>&1
[ "$(attack_left "$F/copy")" = " .envrc .vscode/tasks.json .claude/settings.json .mcp.json .git-old" ] &&
	[ "$(cat "$F/copy/.git/config" 2>/dev/null | cksum)" != "$cfg_ctl" ] && ATTACK_CTL=ok || ATTACK_CTL=
rm -rf "$F/copy"

for ex in "$SRC"/examples/*.cage; do
	CASE=examples/$(basename "$ex" .cage)
	set --
	# std/guard declares the param workspace for the examples that import it
	guarded=
	grep -q '^import "std/guard"' "$ex" && guarded=workspace
	for p in $(sed -n 's/^param[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]*:[[:space:]]*path.*/\1/p' "$ex") $guarded; do
		mkdir -p "$F/params/$p"
		set -- "$@" -D "$p=$F/params/$p"
	done
	# Nothing the examples deny is created beforehand: the workspace is a
	# fresh repository without .envrc, .vscode, .claude and the like, as a
	# user's is (cagerun's create guard keeps those names from appearing).
	name=$CASE
	for m in enforce-fs enforce; do
		CASE=$name/$m
		[ $m = enforce ] && ! needs proxy && continue
		(cd "$WS" && env -i $ENVV timeout -s KILL $T "$CAGERUN" -p "$ex" "$@" --mode $m --quiet -- true) >"$OUT" 2>&1
		RC=$?
		if [ $RC -eq 0 ]; then pass "$CASE"; else fail "$CASE" "status $RC"; fi
	done
	grep -q 'deny write "{workspace}/.git/hooks/\*\*"' "$ex" || [ -n "$guarded" ] || continue
	CASE=$name/hooks-path-planted
	if [ -z "$PLANT_CTL" ]; then
		fail "$CASE" "control: a hook planted through .git/config did not run outside"
		continue
	fi
	rm -f "$F/planted"
	(cd "$EXWS" && env -i $ENVV timeout -s KILL $T "$CAGERUN" -p "$ex" "$@" --mode enforce-fs --quiet -- \
		sh -c "echo qual-started; $plant" sh "$F/planted") >"$OUT" 2>&1
	commit_outside "$EXWS"
	if ! grep -q qual-started "$OUT"; then
		fail "$CASE" "the command did not start"
	elif [ -e "$F/planted" ]; then
		fail "$CASE" "a commit outside ran a hook the command planted through .git/config"
	else
		pass "$CASE"
	fi
	(cd "$EXWS" && git config --unset core.hooksPath; rm -rf .githooks) >/dev/null 2>&1
	# What std/guard keeps, attacked from inside: each attempt is shown
	# to work without cagerun on a copy first.
	[ -n "$guarded" ] || continue
	CASE=$name/guarded-files
	if [ -z "$ATTACK_CTL" ]; then
		fail "$CASE" "control: the attacks did not work without cagerun"
		continue
	fi
	cfg_before=$(cat "$EXWS/.git/config" 2>/dev/null | cksum)
	(cd "$EXWS" && env -i $ENVV timeout -s KILL $T "$CAGERUN" -p "$ex" "$@" --mode enforce-fs --quiet -- \
		sh -c "echo qual-started; $attack") >"$OUT" 2>&1
	left=$(attack_left "$EXWS")
	if ! grep -q qual-started "$OUT"; then
		fail "$CASE" "the command did not start"
	elif [ -n "$left" ] || [ "$(cat "$EXWS/.git/config" 2>/dev/null | cksum)" != "$cfg_before" ] ||
		[ ! -f "$EXWS/.git/hooks/pre-commit.sample" ]; then
		fail "$CASE" "the command changed what std/guard keeps:$left"
	else
		pass "$CASE"
	fi
	(cd "$EXWS" && rm -rf .envrc .vscode .claude .mcp.json .git-old .gitmodules .idea) >/dev/null 2>&1
done

# Every run above (but the one killed on purpose) removed its private
# directory; env/private-tmpdir showed they are made in $F/tmp.
CASE=proc/leases-removed
left=$(cd "$F/tmp" && ls -d cage-tmp.* cage-run.* 2>/dev/null | tr '\n' ' ')
if [ -n "$left" ]; then fail "$CASE" "left in \$TMPDIR: $left"; else pass "$CASE"; fi

echo "$SKIPPED skipped"
echo "$PASS passed, $FAILED failed"
[ $FAILED -eq 0 ]
