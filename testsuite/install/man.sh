#!/bin/sh
# man.sh - the hand-written man pages (docs/man/) format without a single
# warning from groff (-ww: all warnings) and, when man-db is there, from
# `man --warnings`, and each has the sections a reader looks for.
set -u
src=$1
fails=0
for page in "$src"/docs/man/*.[1-8]; do
	out=$(groff -man -ww -z -Tutf8 "$page" 2>&1)
	[ -z "$out" ] || { echo "FAIL: groff warns on $page:" >&2; echo "$out" >&2; fails=$((fails + 1)); }
	if command -v man >/dev/null; then
		out=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
		[ -z "$out" ] || { echo "FAIL: man warns on $page:" >&2; echo "$out" >&2; fails=$((fails + 1)); }
	fi
	for sec in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
		grep -q "^\.SH \"*$sec\"*\$" "$page" || { echo "FAIL: $page has no $sec section" >&2; fails=$((fails + 1)); }
	done
done
for want in cagec.1 cagerun.1 cage.5; do
	[ -f "$src/docs/man/$want" ] || { echo "FAIL: docs/man/$want is missing" >&2; fails=$((fails + 1)); }
done
[ "$fails" -eq 0 ] || exit 1
echo "man pages: $(ls "$src"/docs/man | wc -l) pages, no warnings"
