#!/bin/sh
# layers_test.sh - cagerun's automatic layers as a user's day meets them,
# driving the real binary in a scratch HOME, XDG_CONFIG_HOME and
# repositories: discovery from nested folders and the order of layers; an
# untrusted project layer that tries to grant ~/.ssh or every host; trust,
# then an edit that revokes it; --pin; every known skip-permission flag
# under every mode; --show against a golden file; --shell with a scripted
# stdin; and a layer edited during a run. Security cases are non-vacuous:
# each first shows the access working without the cage (or with the layer
# trusted), then refused.
# usage: layers_test.sh CAGERUN SOURCE_DIR
set -u
cagerun=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/xdg"
unset CAGE_STDLIB
mkdir -p "$HOME/.ssh" "$XDG_CONFIG_HOME"
echo "ssh-secret-$$" >"$HOME/.ssh/id_test"

ok() { passes=$((passes + 1)); }
bad() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/err" ] && head -c 3000 "$tmp/err" >&2
	fails=$((fails + 1))
}
# run DIR ARGS...: cagerun in DIR; status in $rc, output in $tmp/out, $tmp/err.
run() {
	dir=$1
	shift
	(cd "$dir" && timeout 60 "$cagerun" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null)
	rc=$?
}
expect_rc() { # WANT WHAT
	if [ "$rc" -eq "$1" ]; then ok; else bad "$2: status $rc, want $1"; fi
}
expect_in() { # FILE PATTERN WHAT
	if grep -q -- "$2" "$1"; then ok; else bad "$3: no '$2' in $(basename "$1")"; fi
}
expect_not_in() {
	if grep -q -- "$2" "$1"; then bad "$3: '$2' in $(basename "$1")"; else ok; fi
}

# A repository with a nested folder; a fixture outside it to read.
repo=$tmp/repo
mkdir -p "$repo/.git" "$repo/a/b/c" "$tmp/outside"
echo "outside-$$" >"$tmp/outside/data"
deep=$repo/a/b/c

# ---- discovery and order ----
mkdir -p "$repo/.cage" "$tmp/task" "$XDG_CONFIG_HOME/cage/agents"
printf 'cage 1\ndeny write "%s/a/**"\n' "$repo" >"$repo/.cage/policy.cage"
printf 'cage 1\ndeny read "%s/a/b/**"\n' "$repo" >"$tmp/task/t.cage"
printf 'cage 1\nallow read "%s/outside/**"\n' "$tmp" >"$XDG_CONFIG_HOME/cage/agents/codex.cage"
run "$deep" --show --task "$tmp/task/t.cage" -- codex
expect_rc 0 "--show from a nested folder"
awk '/^  [0-9]+\. /{print $2}' "$tmp/out" | tr '\n' ' ' >"$tmp/kinds"
if [ "$(cat "$tmp/kinds")" = "defaults defaults defaults defaults workspace baseline agent agent project task " ]; then ok; else
	bad "layer order: $(cat "$tmp/kinds")"
fi
expect_in "$tmp/out" "project   xxh3:[0-9a-f]*  $repo/.cage/policy.cage" "project layer found from $deep"
expect_in "$tmp/out" "agent     xxh3:[0-9a-f]*  $XDG_CONFIG_HOME/cage/agents/codex.cage" "user agent layer under XDG_CONFIG_HOME"
expect_in "$tmp/out" "workspace: $repo\$" "workspace defaults to the project root"
# Outside a repository only the current folder is searched.
mkdir -p "$tmp/norepo/sub/.cage" "$tmp/norepo/x"
cp "$repo/.cage/policy.cage" "$tmp/norepo/sub/.cage/policy.cage"
run "$tmp/norepo/sub" --show -- true
expect_in "$tmp/out" "project   xxh3:[0-9a-f]*  $tmp/norepo/sub/.cage/policy.cage" "project layer in the current folder"
run "$tmp/norepo/sub/../x" --show -- true
expect_not_in "$tmp/out" "project " "no project layer taken from a parent outside a repository"
# Without XDG_CONFIG_HOME the user's layers are under ~/.config.
mkdir -p "$HOME/.config/cage/agents"
printf 'cage 1\nallow read "%s/outside/**"\n' "$tmp" >"$HOME/.config/cage/agents/codex.cage"
(unset XDG_CONFIG_HOME; cd "$deep" && "$cagerun" --show -- codex >"$tmp/out" 2>"$tmp/err")
expect_in "$tmp/out" "agent     xxh3:[0-9a-f]*  $HOME/.config/cage/agents/codex.cage" "user agent layer under ~/.config"
rm -rf "$HOME/.config" "$XDG_CONFIG_HOME/cage/agents" "$tmp/task"

# The layers are enforced: the project's deny and the workspace's grant.
run "$deep" -q -- sh -c "echo w >$repo/top; echo x >$repo/a/denied"
expect_in "$tmp/err" "Read-only file system\|Permission denied" "project deny applies"
[ -f "$repo/top" ] && ok || bad "workspace grant: $repo/top not written"
[ -f "$repo/a/denied" ] && bad "project deny: $repo/a/denied written" || ok

# Last match wins across layers: the task re-opens part of what the
# (trusted) project denies; the rest stays denied.
run "$repo" trust
printf 'cage 1\nallow write "%s/a/b/**"\n' "$repo" >"$tmp/reopen.cage"
run "$deep" -q --task "$tmp/reopen.cage" -- sh -c "echo y >$repo/a/b/reopened; echo n >$repo/a/still"
[ -f "$repo/a/b/reopened" ] && ok || bad "the task layer re-opens what the project denied"
[ -f "$repo/a/still" ] && bad "the project's deny outside the task's grant" || ok
rm -f "$tmp/reopen.cage" "$repo/a/b/reopened"

# ---- an untrusted project layer only narrows ----
cat "$tmp/outside/data" >/dev/null && ok || bad "control: fixture unreadable"
printf 'cage 1\nallow read "%s/outside/**"\nallow connect "*"\nenv keep SECRET_TOKEN\n' "$tmp" \
	>"$repo/.cage/policy.cage"
run "$deep" -- cat "$tmp/outside/data"
expect_in "$tmp/err" "ignored: allow read $tmp/outside/\*\*" "untrusted read grant reported"
expect_in "$tmp/err" 'ignored: allow connect \*' "untrusted host grant reported"
expect_in "$tmp/err" "ignored: env keep SECRET_TOKEN" "untrusted env keep reported"
expect_not_in "$tmp/out" "outside-$$" "untrusted layer grants nothing"
run "$deep" --show -- true
expect_in "$tmp/out" "NOT TRUSTED" "--show marks the layer untrusted"
expect_not_in "$tmp/out" "^  allow   connect  *\*  " "--show: no host grant from the untrusted layer"
# trusted, the same grant works (the refusal above was the trust, not the path)
run "$deep" trust
expect_rc 0 "cagerun trust"
expect_in "$tmp/out" "trusted $repo/.cage/policy.cage" "trust names the file"
run "$deep" -q -- cat "$tmp/outside/data"
expect_in "$tmp/out" "outside-$$" "a trusted layer's grant applies"
# an edit revokes the approval
echo "# harmless-looking edit" >>"$repo/.cage/policy.cage"
run "$deep" -- cat "$tmp/outside/data"
expect_not_in "$tmp/out" "outside-$$" "edit revokes trust"
expect_in "$tmp/err" "is not trusted" "edit revokes trust: said so"

# ~/.ssh: the control reads it, an untrusted (or trusted) grant is refused
cat "$HOME/.ssh/id_test" | grep -q "ssh-secret-$$" && ok || bad "control: ssh fixture"
printf 'cage 1\nallow read "~/.ssh/**"\n' >"$repo/.cage/policy.cage"
run "$deep" -- cat "$HOME/.ssh/id_test"
expect_rc 125 "project layer granting ~/.ssh is refused"
expect_in "$tmp/err" "protect-violation" "refusal names the lint finding"
expect_not_in "$tmp/out" "ssh-secret" "~/.ssh unread"
run "$deep" trust
run "$deep" -- cat "$HOME/.ssh/id_test"
expect_rc 125 "a trusted layer with lint errors is refused too"

# ---- lint's verdict comes from cage-lint (layers_lint.h) ----
# A cagerun copied to a folder of its own finds the helper beside it only
# if it is put there. Without a verdict a project layer, or a task layer
# on -p, runs nothing; with the real helper beside it the same layer runs
# (the control, last: a compile judged once is kept and not judged again).
lb=$tmp/lintbin
mkdir -p "$lb" "$tmp/lintcase"
chmod 0755 "$lb"
cp "$cagerun" "$lb/cagerun"
stdlib_args="--stdlib $src/stdlib"
lintcase=0
# judge_case WHAT: a fresh clean project layer (never compiled before), then
# the copied cagerun creating a sentinel under it
judge_case() {
	lintcase=$((lintcase + 1))
	printf 'cage 1\n# case %s-%s\nallow read "%s/a/**"\n' "$$" "$lintcase" "$repo" \
		>"$repo/.cage/policy.cage"
	rm -f "$repo/lint-sentinel"
	(cd "$deep" && timeout 60 "$lb/cagerun" $stdlib_args -- sh -c ': >"$1"' _ "$repo/lint-sentinel" \
		>"$tmp/out" 2>"$tmp/err" </dev/null)
	rc=$?
}
judge_refused() { # WHAT PATTERN
	expect_rc 125 "$1: refused"
	expect_in "$tmp/err" "$2" "$1: said why"
	if [ -e "$repo/lint-sentinel" ]; then bad "$1: the command ran"; else ok; fi
}
judge_case
judge_refused "no cage-lint beside cagerun" "lint's verdict on the layers: cage-lint"
printf '#!/bin/sh\nexit 0\n' >"$lb/cage-lint"
chmod 0755 "$lb/cage-lint"
judge_case
judge_refused "a cage-lint that says nothing" "not a reply of this version of cage-lint"
printf '#!/bin/sh\nkill -9 $$\n' >"$lb/cage-lint"
judge_case
judge_refused "a cage-lint killed" "ended by signal 9"
# a verdict on another profile than the launch runs (the helper's word
# for it rewritten on the way)
printf '#!/bin/sh\n"%s" "$@" | perl -0777 -pe '"'"'s/\\0P\\0[^\\0]*\\0/\\0P\\0bogus\\0/'"'"'\n' \
	"$(dirname "$cagerun")/cage-lint" >"$lb/cage-lint"
judge_case
judge_refused "a verdict on another profile" "lint judged profile 'bogus', the launch selected"
# a verdict on other bytes than the launch compiled (a layer's digest
# rewritten on the way, as if the file changed between the two compiles)
printf '#!/bin/sh\n"%s" "$@" | perl -0777 -pe '"'"'s/\\x00S\\x00[0-9a-f]{16}\\x00/\\x00S\\x{00}0123456789abcdef\\x00/'"'"'\n' \
	"$(dirname "$cagerun")/cage-lint" >"$lb/cage-lint"
judge_case
judge_refused "a verdict on other bytes" "changed while cagerun was reading it"
rm -f "$lb/cage-lint"
cp "$(dirname "$cagerun")/cage-lint" "$lb/cage-lint"
chmod 0775 "$lb"
judge_case
judge_refused "cage-lint in a folder others may write" "writable by group or others"
chmod 0755 "$lb"
rm -f "$lb/cage-lint"
printf 'cage 1\nimport "std/base"\n' >"$tmp/lintcase/p.cage"
printf 'cage 1\nallow write "%s/**"\n' "$repo" >"$tmp/lintcase/t.cage"
rm -f "$repo/lint-sentinel"
(cd "$deep" && timeout 60 "$lb/cagerun" $stdlib_args -p "$tmp/lintcase/p.cage" \
	--task "$tmp/lintcase/t.cage" -- sh -c ': >"$1"' _ "$repo/lint-sentinel" >"$tmp/out" 2>"$tmp/err" </dev/null)
rc=$?
judge_refused "-p with --task and no cage-lint" "a task layer on -p is run only after lint judged it"
ln -s "$(dirname "$cagerun")/cage-lint" "$lb/cage-lint"
(cd "$deep" && timeout 60 "$lb/cagerun" $stdlib_args -p "$tmp/lintcase/p.cage" \
	--task "$tmp/lintcase/t.cage" -- sh -c ': >"$1"' _ "$repo/lint-sentinel" >"$tmp/out" 2>"$tmp/err" </dev/null)
rc=$?
expect_rc 0 "control: with cage-lint beside it -p with the same --task runs"
if [ -e "$repo/lint-sentinel" ]; then ok; else bad "control: -p --task: the command did not run"; fi
judge_case
expect_rc 0 "control: with cage-lint beside it the same layer runs"
if [ -e "$repo/lint-sentinel" ]; then ok; else bad "control: the command did not run"; fi
# a param or a weaker mode from an untrusted layer refuses the run
printf 'cage 1\nparam datasets : path = "/"\ndeny write "{datasets}/tmp/x"\n' >"$repo/.cage/policy.cage"
run "$deep" -- true
expect_rc 125 "untrusted param"
expect_in "$tmp/err" "declares param 'datasets'" "untrusted param: said so"
printf 'cage 1\nmode off\n' >"$repo/.cage/policy.cage"
run "$deep" -- sh -c "cat $HOME/.ssh/id_test"
expect_rc 125 "untrusted mode off"
expect_not_in "$tmp/out" "ssh-secret" "untrusted mode off: nothing ran"
printf 'cage 1\ndeny write "%s/a/**"\n' "$repo" >"$repo/.cage/policy.cage"

# ---- the approvals cannot be changed from inside, even when a layer
# grants their folder: the control writes beside them ----
printf 'cage 1\nallow write "%s/**"\n' "$XDG_CONFIG_HOME" >"$tmp/wide.cage"
run "$deep" --task "$tmp/wide.cage" -- sh -c \
	"echo ok >$XDG_CONFIG_HOME/beside; echo '# forged' >>$XDG_CONFIG_HOME/cage/trust"
[ -f "$XDG_CONFIG_HOME/beside" ] && ok || bad "control: the task layer's grant applies"
expect_in "$tmp/err" "Read-only file system\|Permission denied" "approvals write-protected"
expect_not_in "$XDG_CONFIG_HOME/cage/trust" "forged" "approvals unchanged"
rm -f "$XDG_CONFIG_HOME/beside" "$tmp/wide.cage"

# ---- --pin ----
# (the command layer is part of what is pinned, and the command's name keys
# the private caches, whose folder the fingerprint covers: the same command, sh)
run "$deep" -- sh -c true
fp=$(sed -n 's/^cagerun: policy \(xxh3:[0-9a-f]*\) .*/\1/p' "$tmp/err")
[ -n "$fp" ] && ok || bad "fingerprint printed at start"
run "$deep" --pin "$fp" -- sh -c "echo ran >$repo/pinned"
expect_rc 0 "--pin with the right fingerprint"
[ -f "$repo/pinned" ] && ok || bad "--pin match: the command ran"
rm -f "$repo/pinned"
printf 'cage 1\ndeny write "%s/a/b/**"\n' "$repo" >"$repo/.cage/policy.cage"
run "$deep" --pin "$fp" -- sh -c "echo ran >$repo/pinned"
expect_rc 125 "--pin mismatch"
[ -f "$repo/pinned" ] && bad "--pin mismatch: the command ran" || ok
run "$deep" -q --pin "$fp" -- sh -c true
expect_rc 125 "--pin mismatch with --quiet"
# comments do not change the fingerprint
printf 'cage 1\n# a comment\ndeny write "%s/a/**"\n' "$repo" >"$repo/.cage/policy.cage"
run "$deep" --pin "$fp" -- sh -c true
expect_rc 0 "--pin survives a comment"
# what a protect leaves out, and a limit, are meaning too: each change is
# refused under the pin of the policy before it (the control: that pin
# holds while nothing changed)
pin_change() { # pin_change WHAT BEFORE AFTER: the layer's text before and after
	printf 'cage 1\n%s\n' "$2" >"$repo/.cage/policy.cage"
	run "$deep" -- sh -c true
	pfp=$(sed -n 's/^cagerun: policy \(xxh3:[0-9a-f]*\) .*/\1/p' "$tmp/err")
	run "$deep" --pin "$pfp" -- sh -c true
	expect_rc 0 "--pin holds before $1 changes"
	printf 'cage 1\n%s\n' "$3" >"$repo/.cage/policy.cage"
	run "$deep" --pin "$pfp" -- sh -c "echo ran >$repo/pinned"
	expect_rc 125 "--pin refuses a changed $1"
	[ -f "$repo/pinned" ] && bad "--pin, changed $1: the command ran" || ok
	rm -f "$repo/pinned"
}
pin_change "except" "protect write \"$repo/a/**\" except \"$repo/a/x/**\"" \
	"protect write \"$repo/a/**\" except \"$repo/a/y/**\""
pin_change "limit" "deny write \"$repo/a/**\"
limit processes 500" "deny write \"$repo/a/**\"
limit processes 400"
printf 'cage 1\n# a comment\ndeny write "%s/a/**"\n' "$repo" >"$repo/.cage/policy.cage"

# ---- a layer edited during the run ----
run "$deep" -- sh -c "echo '# edited' >>$repo/.cage/policy.cage"
expect_rc 0 "editing a layer from inside"
expect_in "$tmp/err" "changed during the run.*restart to apply" "change reported at exit"

# ---- skip-permission flags under every mode ----
mkdir -p "$repo/bin"
for agent in claude codex gemini; do
	printf '#!/bin/sh\necho "$0 $*" >>%s/bin/ran\n' "$repo" >"$repo/bin/$agent"
	chmod +x "$repo/bin/$agent"
done
rm -f "$repo/.cage/policy.cage"
yolo="claude:--dangerously-skip-permissions claude:--permission-mode=bypassPermissions
codex:--dangerously-bypass-approvals-and-sandbox codex:--yolo gemini:--yolo gemini:-y
gemini:--approval-mode=yolo"
for y in $yolo; do
	agent=${y%%:*} flag=${y#*:}
	for mode in enforce enforce-fs monitor off; do
		rm -f "$repo/bin/ran"
		run "$deep" --mode "$mode" -- "$repo/bin/$agent" "$flag"
		if [ "$mode" = enforce ]; then
			expect_rc 0 "$agent $flag under enforce"
			expect_in "$tmp/err" "the cage (mode enforce) is the boundary" "$agent $flag note"
			[ -f "$repo/bin/ran" ] && ok || bad "$agent $flag under enforce did not run"
		else
			expect_rc 125 "$agent $flag under $mode"
			expect_in "$tmp/err" "refused, nothing was run" "$agent $flag under $mode: said so"
			[ -f "$repo/bin/ran" ] && bad "$agent $flag ran under $mode" || ok
			# with the override: a banner first, then it runs
			rm -f "$repo/bin/ran"
			run "$deep" --allow-yolo --mode "$mode" -- "$repo/bin/$agent" "$flag"
			expect_in "$tmp/err" "WARNING: $agent $flag under mode $mode" "$agent $flag banner"
			expect_rc 0 "$agent $flag under $mode with --allow-yolo"
			[ -f "$repo/bin/ran" ] && ok || bad "$agent $flag under $mode --allow-yolo: not run"
		fi
	done
done
# the same flags with another agent, or a two-word form split, are not theirs
run "$deep" --mode off -- "$repo/bin/codex" -y
expect_rc 0 "-y is gemini's, not codex's"
run "$deep" --mode off -- "$repo/bin/claude" --permission-mode bypassPermissions
expect_rc 125 "two-word --permission-mode bypassPermissions"
run "$deep" --mode off -- "$repo/bin/gemini" -- --yolo
expect_rc 0 "an operand after -- is not a flag"

# ---- --shell with a scripted stdin ----
for sh in /bin/sh /bin/bash; do
	[ -x "$sh" ] || continue
	(cd "$deep" && printf 'echo inside-$((6*7))\ncat %s\nexit 3\n' "$HOME/.ssh/id_test" |
		SHELL=$sh timeout 60 "$cagerun" --shell >"$tmp/out" 2>"$tmp/err")
	rc=$?
	expect_rc 3 "--shell ($sh) exits with the shell's status"
	expect_in "$tmp/out" "inside-42" "--shell ($sh) ran the script"
	expect_in "$tmp/err" "\[cage\] " "--shell ($sh) prompt marker"
	expect_not_in "$tmp/out" "ssh-secret" "--shell ($sh) is caged"
done
run "$deep" --shell -- true
expect_rc 125 "--shell with a command"

# ---- --show golden: a fixture standard library, paths replaced ----
lib=$tmp/lib
mkdir -p "$lib/std/agents" "$lib/cagerun" "$tmp/g/.git" "$tmp/g/.cage"
cp "$src/stdlib/cagerun/workspace.cage" "$lib/cagerun/"
printf 'cage 1\n# base\nallow read exec "/usr/**", "/bin/**"\nallow read "/etc/**"\n' >"$lib/std/base.cage"
printf 'cage 1\nprotect "~/.ssh/**"\n' >"$lib/std/secrets.cage"
printf 'cage 1\nparam workspace : path\nparam cache : path = "~/.cache/cage/default"\n# git runs hooks\nprotect write "{workspace}/.git/hooks/**"\nallow read write "{cache}/**"\nenv set PIP_CACHE_DIR = "{cache}/pip"\n' \
	>"$lib/std/guard.cage"
printf 'cage 1\nallow read write "~/.agent/**"\nallow connect "api.agent.test:443"\nenv keep AGENT_KEY\n' \
	>"$lib/std/agents/agent.cage"
printf 'cage 1\ndeny write "{workspace}/vendor/**"\nallow read "/opt/**"\nprivate tmp\n' \
	>"$tmp/g/.cage/policy.cage"
mkdir -p "$tmp/g/vendor"
run "$tmp/g" --stdlib "$lib" --show -- agent --flag
expect_rc 0 "--show with a fixture stdlib"
# The effective fingerprint covers the rules, whose paths hold $tmp.
sed -e "s#$tmp#TMP#g" -e 's/^fingerprint: xxh3:.*/fingerprint: xxh3:(of the paths)/' \
	"$tmp/out" >"$tmp/show"
if diff -u "$src/testsuite/layers/show.golden" "$tmp/show" >"$tmp/diff"; then ok; else
	bad "--show differs from testsuite/layers/show.golden:"
	cat "$tmp/diff" >&2
fi

# ---- -p keeps its meaning: that file alone ----
printf 'cage 1\nallow read exec "/usr/**", "/bin/**", "/lib/**", "/lib64/**", "/etc/**"\n' >"$tmp/only.cage"
run "$deep" -p "$tmp/only.cage" --show -- true
expect_in "$tmp/out" "1. policy" "-p is one layer"
expect_not_in "$tmp/out" "defaults" "-p adds no defaults"

if [ "$fails" -ne 0 ]; then
	echo "$passes passed, $fails failed"
	exit 1
fi
echo "$passes passed, 0 failed"
