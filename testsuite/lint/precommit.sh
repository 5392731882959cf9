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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" PRE_COMMIT_HOME="$tmp/cache" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=test GIT_AUTHOR_EMAIL=test@example.invalid
export GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@example.invalid
export PATH="$(dirname "$cagec"):$PATH"
mkdir -p "$HOME"
fail() { echo "FAIL: $*" >&2; exit 1; }

# the hook repository: exactly the manifest this source tree ships
mkdir "$tmp/hooks"
cp "$src/.pre-commit-hooks.yaml" "$tmp/hooks/"
git -C "$tmp/hooks" init -q
git -C "$tmp/hooks" add .pre-commit-hooks.yaml
git -C "$tmp/hooks" commit -q -m hooks
rev=$(git -C "$tmp/hooks" rev-parse HEAD)

mkdir "$tmp/proj"
cd "$tmp/proj"
git init -q
cat >.pre-commit-config.yaml <<YAML
repos:
  - repo: $tmp/hooks
    rev: $rev
    hooks:
      - id: cage-lint
YAML
git add .pre-commit-config.yaml
git commit -q -m config --no-verify
pre-commit install >/dev/null

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
