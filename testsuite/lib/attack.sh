# attack.sh - the harness the qualification suites share (sourced by
# testsuite/qual/guard.sh and testsuite/gitscan/qual.sh): counting, and an
# attack with its control.
#
# The suite sets OUT (a scratch file), WS (the workspace), STARTED (the
# line its cagerun wrapper prints before the command runs), FAIL_LINES
# (how much of OUT a failure shows) and defines ctl SCRIPT (SCRIPT run in
# the workspace without cagerun).
PASS=0 FAILED=0
pass() { PASS=$((PASS + 1)); echo "PASS $1"; }
fail() {
	FAILED=$((FAILED + 1))
	echo "FAIL $1: $2"
	[ -s "$OUT" ] && head -n "$FAIL_LINES" "$OUT" | sed 's/^/    | /'
	return 0
}

# run_attack CASE SCRIPT CHECK MARK PREP CAGE...: PREP (a command) lays
# the fixture out; SCRIPT run without cagerun must make CHECK (sh, in the
# workspace) true, or the control fails the case. Then PREP again, and
# `CAGE... SCRIPT` runs it under cagerun: the command must start (STARTED
# printed; MARK too, when not empty: the attacking program did run) and
# CHECK must be false afterwards.
run_attack() {
	c=$1 script=$2 check=$3 mark=$4 prep=$5
	shift 5
	$prep
	ctl "$script" >"$OUT" 2>&1
	if ! (cd "$WS" && sh -c "$check"); then
		fail "$c" "control: the attack did not work without cagerun"
		return
	fi
	$prep
	"$@" "$script" >"$OUT" 2>&1
	if ! grep -q "^$STARTED\$" "$OUT"; then
		fail "$c" "cagerun did not start the command"
	elif [ -n "$mark" ] && ! grep -q "^$mark\$" "$OUT"; then
		fail "$c" "the attacking program did not run under cagerun"
	elif (cd "$WS" && sh -c "$check"); then
		fail "$c" "the attack worked under cagerun"
	else
		pass "$c"
	fi
}
