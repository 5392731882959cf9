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

# The diff is minimal: two changes far apart are two hunks with 3 lines of
# context, the unchanged lines between them are not shown, and it applies.
{
	printf 'cage   1\nprofile p {   allow read "/a" }\n'
	for i in 1 2 3 4 5 6 7 8 9; do printf '# keep%s\n' "$i"; done
	printf 'profile q {\n  allow read "/b"\n}\n'
} >"$T/two.cage"
status 1 "$CAGEC" fmt --check "$T/two.cage"
[ "$(grep -c '^@@' "$T/out")" = 2 ] || fail "two distant changes are not two hunks: $(cat "$T/out")"
grep -q '^@@ -1,5 +1,7 @@$' "$T/out" || fail "first hunk header wrong: $(cat "$T/out")"
grep -q '^@@ -10,5 +12,5 @@$' "$T/out" || fail "second hunk header wrong: $(cat "$T/out")"
grep -q 'keep5' "$T/out" && fail "the diff shows unchanged lines far from any change"
# apply_check NAME: the diff in $T/out applied to a copy of $T/NAME.cage.
apply_check() {
	cp "$T/$1.cage" "$T/$1.patched"
	sed "s|^--- .*|--- $T/$1.patched|; s|^+++ .*|+++ $T/$1.patched|" "$T/out" >"$T/diff"
	patch -s "$T/$1.patched" <"$T/diff" >"$T/patch.out" 2>&1 ||
		fail "--check diff of $1 does not apply: $(cat "$T/patch.out")"
}
apply_check two
"$CAGEC" fmt "$T/two.cage" >"$T/two.want"
cmp -s "$T/two.patched" "$T/two.want" || fail "two-hunk diff does not produce the formatted file"
# No newline at the end of the file: marked, and still applies.
printf 'cage 1\nprofile p {\n  allow read "/a"\n}' >"$T/nonl.cage"
status 1 "$CAGEC" fmt --check "$T/nonl.cage"
grep -q '^\\ No newline at end of file$' "$T/out" || fail "missing newline not marked"
apply_check nonl
"$CAGEC" fmt "$T/nonl.cage" >"$T/nonl.want"
cmp -s "$T/nonl.patched" "$T/nonl.want" || fail "no-newline diff does not produce the formatted file"
# Past the cap (40 changed lines): whole hunks only, then how many were left out.
{
	printf 'cage 1\n'
	i=0
	while [ $i -lt 30 ]; do
		printf 'profile p%s {\n  allow read "/a"\n}\n#\n#\n#\n#\n#\n#\n#\n' "$i"
		i=$((i + 1))
	done
} >"$T/many.cage"
status 1 "$CAGEC" fmt --check "$T/many.cage"
[ "$(grep -c '^@@' "$T/out")" = 20 ] || fail "capped diff shows $(grep -c '^@@' "$T/out") hunks, want 20"
grep -q '^\.\.\. 10 more hunks not shown' "$T/out" || fail "capped diff does not count the hunks left out"
apply_check many
grep -c '^    allow read' "$T/many.patched" | grep -qx 20 || fail "capped diff did not fix the first 20 rules"

# A misspelt option gets the closest one.
status 2 "$CAGEC" fmt --chek "$T/clean.cage"
grep -q "unknown option '--chek'; did you mean '--check'?" "$T/err" || fail "fmt: no did you mean for --chek"

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
