#!/bin/sh
# precommit.sh - the cage-fmt hook as a user installs it: a local hook
# repository holding our .pre-commit-hooks.yaml, a fresh project that uses
# it, `pre-commit install`, real commits. A formatted policy commits; an
# unformatted one is refused with the diff, and commits once `cagec fmt -w`
# has rewritten it. No network: the hook runs the cagec under test.
# usage: precommit.sh CAGEC SOURCE_DIR
set -eu
cagec=$1
src=$2
hook_id=cage-fmt
. "$src/testsuite/precommit/setup.sh"

printf 'cage 1\nprofile work {\n    allow read "~/src/**"\n}\n' >tidy.cage
git add tidy.cage
git commit -q -m tidy >"$tmp/out1" 2>&1 || { cat "$tmp/out1" >&2; fail "a formatted policy was refused"; }
grep -q 'cage fmt' "$tmp/out1" || { cat "$tmp/out1" >&2; fail "the hook did not run"; }

printf 'cage 1\nprofile work { allow   read "~/src/**" }\n' >messy.cage
git add messy.cage
if git commit -q -m messy >"$tmp/out2" 2>&1; then
	cat "$tmp/out2" >&2
	fail "an unformatted policy was committed"
fi
grep -q '^+    allow read "~/src/\*\*"$' "$tmp/out2" || { cat "$tmp/out2" >&2; fail "no diff shown"; }
grep -q 'messy.cage is not formatted' "$tmp/out2" || { cat "$tmp/out2" >&2; fail "file not named"; }

"$cagec" fmt -w messy.cage
git add messy.cage
git commit -q -m messy >"$tmp/out3" 2>&1 || { cat "$tmp/out3" >&2; fail "refused after cagec fmt -w"; }
echo "pre-commit: formatted policy committed, unformatted refused with a diff, then fixed"
