# check.sh - sourced by the layer tests that drive cagerun on fixtures
# (command_test.sh, task_policy.sh): a scratch directory $tmp (its real
# path, removed at exit), ok/bad counters, and `finish`, the closing
# "N passed, N failed" line and status. bad shows $tmp/out and $tmp/err.
set -u
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
tmp=$(cd "$tmp" && pwd -P)
: >"$tmp/out" && : >"$tmp/err" || exit 1
passes=0 fails=0
ok() { passes=$((passes + 1)); echo "ok: $1"; }
bad() {
	echo "FAIL: $1"
	sed 's/^/  out: /' "$tmp/out"
	sed 's/^/  err: /' "$tmp/err"
	fails=$((fails + 1))
}
# refused LABEL TEXT...: the last run ($rc) was refused with 125 before
# the command printed anything, and stderr has each TEXT (fixed strings).
refused() {
	label=$1
	shift
	if [ "$rc" -ne 125 ] || [ -s "$tmp/out" ]; then
		bad "$label: status $rc, want 125 and no output"
		return
	fi
	for t in "$@"; do
		if ! grep -Fq -- "$t" "$tmp/err"; then
			bad "$label: no '$t' on stderr"
			return
		fi
	done
	ok "$label"
}
finish() {
	echo "$passes passed, $fails failed"
	[ "$fails" -eq 0 ]
}
