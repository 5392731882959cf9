#!/bin/sh
# readme_user.sh CAGERUN SRCDIR [USER] - the README's first command as an
# ordinary user with Debian's and Ubuntu's default soft open-files limit
# (ulimit -Sn 1024), in a clone of the checkout that user owns, with the
# cagerun under test standing in for the one the command builds:
#
#   control    without cagerun the fake key in the user's home is listed;
#   readme     the README's command exits 0: git works on the project, the
#              key's directory is refused, example.com is refused by the
#              proxy and listed at exit;
#   limit      the command inside has the soft limit it was started with
#              (1024), though cagerun raised its own for the proxy;
#   too-low    with a hard limit no proxy fits in (150), 125 and the
#              message that says how to fix it.
#
# Run as root, USER (default cage-test) does all of it; run as anyone else,
# that user does.
set -u
[ $# -ge 2 ] || { echo "usage: readme_user.sh CAGERUN SRCDIR [USER]" >&2; exit 2; }
CAGERUN=$1 SRC=$2 user=${3:-cage-test}
T=60 # the bound on any one command, in seconds

if [ "$(id -u)" -eq 0 ] && [ -z "${CAGE_README_BASE:-}" ]; then
	if ! id "$user" >/dev/null 2>&1; then
		echo "FAIL setup: user $user does not exist (.ci/deps creates it)"
		echo "0 passed, 1 failed"
		exit 1
	fi
	base=$(mktemp -d /tmp/cage-readme.XXXXXX) || exit 1
	trap 'rm -rf "$base"' EXIT
	# A clone: the checkout may be a worktree whose .git points elsewhere.
	git clone -q "$SRC" "$base/cage" && mkdir -p "$base/cage/build" &&
		ln -s "$(cd "$(dirname "$CAGERUN")" && pwd -P)/$(basename "$CAGERUN")" "$base/cage/build/cagerun" && cp "$SRC/README.md" "$base/cage/README.md" &&
		chmod 755 "$base" && chown -R "$user:" "$base" || exit 1
	setpriv --reuid="$user" --regid="$user" --init-groups env -i \
		PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME="$base/home" TMPDIR=/tmp \
		CAGE_README_BASE="$base" sh "$SRC/testsuite/linux/readme_user.sh" \
		"$base/cage/build/cagerun" "$base/cage" "$user"
	exit $?
fi

base=${CAGE_README_BASE:-}
if [ -z "$base" ]; then
	base=$(mktemp -d "${TMPDIR:-/tmp}/cage-readme.XXXXXX") || exit 1
	trap 'rm -rf "$base"' EXIT
	git clone -q "$SRC" "$base/cage" && mkdir -p "$base/cage/build" &&
		ln -s "$(cd "$(dirname "$CAGERUN")" && pwd -P)/$(basename "$CAGERUN")" "$base/cage/build/cagerun" && cp "$SRC/README.md" "$base/cage/README.md" ||
		exit 1
	SRC=$base/cage CAGERUN=$base/cage/build/cagerun
fi
base=$(cd "$base" && pwd -P)
export HOME="$base/home"
mkdir -p "$HOME/.ssh" && echo "cage-readme-key" >"$HOME/.ssh/id_rsa" && chmod 700 "$HOME/.ssh" ||
	exit 1
ulimit -Sn 1024 || { echo "FAIL setup: ulimit -Sn 1024"; exit 1; }

passed=0 failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
bad() {
	echo "FAIL: $1"
	for f in out err; do [ -s "$base/$f" ] && sed "s/^/  $f: /" "$base/$f"; done
	failed=$((failed + 1))
}

# The README's first command, from its cagerun on (the build before it is
# what produced the cagerun under test).
line=$(grep -m1 '^\.ci/deps && ' "$SRC/README.md" | sed -n 's/^.*&& build\/cagerun /build\/cagerun /p')
[ -n "$line" ] || { echo "FAIL setup: no '.ci/deps && ... build/cagerun' line in README.md"; exit 1; }
cd "$SRC" || exit 1
subject=$(git log --oneline -1) || exit 1

if ls "$HOME/.ssh" >"$base/out" 2>"$base/err" && grep -qx id_rsa "$base/out"; then
	ok "control: ~/.ssh is listed without cagerun"
else
	bad "control: ~/.ssh not listed without cagerun"
fi

timeout -k 5 "$T" sh -c "$line" >"$base/out" 2>"$base/err"
rc=$?
if [ "$rc" -ne 0 ]; then
	bad "readme: exit status $rc, not 0 ($line)"
elif ! grep -Fqx -- "$subject" "$base/out"; then
	bad "readme: no git log line '$subject'"
elif ! grep -q "ls: cannot open directory .*\.ssh.*: Permission denied" "$base/err" ||
	grep -q id_rsa "$base/out"; then
	bad "readme: ~/.ssh was not refused"
elif ! grep -Eq '^cagerun: +example\.com:443 ' "$base/err"; then
	bad "readme: example.com:443 not listed among the denied hosts"
else
	ok "readme: status 0, git works, ~/.ssh refused, example.com refused (soft limit 1024)"
fi

timeout -k 5 "$T" build/cagerun -q -p examples/claude-code.cage -D workspace="$PWD" -- \
	sh -c 'ulimit -Sn' >"$base/out" 2>"$base/err"
rc=$?
if [ "$rc" -eq 0 ] && [ "$(cat "$base/out")" = 1024 ]; then
	ok "limit: the command's soft open-files limit is 1024, as outside"
else
	bad "limit: status $rc, soft limit inside '$(cat "$base/out")', not 1024"
fi

want="cagerun: the open-files limit is 150 (hard limit 150); the proxy needs at least 224 descriptors (32 connections): raise the hard limit (as root: ulimit -Hn 4096, or nofile in /etc/security/limits.conf) and run again; nothing was run"
(ulimit -n 150 && exec timeout -k 5 "$T" build/cagerun -q -p examples/claude-code.cage \
	-D workspace="$PWD" -- sh -c 'echo ran') >"$base/out" 2>"$base/err"
rc=$?
if [ "$rc" -eq 125 ] && [ ! -s "$base/out" ] && grep -Fqx -- "$want" "$base/err"; then
	ok "too-low: 125 and how to raise the limit, with a hard limit of 150"
else
	bad "too-low: status $rc (want 125 and: $want)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
