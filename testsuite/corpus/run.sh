#!/bin/sh
# run.sh - one corpus case: compile CASE.cage with cagec and compare.
#   ok/NAME.cage   must exit 0; stdout must equal ok/NAME.ir
#   bad/NAME.cage  must exit 1; stderr must equal bad/NAME.err
# Each is compiled for Linux with home /home/u, so results do not depend on
# the machine.
# A line "# args: ..." in the case adds cagec arguments. Set
# CAGE_UPDATE_GOLDEN=1 to rewrite the expectations (then review the diff).
set -eu
cagec=$1
case_file=$2
dir=$(dirname "$case_file")
base=$(basename "$case_file" .cage)
kind=$(basename "$dir")
root=$(cd "$dir/../../.." && pwd)
args=$(sed -n 's/^# args: //p' "$case_file" | head -n 1)
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
cd "$dir"
set +e
# shellcheck disable=SC2086 # args are word-split on purpose
"$cagec" "$base.cage" --emit ir --target linux --home /home/u --stdlib "$root/stdlib" --color=never $args >"$out" 2>"$err"
status=$?
set -e
# Messages naming the search path show the checkout as @ROOT@.
sed -i "s|$root|@ROOT@|g" "$err"
if [ "$kind" = ok ]; then
	want_status=0 want_file=$base.ir got=$out
else
	want_status=1 want_file=$base.err got=$err
fi
if [ "${CAGE_UPDATE_GOLDEN:-}" = 1 ]; then
	cp "$got" "$want_file"
fi
if [ "$status" -ne "$want_status" ]; then
	echo "FAIL: $case_file: exit status $status, want $want_status" >&2
	cat "$err" >&2
	exit 1
fi
if [ "$status" -gt 1 ] || grep -q 'AddressSanitizer\|runtime error:' "$err"; then
	cat "$err" >&2
	exit 1
fi
if ! diff -u "$want_file" "$got"; then
	echo "FAIL: $case_file: output differs from $want_file" >&2
	exit 1
fi
