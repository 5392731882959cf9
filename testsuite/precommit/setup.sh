# setup.sh - sourced by the pre-commit tests (lint/precommit.sh,
# fmt/precommit.sh): builds what a user has after installing one of our
# hooks. A hook repository holding exactly the .pre-commit-hooks.yaml this
# source tree ships, and a fresh project repository ($tmp/proj, the current
# directory afterwards) whose .pre-commit-config.yaml uses hook $hook_id,
# with `pre-commit install` run. No network: the hook repository is a local
# path and the hook runs the cagec under test (language: system).
# Expects: $cagec, $src, $hook_id. Sets: $tmp (removed on exit), fail().
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" PRE_COMMIT_HOME="$tmp/cache" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=test GIT_AUTHOR_EMAIL=test@example.invalid
export GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@example.invalid
PATH="$(dirname "$cagec"):$PATH"
export PATH
mkdir -p "$HOME"
fail() { echo "FAIL: $*" >&2; exit 1; }

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
      - id: $hook_id
YAML
git add .pre-commit-config.yaml
git commit -q -m config --no-verify
pre-commit install >/dev/null
