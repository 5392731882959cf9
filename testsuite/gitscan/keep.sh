#!/bin/sh
# keep.sh - git discovery's kept walk (runtime/gitscan/gs_keep.h) never
# finds less than a fresh walk: after each change to the workspace below,
# a launch that had a kept walk to consider must list exactly what
# `cagerun --show` (which always walks afresh) lists, and the change's
# repository among them:
#   - a repository created deep in the workspace; a `.git` file (a
#     gitdir pointer) created; a directory holding a repository renamed;
#     files saved and added (the kept walk must be reused: only the
#     count changed); a `.git` file made among files;
#   - the kept record with a flipped byte, or replaced by a symlink, is
#     refused and the walk made again;
#   - what the last launch found, assumed by the next one and looked at
#     while its sandbox is built, never protects less: a repository
#     made and a hooks folder configured in between are protected, in
#     enforce-fs and in enforce; a configuration git refuses, written in
#     between, refuses the run; another policy keeps its own record.
# Every case first shows the kept walk reused ("reused" with --verbose),
# so no case passes because nothing was kept.
#
#   keep.sh CAGERUN SRCDIR
set -u
[ $# -eq 2 ] || { echo "usage: keep.sh CAGERUN SRCDIR" >&2; exit 2; }
CAGERUN=$1 SRC=$2
POLICY=$SRC/testsuite/gitscan/gitscan.cage
command -v git >/dev/null || { echo "SKIP: no git"; exit 0; }
base=$(mktemp -d "${TMPDIR:-/tmp}/cage-gskeep.XXXXXX") || exit 1
trap 'rm -rf "$base"' EXIT
F=$(cd "$base" && pwd -P)
WS=$F/ws ST=$F/store
mkdir -p "$WS/a/b/c" "$WS/m/n" "$ST" "$F/tmp"
git init -q "$WS/a/b/r1" || exit 1
ENVV="PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME=$F TMPDIR=$F/tmp"
fails=0 passes=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { passes=$((passes + 1)); }

# A directory changed in the last 50 ms is kept without its times
# (pf_changed_recently) and read again at each launch: the pause after a
# change lets the next walk keep them.
settle() { sleep 0.1; }
cr() { # cr ARGS...: cagerun from the workspace, output in $F/out
	(cd "$WS" && env -i $ENVV timeout -s KILL 60 "$CAGERUN" -p "$POLICY" -D workspace="$WS" \
		-D store="$ST" "$@") >"$F/out" 2>&1
}
items() { sed -n '/^discovered:/,/^[^ ]/p' "$1" | grep '^  '; }
walk() { sed -n "s/^cagerun: git discovery's walk: //p" "$F/out"; }

# check NAME WANT: a launch lists what --show lists, and WANT among it.
check() {
	cr --verbose -- /bin/true
	cp "$F/out" "$F/run.out"
	cr --show
	items "$F/out" >"$F/show.items"
	items "$F/run.out" >"$F/run.items"
	if ! cmp -s "$F/show.items" "$F/run.items"; then
		fail "$1: the launch found other paths than a fresh walk"
		diff "$F/show.items" "$F/run.items" >&2
	elif ! grep -qF -- "$2" "$F/run.items"; then
		fail "$1: $2 was not found"
		cat "$F/run.items" >&2
	else
		ok
	fi
}
# reused NAME: the next launch reuses the kept walk.
reused() {
	cr --verbose -- /bin/true
	case $(walk) in
	reused*) ok ;;
	*) fail "$1: the kept walk was not reused: $(walk)"; sed 's/^/  | /' "$F/out" >&2 ;;
	esac
}

settle
check first "$WS/a/b/r1/.git"
reused first

# A repository made deep down, below directories the walk listed.
git init -q "$WS/a/b/c/r2" && settle
check "a new repository" "$WS/a/b/c/r2/.git"
reused "a new repository"

# A .git file, pointing at a repository kept outside the workspace.
git init -q --separate-git-dir "$F/elsewhere.git" "$WS/m/n/r3" && settle
check "a .git file" "$WS/m/n/r3/.git"
reused "a .git file"

# A directory holding a repository renamed (one listing changes).
mv "$WS/a/b/c" "$WS/a/b/moved" && settle
check "a renamed directory" "$WS/a/b/moved/r2/.git"
reused "a renamed directory"

# A file saved through a temporary name and a file added: the listings'
# times move but not the entries the walk takes (gs_walk_relevant), so
# the kept walk is reused at once, and finds what a fresh walk finds.
echo x >"$WS/a/b/f.tmp" && mv "$WS/a/b/f.tmp" "$WS/a/b/f" && echo y >"$WS/m/new.txt"
reused "files saved and added"
check "files saved and added" "$WS/a/b/moved/r2/.git"
# A .git file made among files, in a directory the walk listed: a name it
# takes, so it walks again and finds the repository.
echo "gitdir: $F/elsewhere.git" >"$WS/m/.git" && settle
check "a .git file among files" "$WS/m/.git"
reused "a .git file among files"

# The kept record tampered with: refused, walked again.
rec=$(ls "$F"/.cache/cage/.plans/*.walk 2>/dev/null | head -n 1)
if [ -z "$rec" ]; then
	fail "no kept walk in $F/.cache/cage/.plans"
else
	python3 -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 1
open(p, "wb").write(bytes(b))' "$rec"
	cr --verbose -- /bin/true
	case $(walk) in
	reused*) fail "a record with a flipped byte was reused" ;;
	*) ok ;;
	esac
	check "after a flipped byte" "$WS/a/b/moved/r2/.git"
	reused "after a flipped byte"
	mv "$rec" "$rec.real" && ln -s "$rec.real" "$rec"
	cr --verbose -- /bin/true
	grep -q "git discovery's walk: .*: not a regular file\|git discovery's walk: .*cannot open" "$F/out" && ok ||
		{ fail "a symlinked record was not refused"; sed 's/^/  | /' "$F/out" >&2; }
fi

# In enforce-fs (the policy's mode) and enforce a launch assumes what
# the last one with the same inputs found, and looks while the sandbox
# is built (gs.h, gs_assume): a repository made, and a hooks folder
# configured, since the last launch are protected all the same. Each
# launch before a change is shown to have assumed, and each file to be
# writable without cagerun.
MODE=enforce-fs
assumed() {
	cr --mode $MODE --verbose -- /bin/true
	grep -q "git discovery: as the last launch found it (assumed" "$F/out" && ok ||
		{ fail "$1: the discovery was not assumed"; sed 's/^/  | /' "$F/out" >&2; }
}
# denied NAME FILE: FILE can be written without cagerun, not under it.
denied() {
	if (env -i $ENVV sh -c "echo x >'$2'") 2>/dev/null && [ -e "$2" ]; then
		rm -f "$2" && ok
	else
		fail "$1: control: $2 cannot be written without cagerun"
	fi
	cr --mode $MODE --quiet -- sh -c "echo x >'$2'"
	if [ -e "$2" ]; then
		fail "$1: $2 was written under cagerun"
		rm -f "$2"
	else
		ok
	fi
}
assumed "before a repository is made"
git init -q "$WS/a/r9" && settle
denied "a repository made since the last launch" "$WS/a/r9/.git/hooks/pre-commit"
assumed "after a repository was made"
mkdir -p "$ST/hooks" && git config --file "$F/.gitconfig" core.hooksPath "$ST/hooks"
denied "a hooks folder configured since the last launch" "$ST/hooks/pre-commit"
assumed "after a hooks folder was configured"
# A configuration git would refuse, written since the last launch: the
# assumed discovery cannot be confirmed, and the run is refused (125)
# with nothing started, as when the discovery comes first.
cp "$F/.gitconfig" "$F/gitconfig.good"
printf '[core\n\thooksPath = %s/hooks\n' "$ST" >>"$F/.gitconfig"
cr --mode $MODE --quiet -- sh -c "echo ran >'$F/ran'"
st=$?
if [ $st -eq 125 ] && [ ! -e "$F/ran" ] && grep -q "gitconfig" "$F/out"; then
	ok
else
	fail "a configuration git refuses, written since the last launch: status $st"
	sed 's/^/  | /' "$F/out" >&2
fi
rm -f "$F/ran"
mv "$F/gitconfig.good" "$F/.gitconfig"

# Another policy in the same workspace (one more writable tree: other
# inputs) keeps its own record: neither replaces the other's.
sed 's|"{store}/\*\*"|"{store}/**", "{workspace}/../extra/**"|' "$POLICY" >"$F/other.cage"
grep -q extra "$F/other.cage" || fail "the second policy was not made"
(cd "$WS" && env -i $ENVV timeout -s KILL 60 "$CAGERUN" -p "$F/other.cage" -D workspace="$WS" \
	-D store="$ST" --quiet -- /bin/true) || fail "the second policy did not run"
assumed "after another policy ran in the workspace"
# Its records with a flipped byte: not assumed (the discovery comes
# first), then written anew and assumed again.
for rec in "$F"/.cache/cage/.plans/*.found; do
	python3 -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 1
open(p, "wb").write(bytes(b))' "$rec" || fail "cannot flip a byte of $rec"
done
cr --mode $MODE --verbose -- /bin/true
if grep -q "git discovery: as the last launch found it" "$F/out"; then
	fail "a record with a flipped byte was assumed"
else
	ok
fi
assumed "after a record with a flipped byte was replaced"
MODE=enforce
assumed "in enforce, before a repository is made"
git init -q "$WS/m/r10" && settle
denied "in enforce, a repository made since the last launch" "$WS/m/r10/.git/hooks/pre-commit"
assumed "in enforce, after a repository was made"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
