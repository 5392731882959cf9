#!/bin/sh
# guard.sh - cagerun's create guard (docs/security-model.md, "The create
# guard") with the policy testsuite/qual/policies/guard.cage, in a
# workspace that has none of the names it denies.
#
#   guard.sh CAGERUN SRCDIR
#
# Attacks: each first runs WITHOUT cagerun in a fresh workspace, where it
# must create the name (a control that fails fails the case), then under
# cagerun in another fresh workspace, where the command must start and the
# name must not exist afterwards. Ordinary work: the same script must
# succeed and leave the same result with and without cagerun.
#
# Also the session report: cagerun lists, at exit, the git repositories
# the run created in the workspace (and only those), not with --quiet.
#
# Prints PASS/FAIL per case and a closing "N passed, N failed" line; exits
# 1 on any failure. Run as root and as an unprivileged user (CTest does
# both, through testsuite/linux/as_user.sh).
set -u
[ $# -eq 2 ] || { echo "usage: guard.sh CAGERUN SRCDIR" >&2; exit 2; }
CAGERUN=$1 SRC=$2
POLICY=$SRC/testsuite/qual/policies/guard.cage
SYSPATH=/usr/local/bin:/usr/bin:/bin
T=60
base=$(mktemp -d "${TMPDIR:-/tmp}/cage-guard.XXXXXX") || exit 1
trap 'chmod -R u+rwX "$base" 2>/dev/null; rm -rf "$base"' EXIT
trap 'exit 1' INT TERM HUP
F=$(cd "$base" && pwd -P)
WS=$F/ws OUT=$F/out
mkdir "$F/tmp"
ENVV="PATH=$SYSPATH LANG=C.UTF-8 HOME=$F TMPDIR=$F/tmp"
STARTED=guard-started FAIL_LINES=15
. "$SRC/testsuite/lib/attack.sh"

# fresh [SETUP]: an empty workspace, then SETUP run in it.
fresh() {
	chmod -R u+rwX "$WS" 2>/dev/null
	rm -rf "$WS" && mkdir "$WS" || exit 1
	[ -z "${1:-}" ] || (cd "$WS" && env -i $ENVV sh -c "$1") >/dev/null 2>&1
}
ctl() { (cd "$WS" && env -i $ENVV timeout -s KILL $T sh -c "$1"); }
cage() {
	(cd "$WS" && env -i $ENVV timeout -s KILL $T "$CAGERUN" -p "$POLICY" \
		-D workspace="$WS" --quiet -- sh -c "echo guard-started; $1")
}

# attack CASE SETUP SCRIPT CHECK [MARK]: CHECK (a shell test, run in the
# workspace) is true when the attack worked; MARK, when given, must be in
# the output under cagerun too (the attacking program did run). Each run
# in a fresh workspace with SETUP done in it.
fresh_setup() { fresh "$SETUP"; }
attack() {
	SETUP=$2
	run_attack "$1" "$3" "$4" "${5:-}" fresh_setup cage
}

# work CASE SETUP SCRIPT: SCRIPT succeeds, and prints the same, with and
# without cagerun.
work() {
	c=$1 setup=$2 script=$3
	fresh "$setup"
	if ! ctl "$script" >"$OUT.ctl" 2>&1; then
		cp "$OUT.ctl" "$OUT"
		fail "$c" "control: the script failed without cagerun"
		return
	fi
	fresh "$setup"
	cage "$script" >"$OUT" 2>&1
	rc=$?
	grep -v '^guard-started$' "$OUT" >"$OUT.cage"
	if [ $rc -ne 0 ]; then
		fail "$c" "failed under cagerun (status $rc)"
	elif ! cmp -s "$OUT.ctl" "$OUT.cage"; then
		diff "$OUT.ctl" "$OUT.cage" >"$OUT"
		fail "$c" "output differs under cagerun"
	else
		pass "$c"
	fi
}

PROBE=$F/guardprobe
if ! cc -O1 -pthread -o "$PROBE" "$SRC/testsuite/qual/guardprobe.c" >"$OUT" 2>&1; then
	fail "setup" "cannot compile guardprobe.c"
	echo "$PASS passed, $FAILED failed"
	exit 1
fi

EX='test -e .envrc -o -L .envrc'
# ---- attacks: a name the policy denies, created some way --------------
attack redirect '' 'echo x > .envrc' "$EX"
attack touch '' 'touch .envrc' "$EX"
attack cp '' 'echo x > a && cp a .envrc' "$EX"
attack symlink '' 'ln -s /etc/passwd .envrc' "$EX"
attack hardlink '' 'echo x > a && ln a .envrc' "$EX"
attack mv-file '' 'echo x > a && mv a .envrc' "$EX"
attack dangling-link '' 'ln -s .envrc lure && echo x > lure' "$EX"
attack link-chain '' 'mkdir d && ln -s ../.envrc d/l1 && ln -s d/l1 l2 && echo x > l2' "$EX"
attack vscode-dir '' 'mkdir .vscode' 'test -e .vscode'
attack vscode-tasks '' 'mkdir -p .vscode && echo {} > .vscode/tasks.json' 'test -e .vscode/tasks.json'
attack vscode-moved '' 'mkdir v && echo {} > v/tasks.json && mv v .vscode' 'test -e .vscode/tasks.json'
attack claude-settings '' 'mkdir -p .claude && echo {} > .claude/settings.json' \
	'test -e .claude/settings.json'
attack claude-moved-dir '' 'mkdir d && echo {} > d/settings.json && mv d .claude' \
	'test -e .claude/settings.json'
attack claude-symlinked-dir '' 'mkdir d && echo {} > d/settings.json && ln -s d .claude' \
	'test -e .claude/settings.json'
attack git-hooks '' 'mkdir -p .git/hooks && echo x > .git/hooks/pre-commit' \
	'test -e .git/hooks/pre-commit'
attack git-config '' 'mkdir -p .git && echo x > .git/config' 'test -e .git/config'
attack git-file '' 'echo "gitdir: elsewhere" > .git' 'test -e .git'
attack git-renamed-back 'mkdir .git && echo ref > .git/HEAD' \
	'mv .git .git-old && mkdir -p .git-old/hooks && echo x > .git-old/hooks/pre-commit && mv .git-old .git' \
	'test -e .git/hooks/pre-commit'
attack git-config-replaced 'mkdir .git && echo orig > .git/config' \
	'echo evil > c2 && mv c2 .git/config' 'grep -q evil .git/config'
attack submodule-hooks '' \
	'mkdir -p .git/modules/sub/hooks && echo x > .git/modules/sub/hooks/post-checkout' \
	'test -e .git/modules/sub/hooks/post-checkout'
attack submodule-hooks-moved '' \
	'mkdir -p .git/modules/sub h/hooks && echo x > h/hooks/post-checkout && mv h .git/modules/sub/deeper' \
	'test -e .git/modules/sub/deeper/hooks/post-checkout'
# The probe is copied into the workspace, where the policy lets it run.
for m in openat creat mknod symlinkat linkat procself tmpfile race; do
	attack "c-$m" "cp $PROBE gp" "./gp $m && echo probe-ran" "$EX" probe-ran
done
attack c-renameat2 "cp $PROBE gp" './gp renameat2 && echo probe-ran' \
	'test -e .claude/settings.json' probe-ran
attack c-exchange "cp $PROBE gp" './gp exchange && echo probe-ran' \
	'test -e .claude/settings.json' probe-ran

# ---- ordinary work: exactly as without cagerun -------------------------
# ---- links in a protect's tree, excepts included ----------------------
ST='mkdir -p state/log && echo "{}" > state/history.jsonl'
attack link-over-except "$ST" 'rm -f state/history.jsonl && ln -s /etc/passwd state/history.jsonl' \
	'test -L state/history.jsonl'
attack link-in-except-tree "$ST" 'ln -s /etc/passwd state/log/x' 'test -L state/log/x'
attack link-moved-in "$ST" 'ln -s /etc/passwd l && mv l state/log/m' 'test -L state/log/m'
attack link-exchanged-in "$ST && cp $PROBE gp" './gp xlink && echo probe-ran' \
	'test -L state/history.jsonl' probe-ran
attack hardlink-of-link "$ST" 'ln -s /etc/passwd l && ln -P l state/log/h' 'test -L state/log/h'
attack hardlink-from-outside "$ST" 'echo x > a && ln a state/log/a2' 'test -e state/log/a2'
work except-writable "$ST" 'echo a >> state/history.jsonl && mkdir -p state/log/d &&
echo b > state/log/d/f && mv state/log/d/f state/log/d/g && ln state/log/d/g state/log/d/h &&
cat state/history.jsonl state/log/d/h'

work every-level '' 'mkdir -p a/b/c && touch a/x a/b/y a/b/c/z .other && mkdir .claude .git-like &&
	touch .claude/other.json && echo x > .envrc.example && ln -s a lnk && ln a/x hard &&
	mv a/x a/moved && find . | sort'
work git-new-folder '' 'git init -q r && cd r && echo x > f && git add f &&
	git -c user.name=t -c user.email=t@t commit -qm first && git branch b2 && git branch &&
	git log --format=%s && git status --short && cd .. && git clone -q r r2 && cat r2/f'
work cc-make '' 'printf "int main(void){return 0;}\n" > m.c &&
	printf "all: m\nm: m.c\n\tcc -o m m.c\n" > Makefile && make -s && ./m && echo built'
work dev-null-stdout '' 'echo a > /dev/null && (echo b > /dev/stdout) | cat && echo c >> /dev/null'
work fifo '' 'mkfifo p && { cat p > got & } && echo data > p && wait && cat got'
work umask '' 'umask 077 && touch u7 && mkdir d7 && mkfifo f7 && umask 022 && touch u2 &&
	mkdir d2 && stat -c "%n %a" u7 d7 f7 u2 d2'
work c-umask "cp $PROBE gp" './gp umask'
work c-ownfiles "cp $PROBE gp" './gp ownfiles'
work symlink-followed '' 'ln -s target.txt lnk && echo x > lnk && cat target.txt'
work proc-self-last '' '(echo x > /proc/self) 2>/dev/null; echo $?; (echo y > /proc/self/fd/1) | cat'
work exclusive-exists '' 'touch e && (set -C; echo x > e) 2>/dev/null; echo $?'

# ---- an existing folder a protect holds but for its excepts ------------
# (the grant's root too, as Claude Code's ~/.claude is): mkdir over it and
# over an excepted folder in it fails with EEXIST as outside (the kernel
# answers so before any permission check, and so does the guard: a
# recursive mkdir relies on it), while a new name there is refused; the
# control makes it.
XP=$F/except.cage
cat >"$XP" <<'EOF'
cage 1
param workspace : path
profile p {
    mode enforce-fs
    allow read exec "/usr/**", "/etc/**"
    allow read "/proc/**", "/dev/**"
    allow read write "/dev/null", "/dev/tty"
    allow read exec "{workspace}/**"
    allow read write "{workspace}/state/**"
    protect write "{workspace}/state/**" except "{workspace}/state/ok/**"
    env keep PATH LANG
}
EOF
XS='mkdir state 2>&1 | grep -q "File exists" && mkdir state/ok 2>&1 | grep -q "File exists" &&
mkdir -p state/ok && echo y > state/ok/f && echo mkdir-ok
if mkdir state/new 2>/dev/null; then echo new-made; else echo new-refused; fi'
fresh 'mkdir -p state/ok && echo x > state/keep'
ctl "$XS" >"$OUT" 2>&1
if [ "$(tr '\n' ' ' <"$OUT")" != "mkdir-ok new-made " ]; then
	fail exists-under-except "control: without cagerun"
else
	fresh 'mkdir -p state/ok && echo x > state/keep'
	(cd "$WS" && env -i $ENVV timeout -s KILL $T "$CAGERUN" -p "$XP" -D workspace="$WS" --quiet \
		-- sh -c "$XS") >"$OUT" 2>&1
	if [ "$(tr '\n' ' ' <"$OUT")" = "mkdir-ok new-refused " ]; then
		pass exists-under-except
	else
		fail exists-under-except "mkdir -p over existing names, or the refusal of a new one"
	fi
fi

# ---- the session report: repositories the run created -------------------
report() {
	(cd "$WS" && env -i $ENVV timeout -s KILL $T "$CAGERUN" -p "$POLICY" \
		-D workspace="$WS" "$@" -- sh -c 'git init -q new && mkdir -p x/y &&
		echo "gitdir: ../../new/.git" > x/y/.git && git init -q old/inner')
}
fresh 'git init -q old'
report >"$OUT" 2>&1
if [ ! -d "$WS/new/.git" ] || [ ! -f "$WS/x/y/.git" ]; then
	fail session-report "the run did not create the repositories"
elif ! grep -q "^cagerun:   $WS/new/.git\$" "$OUT" || ! grep -q "^cagerun:   $WS/x/y/.git\$" "$OUT" ||
	! grep -q "^cagerun:   $WS/old/inner/.git\$" "$OUT"; then
	fail session-report "a new repository is not listed"
elif grep -q "^cagerun:   $WS/old/.git\$" "$OUT"; then
	fail session-report "a repository that was there before is listed"
else
	pass session-report
fi
fresh 'git init -q old'
report --quiet >"$OUT" 2>&1
if [ ! -d "$WS/new/.git" ]; then
	fail session-report-quiet "the run did not create the repository"
elif grep -q "repositories" "$OUT"; then
	fail session-report-quiet "--quiet still lists repositories"
else
	pass session-report-quiet
fi

# The walk at exit is left out only when the guard saw no name .git made
# and no directory moved (lnx_guard.h, struct lnx_guard_seen). --verbose
# says when it is left out; each case says whether it may be.
walk_case() { # walk_case NAME walked|skipped SCRIPT [LISTED]
	fresh
	(cd "$WS" && env -i $ENVV timeout -s KILL $T "$CAGERUN" -p "$POLICY" \
		-D workspace="$WS" --verbose -- sh -c "$3") >"$OUT" 2>&1
	if [ "$2" = skipped ] && ! grep -q "not walked" "$OUT"; then
		fail "$1" "the walk was made after a run that made no .git and moved no directory"
	elif [ "$2" = walked ] && grep -q "not walked" "$OUT"; then
		fail "$1" "the walk was left out"
	elif [ -n "${4:-}" ] && ! grep -q "^cagerun:   $WS/$4\$" "$OUT"; then
		fail "$1" "$WS/$4 is not listed"
	else
		pass "$1"
	fi
}
walk_case report-walk-left-out skipped 'echo a > f && mv f g && mkdir -p d/e && ln -s g d/l && rm g'
walk_case report-walk-mkdir walked 'mkdir -p a/.git' a/.git
walk_case report-walk-case walked 'mkdir -p a/.GIT'
walk_case report-walk-dir-moved walked 'mkdir -p a/b && mv a c'
walk_case report-walk-gitfile-renamed walked \
	'mkdir -p a && echo "gitdir: ../x" > a/f && mv a/f a/.git' a/.git
walk_case report-walk-gitfile-linked walked \
	'mkdir -p a && echo "gitdir: ../x" > f && ln f a/.git' a/.git
walk_case report-walk-symlink walked 'ln -s x .git'

# ---- the supervisor's own needs do not depend on the policy --------------
# std/guard in a policy without `read /proc/**`: the supervisor reads
# /proc/TID/status of the command's threads through a reader of its own
# (lnx_notify_status_reader), so creating and appending in the workspace
# work, guarded names are still refused, and the command still cannot
# read /proc.
POLICY_MAIN=$POLICY
POLICY=$SRC/testsuite/qual/policies/guard-noproc.cage
work noproc-create-append '' \
	'echo a > new && echo b >> new && mkdir -p d/e && echo c > d/e/f && cat new d/e/f'
work noproc-append-existing 'echo a > old' 'echo b >> old && cat old'
attack noproc-git-hooks '' 'mkdir -p .git/hooks && echo x > .git/hooks/pre-commit' \
	'test -e .git/hooks/pre-commit'
attack noproc-envrc '' 'echo x > .envrc' "$EX"
attack noproc-proc-stays-denied '' 'cat /proc/self/status > st' 'test -s st'
POLICY=$POLICY_MAIN

# ---- fail closed: the supervisor killed from outside ---------------------
# cagerun -> init (which serves the guard) -> command: the control lets the
# command finish (status 0); then init is killed while the command runs,
# and the run must stop with 125 and say why.
#
# Init is found by its place in that chain, read from /proc/PID/status
# (Name, Pid, PPid; readable for every process of the user): a child of
# this cagerun named cagerun, whose child is the command's sh. Both must
# be seen, in a bounded wait, before anything is killed; an init that
# cannot be identified or signalled fails the case instead of letting the
# command finish.
proc_table() {
	cat /proc/[0-9]*/status 2>/dev/null |
		awk '/^Name:/ { n = $2 } /^Pid:/ { p = $2 } /^PPid:/ { print p, $2, n }'
}
child_named() { # table parent name
	printf '%s\n' "$1" | awk -v par="$2" -v nm="$3" '$2 == par && $3 == nm { print $1; exit }'
}
SUP_WHY=
sup_case() {
	fresh
	(cd "$WS" && exec env -i $ENVV "$CAGERUN" -p "$POLICY" -D workspace="$WS" --quiet \
		-- sh -c "echo guard-started; sleep $1; echo survived > after") >"$OUT" 2>&1 &
	run=$!
	SUP_WHY=
	if [ "$2" = kill ]; then
		sup= i=0
		while [ $i -lt 200 ]; do
			if grep -q '^guard-started$' "$OUT" 2>/dev/null; then
				t=$(proc_table)
				s=$(child_named "$t" $run cagerun)
				if [ -n "$s" ] && [ -n "$(child_named "$t" "$s" sh)" ]; then
					sup=$s
					break
				fi
			fi
			sleep 0.05
			i=$((i + 1))
		done
		if [ -z "$sup" ]; then
			SUP_WHY="the supervisor (cagerun -> init -> sh) was not found"
		elif ! kill -KILL "$sup"; then
			SUP_WHY="cannot signal the supervisor $sup"
		fi
	fi
	wait $run
	RC=$?
}
sup_case 1 none
if [ $RC -ne 0 ] || [ ! -e "$WS/after" ]; then
	fail supervisor-killed "control: the command did not finish under cagerun (status $RC)"
else
	sup_case 20 kill
	if [ -n "$SUP_WHY" ]; then
		fail supervisor-killed "$SUP_WHY (status $RC)"
	elif [ $RC -ne 125 ]; then
		fail supervisor-killed "status $RC, expected 125"
	elif [ -e "$WS/after" ]; then
		fail supervisor-killed "the command went on after its supervisor died"
	elif ! grep -q "init was killed" "$OUT"; then
		fail supervisor-killed "cagerun did not say why it stopped"
	else
		pass supervisor-killed
	fi
fi

# ---- the supervisor is out of the command's reach -----------------------
# The command's Landlock domain is nested below the supervisor's (it
# enforces the supervisor's ruleset once more), and Landlock's signal scope
# (ABI 6, which mode enforce-fs requires) keeps a process from signalling
# one outside its own domain. The command's shell is the supervisor's
# child: it must be able to signal a process of its own, and not its
# parent. Control: without cagerun, the same shell signals its parent.
REACH='sleep 5 & own=$!; kill -0 $own && echo own-reached; kill $own
if kill -0 $PPID 2>/dev/null; then echo parent-reached; else echo parent-out-of-reach; fi'
fresh
ctl "$REACH" >"$OUT" 2>&1
if ! grep -q '^parent-reached$' "$OUT"; then
	fail supervisor-out-of-reach "control: the shell could not signal its parent without cagerun"
else
	fresh
	cage "$REACH" >"$OUT" 2>&1
	if grep -q '^own-reached$' "$OUT" && grep -q '^parent-out-of-reach$' "$OUT"; then
		pass supervisor-out-of-reach
	else
		fail supervisor-out-of-reach "the command could signal its supervisor, or not its own process"
	fi
fi

# ---- std/guard's git allowlist, under every shipped example ------------
# A fixture repository with a submodule whose name holds a '/' (its git
# directory is .git/modules/a/b; without core.worktree in its config,
# which git submodule update would rewrite: docs/stdlib.md) and a linked
# worktree w. Each attack
# first works on a fresh copy without cagerun, then must be refused on
# another under the example; ordinary git work must succeed under each.
# Examples in mode monitor observe and block nothing: skipped, and said.
GF=$F/gitfix
GH=$F/githome
G="git -c user.name=t -c user.email=t@t -c protocol.file.allow=always -c init.defaultBranch=main"
mkdir -p "$GH/.cache/go-build" "$GH/go" "$GH/datasets"
if ! env -i $ENVV sh -ec "
	$G init -q $F/gitsub && cd $F/gitsub && echo 1 > s && $G add s && $G commit -qm s1 &&
	echo 2 >> s && $G commit -qam s2 &&
	$G init -q $GF && cd $GF && echo f > f && $G add f && $G commit -qm init &&
	$G submodule add -q $F/gitsub a/b && $G commit -qm sub && $G worktree add -q w &&
	git -C a/b config --unset core.worktree &&
	test -f .git/modules/a/b/config && test -f .git/worktrees/w/commondir
" >"$OUT" 2>&1; then
	fail git-fixture "cannot build the fixture repository"
fi
gws() { chmod -R u+rwX "$WS" 2>/dev/null; rm -rf "$WS" && cp -a "$GF" "$WS" &&
	sed -i "s|$GF|$WS|g" "$WS/.git/worktrees/w/gitdir" "$WS/w/.git" 2>/dev/null; }
# Under the soft open-files limit the suite runs with (1024 as an
# ordinary user): cagerun raises its own for the examples' proxy.
gcage() {
	(cd "$WS" && env -i $ENVV HOME=$GH timeout -s KILL $T "$CAGERUN" -p "$1" \
		-D workspace="$WS" --quiet -- sh -c "echo guard-started; $2")
}
# gattack EXAMPLE CASE SCRIPT CHECK: an attack on the git fixture under a
# shipped example.
gattack() {
	run_attack "$2" "$3" "$4" "" gws gcage "$1"
}
GITWORK="set -e; m=\$(git symbolic-ref --short HEAD); git status --short >/dev/null
	echo x >> f && git add f && $G commit -qm c1
	git branch b1 && git checkout -q b1 && echo y > g && git add g && $G commit -qm c2
	git checkout -q \$m && $G merge -q --no-edit b1
	git checkout -q -b b2 HEAD~1 && echo z > h && git add h && $G commit -qm c3 &&
	$G rebase -q \$m
	echo s >> f && git stash -q && git stash pop -q && git checkout -q -- f
	git checkout -q \$m && $G cherry-pick b2 >/dev/null
	(cd w && echo w > wf && git add wf && $G commit -qm w1)
	git -C a/b checkout -q HEAD~1 && $G submodule update -q a/b &&
	test \"\$(git -C a/b rev-parse HEAD)\" = \"\$(git rev-parse HEAD:a/b)\"
	$G init -q newrepo && (cd newrepo && echo n > n && git add n && $G commit -qm n)
	$G clone -q newrepo cloned && cat cloned/n
	$G fetch -q ./cloned && git rev-parse --verify -q FETCH_HEAD >/dev/null
	$G tag -a -m t t1 && $G revert --no-edit HEAD >/dev/null
	$G bisect start HEAD HEAD~2 >/dev/null && $G bisect good >/dev/null && $G bisect reset >/dev/null 2>&1
	$G -c rerere.enabled=true checkout -q -b r1 && echo 1 > rr && git add rr && $G commit -qm r1 &&
	$G checkout -q \$m && echo 2 > rr && git add rr && $G commit -qm r2 &&
	! $G -c rerere.enabled=true merge -q r1 >/dev/null 2>&1 && $G merge --abort
	git pack-refs --all && git repack -adq && git gc -q && git log --format=%s | head -n 3
	echo git-work-done"
for ex in "$SRC"/examples/*.cage; do
	n=$(basename "$ex" .cage)
	if grep -q '^ *mode monitor' "$ex" && ! grep -q '^ *mode enforce' "$ex"; then
		echo "SKIP git-$n: mode monitor blocks nothing by design"
		continue
	fi
	gattack "$ex" "git-$n-commondir" 'echo "../evil" > .git/commondir' 'test -e .git/commondir'
	gattack "$ex" "git-$n-info-attributes" 'mkdir -p .git/info && echo "* filter=x" >> .git/info/attributes' \
		'grep -qs filter=x .git/info/attributes'
	gattack "$ex" "git-$n-submodule-config" \
		'printf "[core]\n\tfsmonitor = evil\n" >> .git/modules/a/b/config' \
		'grep -q evil .git/modules/a/b/config'
	gattack "$ex" "git-$n-submodule-hook" \
		'mkdir -p .git/modules/a/b/hooks && echo x > .git/modules/a/b/hooks/x' \
		'test -e .git/modules/a/b/hooks/x'
	gattack "$ex" "git-$n-worktree-commondir" 'echo evil > .git/worktrees/w/commondir' \
		'grep -q evil .git/worktrees/w/commondir'
	gattack "$ex" "git-$n-config-renamed" 'echo evil > c2 && mv c2 .git/config' \
		'grep -q evil .git/config'
	# by way of what the allowlist leaves writable
	gattack "$ex" "git-$n-commondir-via-objects" \
		'echo ../evil > .git/objects/c && mv .git/objects/c .git/commondir' 'test -e .git/commondir'
	gattack "$ex" "git-$n-commondir-via-link" \
		'ln -s ../commondir .git/objects/l && echo ../evil > .git/objects/l' \
		'test -e .git/commondir'
	gattack "$ex" "git-$n-hooks-via-refs" \
		'mkdir -p .git/refs/h && echo x > .git/refs/h/pre-commit && rm -rf .git/hooks && mv .git/refs/h .git/hooks' \
		'test -e .git/hooks/pre-commit'
	# Exactly as without cagerun: a warning git prints and survives
	# (an info/refs it could not update) fails the case too.
	gws
	if ! ctl "$GITWORK" >"$OUT.ctl" 2>&1 || ! grep -q '^git-work-done$' "$OUT.ctl"; then
		cp "$OUT.ctl" "$OUT"
		fail "git-$n-work" "control: the git work failed without cagerun"
		continue
	fi
	gws
	gcage "$ex" "$GITWORK" >"$OUT" 2>&1
	rc=$?
	grep -v '^guard-started$' "$OUT" >"$OUT.cage"
	if [ $rc -ne 0 ] || ! grep -q '^git-work-done$' "$OUT"; then
		fail "git-$n-work" "ordinary git work failed under cagerun (status $rc)"
	elif ! cmp -s "$OUT.ctl" "$OUT.cage"; then
		diff "$OUT.ctl" "$OUT.cage" >"$OUT"
		fail "git-$n-work" "git's output differs under cagerun"
	else
		pass "git-$n-work"
	fi
done

echo "$PASS passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
