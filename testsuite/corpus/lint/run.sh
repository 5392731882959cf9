#!/bin/sh
# run.sh - one lint corpus case: `cagec lint` on ID/KIND-N.cage.
#
#   ID/bad-N.cage  must report [ID] at the line named by "# expect: LINE"
#                  ("-" for a finding without a location)
#   ID/ok-N.cage   a near-miss: must not report [ID] at all
#   both           stdout must equal ID/KIND-N.expected, and the exit status
#                  must be 1 exactly when the output holds an error
#
# Cases are linted for Linux (a case's own --target comes later and wins),
# so results do not depend on the host.
# Directives (comment lines, at the end so they do not move line numbers):
#   # args: ...     extra cagec lint arguments; @ROOT@ is the case's tree
#   # setup: ...    a shell command run in a fresh temporary directory
#                   (@ROOT@) before linting, e.g. to build symlinks
# Set CAGE_UPDATE_GOLDEN=1 to rewrite the .expected files (then review).
set -eu
cagec=$1
case_file=$2
dir=$(cd "$(dirname "$case_file")" && pwd)
base=$(basename "$case_file" .cage)
id=$(basename "$dir")
src=$(cd "$dir/../../../.." && pwd)
kind=${base%%-*}
case_file=$dir/$base.cage
root=$(mktemp -d)
out=$(mktemp)
trap 'rm -rf "$root" "$out"' EXIT

sed -n 's/^# setup: //p' "$case_file" | while IFS= read -r cmd; do
	(cd "$root" && sh -eu -c "$cmd")
done
args=$(sed -n 's/^# args: //p' "$case_file" | head -n 1 | sed "s|@ROOT@|$root|g")
cd "$dir"
set +e
# shellcheck disable=SC2086 # args are word-split on purpose
"$cagec" lint --target linux --home /home/u --stdlib "$src/stdlib" --color=never $args "$base.cage" >"$out" 2>&1
status=$?
set -e
sed -i "s|$root|@ROOT@|g" "$out"

if [ "${CAGE_UPDATE_GOLDEN:-}" = 1 ]; then
	cp "$out" "$base.expected"
fi
fail() {
	echo "FAIL: $id/$base: $*" >&2
	cat "$out" >&2
	exit 1
}
if grep -q 'AddressSanitizer\|runtime error:' "$out"; then
	fail "sanitizer report"
fi
if grep -q '^[^ ].*: error: ' "$out"; then want=1; else want=0; fi
[ "$status" -eq "$want" ] || fail "exit status $status, want $want"
if [ "$kind" = bad ]; then
	line=$(sed -n 's/^# expect: //p' "$case_file" | head -n 1)
	[ -n "$line" ] || fail "bad case without '# expect: LINE'"
	if [ "$line" = - ]; then
		pat="^cagec: [a-z]*: .*\[$id\]\$"
	else
		pat="^$base\.cage:$line:[0-9]*: [a-z]*: .*\[$id\]\$"
	fi
	grep -q "$pat" "$out" || fail "no [$id] finding at line $line"
else
	! grep -q "\[$id\]\$" "$out" || fail "near-miss reported as [$id]"
fi
diff -u "$base.expected" "$out" || fail "output differs from $base.expected"
