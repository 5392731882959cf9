#!/bin/sh
# qual.sh - the launch-time git discovery (docs/security-model.md, "git
# discovered at launch") with the policy testsuite/gitscan/gitscan.cage:
# std/guard's git section, a writable workspace and a writable store.
#
#   qual.sh CAGERUN SRCDIR
#
# Attacks: each first runs WITHOUT cagerun on a fresh fixture, where it
# must work (a control that fails fails the case), then under cagerun on
# another fresh fixture, where the command must start and the change must
# not have happened. Ordinary git work (status, add, commit, branch) must
# succeed under cagerun in each kind of repository found. Run as root and
# as an unprivileged user (CTest does both, through linux/as_user.sh).
set -u
[ $# -eq 2 ] || { echo "usage: qual.sh CAGERUN SRCDIR" >&2; exit 2; }
CAGERUN=$1 SRC=$2
POLICY=$SRC/testsuite/gitscan/gitscan.cage
command -v git >/dev/null || { echo "SKIP: no git"; exit 0; }
T=60
base=$(mktemp -d "${TMPDIR:-/tmp}/cage-gsqual.XXXXXX") || exit 1
trap 'chmod -R u+rwX "$base" 2>/dev/null; rm -rf "$base"' EXIT
trap 'exit 1' INT TERM HUP
F=$(cd "$base" && pwd -P)
WS=$F/ws ST=$F/store OUT=$F/out
mkdir "$F/tmp"
ENVV="PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME=$F TMPDIR=$F/tmp"
STARTED=gs-started FAIL_LINES=20
. "$SRC/testsuite/lib/attack.sh"

# A repository with an identity; $1 its directory.
REPO='r() { git init -q "$1" && git -C "$1" config user.email t@example.invalid &&
	git -C "$1" config user.name t && echo one > "$1/f" && git -C "$1" add f &&
	git -C "$1" commit -qm one; }'
# fresh SETUP: empty workspace and store, then SETUP (sh, in the workspace).
fresh() {
	chmod -R u+rwX "$WS" "$ST" 2>/dev/null
	rm -rf "$WS" "$ST" && mkdir "$WS" "$ST" || exit 1
	(cd "$WS" && env -i $ENVV sh -c "$REPO; $1") >"$OUT.setup" 2>&1 ||
		{ cat "$OUT.setup"; echo "setup failed: $1"; exit 1; }
}
ctl() { (cd "$WS" && env -i $ENVV timeout -s KILL $T sh -c "$1"); }
# The policy file as written (-p), or cagerun's own layers when LAYERS=1.
LAYERS=0
cage() {
	if [ $LAYERS = 1 ]; then
		# The layers run in mode enforce, with the proxy, under the
		# soft open-files limit the suite runs with (cagerun raises
		# its own).
		(cd "$WS" &&
			env -i $ENVV timeout -s KILL $T "$CAGERUN" --quiet -- \
			sh -c "echo gs-started; $1")
	else
		(cd "$WS" && env -i $ENVV timeout -s KILL $T "$CAGERUN" -p "$POLICY" \
			-D workspace="$WS" -D store="$ST" --quiet -- sh -c "echo gs-started; $1")
	fi
}

# attack CASE SETUP SCRIPT CHECK: CHECK (sh, in the workspace) is true
# when the attack worked; each run on a fresh fixture with SETUP done.
fresh_setup() { fresh "$SETUP"; }
attack() {
	SETUP=$2
	run_attack "$1" "$3" "$4" "" fresh_setup cage
}

# work CASE SETUP SCRIPT: SCRIPT succeeds under cagerun.
work() {
	c=$1 setup=$2 script=$3
	fresh "$setup"
	if ! ctl "$script" >"$OUT" 2>&1; then
		fail "$c" "control: the script failed without cagerun"
		return
	fi
	fresh "$setup"
	if cage "$script" >"$OUT" 2>&1; then
		pass "$c"
	else
		fail "$c" "failed under cagerun (status $?)"
	fi
}

# shown CASE SETUP PATTERN: cagerun --show lists PATTERN under discovered.
shown() {
	c=$1 setup=$2 pat=$3
	fresh "$setup"
	(cd "$WS" && env -i $ENVV "$CAGERUN" -p "$POLICY" -D workspace="$WS" -D store="$ST" \
		--show) >"$OUT" 2>&1
	if sed -n '/^discovered:/,$p' "$OUT" | grep -q -- "$pat"; then
		pass "$c"
	else
		fail "$c" "--show does not list $pat"
	fi
}

HUSKY='r . && mkdir -p .husky/_ && echo "exit 0" > .husky/_/pre-commit &&
	echo "exit 0" > .husky/pre-commit && git config core.hooksPath .husky/_'
FSM='r . && mkdir tools && printf "#!/bin/sh\nexit 1\n" > tools/fsm.sh && chmod +x tools/fsm.sh &&
	git config core.fsmonitor ./tools/fsm.sh'
INC='r . && git config include.path ../gitconfig.local && echo "[user]" > gitconfig.local'
INC_MISSING='r . && git config --add include.path ../extra/more.cfg'
NESTED='r . && r sub && mkdir -p sub/.git/hooks'
DEEP='r . && mkdir -p a/b/c && r a/b/c/deep'
INNER_WT='r . && git worktree add -q inner'
LINKED="r $ST/main && git -C $ST/main worktree add -q $WS/wt && cd $WS/wt && git config user.name t"
SUBMOD="r $ST/lib && r . && git -c protocol.file.allow=always submodule -q add $ST/lib a/b &&
	git commit -qm sub"
BARE='git init -q --bare .'

attack husky-hook "$HUSKY" 'echo "touch /tmp/x" > .husky/_/pre-commit' 'grep -q touch .husky/_/pre-commit'
attack husky-new-hook "$HUSKY" 'echo evil > .husky/_/post-checkout' 'test -e .husky/_/post-checkout'
attack husky-script "$HUSKY" 'echo evil >> .husky/pre-commit' 'grep -q evil .husky/pre-commit'
attack fsmonitor "$FSM" 'echo evil >> tools/fsm.sh' 'grep -q evil tools/fsm.sh'
attack fsmonitor-replaced "$FSM" 'echo evil > t2 && mv t2 tools/fsm.sh' 'grep -q evil tools/fsm.sh'
attack include "$INC" 'printf "[core]\n\tpager = evil\n" >> gitconfig.local' 'grep -q evil gitconfig.local'
attack include-missing "$INC_MISSING" 'mkdir -p extra && echo "[core]" > extra/more.cfg' 'test -e extra/more.cfg'
attack nested-config "$NESTED" 'echo evil >> sub/.git/config' 'grep -q evil sub/.git/config'
attack nested-hook "$NESTED" 'echo evil > sub/.git/hooks/x' 'test -e sub/.git/hooks/x'
attack nested-commondir "$NESTED" 'echo ../../evil > sub/.git/commondir' 'grep -qs evil sub/.git/commondir'
attack nested-info "$NESTED" 'mkdir -p sub/.git/info && echo "* filter=evil" > sub/.git/info/attributes' \
	'test -e sub/.git/info/attributes'
attack nested-gitfile-planted "$NESTED" 'mv sub/.git sub/.git-old' 'test -e sub/.git-old'
attack nested-deep "$DEEP" 'echo evil >> a/b/c/deep/.git/config' 'grep -q evil a/b/c/deep/.git/config'
attack inner-worktree-file "$INNER_WT" 'echo "gitdir: /evil" > inner/.git' 'grep -q evil inner/.git'
attack linked-common-config "$LINKED" "echo evil >> $ST/main/.git/config" "grep -q evil $ST/main/.git/config"
attack linked-hook "$LINKED" "echo evil > $ST/main/.git/hooks/pre-commit" "test -e $ST/main/.git/hooks/pre-commit"
attack linked-gitfile "$LINKED" 'echo "gitdir: /evil" > wt/.git' 'grep -q evil wt/.git'
attack submodule-nested-name "$SUBMOD" 'echo evil >> .git/modules/a/b/config' 'grep -q evil .git/modules/a/b/config'
attack bare-workspace "$BARE" 'echo evil >> config' 'grep -q evil config'
attack bare-hook "$BARE" 'echo evil > hooks/pre-receive' 'test -e hooks/pre-receive'

# The same discovery in the layered form (std/guard among the defaults).
LAYERS=1
attack layers-husky-hook "$HUSKY" 'echo "touch /tmp/x" > .husky/_/pre-commit' 'grep -q touch .husky/_/pre-commit'
attack layers-fsmonitor "$FSM" 'echo evil >> tools/fsm.sh' 'grep -q evil tools/fsm.sh'
attack layers-nested-hook "$NESTED" 'echo evil > sub/.git/hooks/x' 'test -e sub/.git/hooks/x'
work layers-nested-work "$NESTED" 'cd sub && git status --short && echo two >> f && git commit -qam two'
LAYERS=0

GITWORK='git status --short >/dev/null && echo two >> f && git add f && git commit -qm two &&
	git branch b2 && git log --oneline | wc -l'
# Branches, merges, rebases and the stash write HEAD, refs, logs, the
# index, ORIG_HEAD, AUTO_MERGE and the sequencer's state: all left to the
# command in every git directory found.
MORE='git checkout -q -b side && echo s > s && git add s && git commit -qm s &&
	git checkout -q - && echo m >> f && git commit -qam m && git merge -q --no-edit side &&
	git checkout -q side && git rebase -q - && git log --oneline | wc -l'
STASH='echo w >> f && git stash -q && git stash pop -q && git checkout -q f'
work husky-work "$HUSKY" "$GITWORK"
work husky-branches "$HUSKY" "$MORE && $STASH"
work nested-branches "$NESTED" "cd sub && $MORE && $STASH"
work inner-worktree-branches "$INNER_WT" "cd inner && $MORE && $STASH"
work linked-branches "$LINKED" "cd wt && $MORE && $STASH"
work bare-push "$BARE" "git clone -q . $ST/c 2>/dev/null && cd $ST/c &&
	git -c user.name=t -c user.email=t@e commit -q --allow-empty -m x &&
	git push -q origin HEAD:main"
work nested-work "$NESTED" "cd sub && $GITWORK"
work inner-worktree-work "$INNER_WT" "cd inner && $GITWORK"
work linked-work "$LINKED" "cd wt && $GITWORK"
work include-work "$INC" "$GITWORK"
# Settings that name /dev/null (hooks turned off, ssh without a config):
# nothing protected there, the command still writes /dev/null.
DEVNULL='r . && git config core.hooksPath /dev/null && git config core.sshCommand "ssh -F /dev/null"'
work devnull-work "$DEVNULL" "$GITWORK && echo x > /dev/null"

shown show-husky "$HUSKY" '\.husky/_/\*\*'
shown show-nested "$NESTED" "git dir  *$WS/sub/.git"
shown show-linked "$LINKED" "git dir  *$ST/main/.git"

# A workspace inside a repository: that repository's core.hooksPath
# points into the workspace.
UP='r . && git config core.hooksPath inner/hooks && mkdir -p inner/hooks'
fresh "$UP"
(cd "$WS/inner" && env -i $ENVV sh -c 'echo evil > hooks/pre-commit')
if ! grep -q evil "$WS/inner/hooks/pre-commit" 2>/dev/null; then
	fail enclosing-repo "control: the attack did not work without cagerun"
else
	fresh "$UP"
	(cd "$WS/inner" && env -i $ENVV timeout -s KILL $T "$CAGERUN" -p "$POLICY" \
		-D workspace="$WS/inner" -D store="$ST" --quiet -- \
		sh -c 'echo gs-started; echo evil > hooks/pre-commit') >"$OUT" 2>&1
	if ! grep -q gs-started "$OUT"; then
		fail enclosing-repo "cagerun did not start the command"
	elif grep -q evil "$WS/inner/hooks/pre-commit" 2>/dev/null; then
		fail enclosing-repo "the attack worked under cagerun"
	else
		pass enclosing-repo
	fi
fi

# A configuration cagerun cannot read as git does: refused, nothing run.
fresh 'r . && printf "[core]\n\tpager = \"\$(cat x)\"\n" >> .git/config'
(cd "$WS" && env -i $ENVV "$CAGERUN" -p "$POLICY" -D workspace="$WS" -D store="$ST" \
	-- sh -c 'echo gs-started') >"$OUT" 2>&1
rc=$?
if [ $rc -eq 125 ] && ! grep -q gs-started "$OUT" && grep -q 'core.pager' "$OUT"; then
	pass refused-unreadable
else
	fail refused-unreadable "status $rc"
fi

echo "$PASS passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
