#!/bin/sh
# thin.sh CAGEC CAGERUN - the launcher links none of the compiler's
# authoring tools (docs/architecture.md, "What cagerun links"): no SBPL
# emitter, no backend table, no formatter, no suggest, and nothing of
# lint (its checks run in cage-lint, layers_lint.h). Each symbol is first
# shown defined in cagec, so a renamed function fails here instead of
# passing unnoticed.
set -eu
cagec=$1
cagerun=$2
fails=0
defined() { nm "$1" | awk -v s="$2" '$3 == s && $2 ~ /^[TtDdBbRr]$/ { f = 1 } END { exit !f }'; }
for sym in sbpl_emit emit_find emit_backends cage_emit fmt_source fmt_command suggest_main \
	monitor_report_main sg_collapse lint_main lint_write_json lint_write_sarif lint_explain \
	lint_policy lint_checks lint_check_find lint_report lint_apply_controls; do
	if ! defined "$cagec" "$sym"; then
		echo "FAIL: cagec does not define $sym (renamed? update this list)" >&2
		fails=$((fails + 1))
	elif defined "$cagerun" "$sym"; then
		echo "FAIL: cagerun links $sym" >&2
		fails=$((fails + 1))
	fi
done
# The Linux launcher has no Seatbelt launcher; the test build has it.
if [ "$(uname -s)" = Linux ] && defined "$cagerun" sbx_run_command; then
	echo "FAIL: cagerun links the Seatbelt launcher (sbx_run_command)" >&2
	fails=$((fails + 1))
fi
# And it says so when asked for it, running nothing (125): a control
# shows the command creating its sentinel when run directly first.
if [ "$(uname -s)" = Linux ]; then
	T=$(mktemp -d)
	trap 'rm -rf "$T"' EXIT
	printf 'cage 1\nimport "std/base"\nprofile main {\n    private tmp home\n}\n' >"$T/p.cage"
	sh -c 'touch "$1"' _ "$T/S"
	[ -e "$T/S" ] || { echo "FAIL: control: the command did not create its sentinel" >&2; exit 1; }
	rm -f "$T/S"
	rc=0
	"$cagerun" --backend seatbelt -p "$T/p.cage" -- sh -c 'touch "$1"' _ "$T/S" 2>"$T/err" || rc=$?
	if [ "$rc" != 125 ] || ! grep -q "built for linux only" "$T/err" || [ -e "$T/S" ]; then
		echo "FAIL: cagerun --backend seatbelt: status $rc, $(cat "$T/err")" >&2
		fails=$((fails + 1))
	fi
fi
[ "$fails" -eq 0 ] || exit 1
echo "ok: cagerun links no authoring tool and refuses --backend seatbelt"
