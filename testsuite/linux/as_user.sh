#!/bin/sh
# as_user.sh USER COMMAND ARGS... - runs a test as the unprivileged USER
# when CTest runs as root (USER is created by .ci/deps), so that what holds
# for root is shown to hold for an ordinary user too; run as anyone else,
# it runs the command as that user. Either way the soft open-files limit
# is lowered to 1024, Debian's and Ubuntu's default for a login, so that
# what the tests show holds under it. Fails (never skips) when USER is
# missing or cannot reach the programs.
set -u
[ "$(ulimit -Sn)" = unlimited ] || [ "$(ulimit -Sn)" -gt 1024 ] && ulimit -Sn 1024
user=$1
shift
if [ "$(id -u)" -ne 0 ]; then
	exec "$@"
fi
if ! id "$user" >/dev/null 2>&1; then
	echo "FAIL: user $user does not exist (.ci/deps creates it)"
	echo "0 passed, 1 failed"
	exit 1
fi
for f in "$@"; do
	case $f in
	/*) if [ -e "$f" ] && ! setpriv --reuid="$user" --regid="$user" --init-groups test -r "$f"; then
		echo "FAIL: $user cannot read $f (build where every user can reach it)"
		echo "0 passed, 1 failed"
		exit 1
	fi ;;
	esac
done
cd /
exec setpriv --reuid="$user" --regid="$user" --init-groups \
	env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME=/nonexistent TMPDIR=/tmp "$@"
