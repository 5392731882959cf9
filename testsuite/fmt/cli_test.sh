#!/bin/sh
# cli_test.sh - `cagec fmt` from the outside: exit statuses, --check's diff,
# -w rewriting atomically (mode, symlinks, untouched when already formatted,
# untouched on syntax errors), standard input, usage errors.
# Also: the example in docs/language.md "Formatting" is itself formatted, and
# every option of `cagec fmt --help` is documented in docs/cagec.md.
# usage: cli_test.sh CAGEC SOURCE_DIR
set -u
CAGEC=$1
SRC=$2
T=$(mktemp -d) || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# status WANT CMD...: runs CMD with stdout/stderr in $T/out and $T/err.
status() {
	want=$1; shift
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	[ "$got" -eq "$want" ] || { fail "'$*' exited $got, want $want"; cat "$T/err"; }
}

printf 'cage   1\nprofile p { allow read "/a" }\n' >"$T/messy.cage"
printf 'cage 1\nprofile p {\n    allow read "/a"\n}\n' >"$T/clean.cage"
printf 'cage 1\nprofile p {\n  allow rread "/a"\n}\n' >"$T/bad.cage"

# Printing: one file to stdout, nothing changed on disk.
cp "$T/messy.cage" "$T/messy.orig"
status 0 "$CAGEC" fmt "$T/messy.cage"
cmp -s "$T/out" "$T/clean.cage" || fail "printed text is not the canonical form"
cmp -s "$T/messy.cage" "$T/messy.orig" || fail "printing changed the file"

# --check: 0 when formatted, 1 with a diff and the name when not.
status 0 "$CAGEC" fmt --check "$T/clean.cage"
[ -s "$T/out" ] && fail "--check printed something for a formatted file"
status 1 "$CAGEC" fmt --check "$T/clean.cage" "$T/messy.cage"
grep -q "^--- $T/messy.cage\$" "$T/out" || fail "--check diff does not name the file"
grep -q '^-profile p { allow read "/a" }$' "$T/out" || fail "--check diff lacks the old line"
grep -q '^+    allow read "/a"$' "$T/out" || fail "--check diff lacks the new line"
grep -q "messy.cage is not formatted" "$T/err" || fail "--check does not list the file"
grep -q "clean.cage" "$T/err" && fail "--check lists a formatted file"
# The diff is a real patch: applying it gives the formatted file. (patch is
# a test dependency installed by .ci/deps; its absence is a failure.)
command -v patch >/dev/null 2>&1 || fail "patch(1) is not installed"
cp "$T/messy.cage" "$T/patched.cage"
sed "s|^--- .*|--- $T/patched.cage|; s|^+++ .*|+++ $T/patched.cage|" "$T/out" >"$T/diff"
patch -s "$T/patched.cage" <"$T/diff" >/dev/null 2>&1 || fail "--check diff does not apply"
cmp -s "$T/patched.cage" "$T/clean.cage" || fail "--check diff does not produce the formatted file"

# Syntax errors: diagnostic, status 1, file untouched even with -w.
cp "$T/bad.cage" "$T/bad.orig"
status 1 "$CAGEC" fmt -w "$T/bad.cage"
grep -q "bad.cage:3:9: error: 'rread' is not an access" "$T/err" || fail "no diagnostic for a syntax error"
cmp -s "$T/bad.cage" "$T/bad.orig" || fail "-w changed a file with syntax errors"
status 1 "$CAGEC" fmt "$T/bad.cage"
[ -s "$T/out" ] && fail "printed text for a file with syntax errors"

# -w: rewrites, keeps the mode, writes through a symlink, leaves no temp file.
cp "$T/messy.orig" "$T/w.cage"
chmod 640 "$T/w.cage"
ln -s w.cage "$T/link.cage"
status 0 "$CAGEC" fmt -w "$T/link.cage"
[ -L "$T/link.cage" ] || fail "-w replaced the symlink"
cmp -s "$T/w.cage" "$T/clean.cage" || fail "-w did not write the canonical form"
[ "$(stat -c %a "$T/w.cage")" = 640 ] || fail "-w changed the mode to $(stat -c %a "$T/w.cage")"
ls "$T" | grep -q '\.tmp\.' && fail "-w left a temporary file"
# ... and does not touch a file that is already formatted.
touch -d '2001-01-01 00:00:00' "$T/clean.cage"
status 0 "$CAGEC" fmt -w "$T/clean.cage"
[ "$(stat -c %Y "$T/clean.cage")" = "$(date -d '2001-01-01 00:00:00' +%s)" ] ||
	fail "-w rewrote a formatted file"
# -w in a directory it cannot write: an error, the file unchanged.
if [ "$(id -u)" != 0 ]; then
	mkdir "$T/ro" && cp "$T/messy.orig" "$T/ro/x.cage" && chmod 555 "$T/ro"
	status 2 "$CAGEC" fmt -w "$T/ro/x.cage"
	cmp -s "$T/ro/x.cage" "$T/messy.orig" || fail "failed -w changed the file"
	chmod 755 "$T/ro"
fi

# --check -w: rewrites and still reports.
cp "$T/messy.orig" "$T/cw.cage"
status 1 "$CAGEC" fmt --check -w "$T/cw.cage"
cmp -s "$T/cw.cage" "$T/clean.cage" || fail "--check -w did not rewrite"

# Standard input.
"$CAGEC" fmt - <"$T/messy.orig" >"$T/out" 2>"$T/err" || fail "fmt - failed"
cmp -s "$T/out" "$T/clean.cage" || fail "fmt - printed the wrong text"

# Usage errors: status 2.
status 2 "$CAGEC" fmt
status 2 "$CAGEC" fmt "$T/clean.cage" "$T/messy.cage"
status 2 "$CAGEC" fmt --bogus "$T/clean.cage"
status 2 "$CAGEC" fmt --color=sometimes "$T/clean.cage"
status 2 "$CAGEC" fmt "$T/missing.cage"
grep -q "cannot open" "$T/err" || fail "no message for a missing file"
status 2 "$CAGEC" fmt "$T"
status 0 "$CAGEC" fmt --help
grep -q -- "--check" "$T/out" || fail "--help does not mention --check"

# The documentation shows the canonical form and names every option.
awk '/^## Formatting/ { f = 1 } f && /^```/ { n++; next } f && n == 1 { print }' \
	"$SRC/docs/language.md" >"$T/doc.cage"
[ -s "$T/doc.cage" ] || fail "no example found in docs/language.md, Formatting"
status 0 "$CAGEC" fmt --check "$T/doc.cage"
cat "$T/out"
"$CAGEC" fmt --help | grep -o -- '--[a-z][a-z-]*' | sort -u >"$T/help-opts"
sed -n '/^## cagec fmt/,/^## /p' "$SRC/docs/cagec.md" | grep -o -- '--[a-z][a-z-]*' | sort -u >"$T/doc-opts"
missing=$(comm -23 "$T/help-opts" "$T/doc-opts")
[ -z "$missing" ] || fail "options of cagec fmt --help not in docs/cagec.md: $missing"

[ "$fails" -eq 0 ] && echo "all cagec fmt CLI checks passed"
[ "$fails" -eq 0 ]
