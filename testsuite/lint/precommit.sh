#!/bin/sh
# precommit.sh - the hook as a user installs it: a hook repository holding
# our .pre-commit-hooks.yaml, a fresh project repository whose
# .pre-commit-config.yaml points at it, `pre-commit install`, then real
# `git commit`s. A clean policy must commit; one with unsafe-order must be
# refused with the diagnostic. No network: the hook repository is a local
# path and the hook runs the cagec under test (language: system).
set -eu
cagec=$1
src=$2
hook_id=cage-lint
. "$src/testsuite/precommit/setup.sh"

cat >clean.cage <<'CAGE'
cage 1
profile work {
    allow read write "~/src/**"
    deny write "~/src/.git/hooks/**"
    allow connect "github.com:443"
}
CAGE
git add clean.cage
git commit -q -m clean >"$tmp/out1" 2>&1 || { cat "$tmp/out1" >&2; fail "a clean policy was refused"; }
grep -q 'cage lint' "$tmp/out1" || { cat "$tmp/out1" >&2; fail "the hook did not run"; }

cat >unsafe.cage <<'CAGE'
cage 1
profile work {
    deny read "~/.ssh/**"
    allow read "~/.ssh/known_hosts"
}
CAGE
git add unsafe.cage
if git commit -q -m unsafe >"$tmp/out2" 2>&1; then
	cat "$tmp/out2" >&2
	fail "a policy with unsafe-order was committed"
fi
grep -q 'unsafe.cage:4:16: error: .*\[unsafe-order\]' "$tmp/out2" ||
	{ cat "$tmp/out2" >&2; fail "the refusal does not show the diagnostic"; }
git log --format=%s | grep -q '^unsafe$' && fail "the refused commit exists"
echo "pre-commit: clean policy committed, unsafe-order refused"
