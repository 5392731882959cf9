#!/bin/sh
# cli_test.sh - cagerun's command line: usage when nothing is given, a
# message that names the real mistake for each wrong form (and no "needs a
# value" for an option that takes none), did-you-mean for a misspelt
# option, and --help agreeing with docs/cagerun.md: every option in --help
# is in the docs' option tables and every option there is in --help.
# usage: cli_test.sh CAGERUN SOURCE_DIR
set -u
cagerun=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0

# expect STATUS PATTERN ARGS...: status and a grep pattern on stdout+stderr.
expect() {
	want=$1 pattern=$2
	shift 2
	(cd "$tmp" && timeout 20 "$cagerun" "$@" >"$tmp/out" 2>&1 </dev/null)
	got=$?
	if [ "$got" -ne "$want" ] || ! grep -q -- "$pattern" "$tmp/out"; then
		echo "FAIL: cagerun $*: status $got (want $want, /$pattern/), output:" >&2
		head -c 2000 "$tmp/out" >&2
		fails=$((fails + 1))
	else
		passes=$((passes + 1))
	fi
}
refute() { # PATTERN ARGS...: the output of the last expect must not match
	if grep -q -- "$1" "$tmp/out"; then
		echo "FAIL: output has /$1/:" >&2
		cat "$tmp/out" >&2
		fails=$((fails + 1))
	else
		passes=$((passes + 1))
	fi
}

expect 125 '^usage: cagerun'
expect 125 "unexpected argument 'agent.cage': a policy is given with -p agent.cage" --proxy-only agent.cage
refute 'needs a value'
expect 125 "unknown option '--bogus'" --bogus
refute 'needs a value'
expect 125 "unknown option '--polcy'; did you mean '--policy'" --polcy x.cage
expect 125 "unknown option '--proxyonly'; did you mean '--proxy-only'" --proxyonly
expect 125 "option '-p' needs a value (POLICY)" -p
expect 125 "option '--pin' needs a value" --pin -- true
expect 125 "option '--show' takes no value" --show=yes
expect 125 "unexpected argument 'true': the command to run goes after --" true
expect 125 '-- must be followed by the command' --
expect 125 'nothing to run' -q
expect 125 '^cagerun: -p a.cage: No such file or directory; nothing was run' -p a.cage --task b.cage -- true
expect 125 '--proxy-only needs -p POLICY' --proxy-only
expect 125 "bad value for --max-conns" --proxy-only -p x.cage --max-conns 0
expect 125 "-D wants NAME=VALUE" -D novalue -- true
expect 0 '^cagerun [0-9]' --version
expect 0 '^Exit status:' --help
expect 0 '125 when' --help

# --help against the docs' option tables.
"$cagerun" --help >"$tmp/help"
sed -n 's/^  \(-[A-Za-z], \)\{0,1\}--\([a-z-]*\).*/\2/p; s/^      --\([a-z-]*\).*/\1/p' "$tmp/help" |
	sort -u >"$tmp/help.opts"
grep '^| `-' "$src/docs/cagerun.md" | awk -F'|' '{ print $2 }' |
	grep -o -- '`--[a-z][a-z-]*' | sed 's/^`--//' | sort -u >"$tmp/doc.opts"
if [ "$(wc -l <"$tmp/help.opts")" -lt 20 ]; then
	echo "FAIL: read only $(wc -l <"$tmp/help.opts") options from --help" >&2
	fails=$((fails + 1))
fi
if diff -u "$tmp/help.opts" "$tmp/doc.opts" >"$tmp/d"; then
	passes=$((passes + 1))
else
	echo "FAIL: cagerun --help (-) and docs/cagerun.md's option tables (+) differ:" >&2
	cat "$tmp/d" >&2
	fails=$((fails + 1))
fi
# short forms: each "-x, --name" of --help is written the same in the docs
sed -n 's/^  -\([A-Za-z]\), --\([a-z-]*\).*/\1 \2/p' "$tmp/help" | while read -r s l; do
	grep -q -- "^| \`-$s\`, \`--$l" "$src/docs/cagerun.md" || echo "-$s, --$l"
done >"$tmp/shorts"
if [ -s "$tmp/shorts" ]; then
	echo "FAIL: docs/cagerun.md lacks these short forms:" >&2
	cat "$tmp/shorts" >&2
	fails=$((fails + 1))
else
	passes=$((passes + 1))
fi

if [ "$fails" -ne 0 ]; then
	echo "$passes passed, $fails failed"
	exit 1
fi
echo "$passes passed, 0 failed"
