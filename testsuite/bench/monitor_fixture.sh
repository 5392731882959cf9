#!/bin/sh
# monitor_fixture.sh - what monitor.sh and monitor_cpu.sh run, written
# into DIR: usr.sh, the file-heavy workload, and three policies:
# covered.cage (monitor mode; DIR and, through std/base, the system's
# files covered), bare.cage (monitor mode, only /usr covered: everything
# in DIR would-block) and enforce.cage (enforce: DIR and /usr/include).
# Usage: monitor_fixture.sh DIR
set -eu
tmp=${1:?usage: monitor_fixture.sh DIR}
# the file-heavy workload; files the user may not read fail alike in
# every row, hence the `:` (xargs would exit 123)
printf 'find /usr/share -type f 2>/dev/null | head -n 5000 | xargs cat >/dev/null 2>&1\n:\n' \
	>"$tmp/usr.sh"

cat >"$tmp/covered.cage" <<P
cage 1
import "std/base"
profile watch {
    mode monitor
    allow read write exec "$tmp/**"
    env keep PATH HOME
}
P
cat >"$tmp/bare.cage" <<P
cage 1
import "std/base"
profile watch {
    mode monitor
    allow read exec "/usr/**"
    env keep PATH HOME
}
P
cat >"$tmp/enforce.cage" <<P
cage 1
import "std/base"
profile build {
    allow read write exec "$tmp/**"
    allow read "/usr/include/**"
    env keep PATH HOME
}
P
