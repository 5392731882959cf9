#!/bin/sh
# fake-sandbox-exec.sh - stands in for /usr/bin/sandbox-exec in the test
# program cagerun_fakesbx (never in cagerun): records what cagerun passes
# (argv, the profile and its mode, the -D values, the environment), checks
# the shape `-f PROFILE [-D NAME=VALUE]... -- COMMAND...`, then runs the
# command WITHOUT any sandbox. $SBX_FAKE_LOG (kept by the test policy)
# names the record's prefix.
log=${SBX_FAKE_LOG:?}
: > "$log.argv"
for a in "$@"; do printf '[%s]\n' "$a" >> "$log.argv"; done
[ "$1" = -f ] || { echo "fake sandbox-exec: no -f" >&2; exit 71; }
stat -c %a "$2" > "$log.mode"
cp "$2" "$log.profile"
shift 2
: > "$log.defines"
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	[ "$1" = -D ] || { echo "fake sandbox-exec: unexpected $1" >&2; exit 71; }
	printf '%s\n' "$2" >> "$log.defines"
	shift 2
done
[ "$1" = -- ] || { echo "fake sandbox-exec: no --" >&2; exit 71; }
shift
env > "$log.env"
exec "$@"
