#!/bin/sh
# cli_test.sh - cagec as a user meets it: exit statuses (0 ok, 1 policy
# errors, 2 usage or I/O), hostile inputs that must give a located message
# and never a crash or hang, atomic output, and --help agreeing with
# docs/cagec.md.
set -u
cagec=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0

# expect STATUS PATTERN -- ARGS...: run cagec, check status and that
# stderr+stdout match the grep pattern; a crash (status > 2) always fails.
expect() {
	want=$1 pattern=$2
	shift 3
	timeout 20 "$cagec" "$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" -ne "$want" ] || { [ -n "$pattern" ] && ! grep -q -- "$pattern" "$tmp/out"; }; then
		echo "FAIL: cagec $*: status $got (want $want), output:" >&2
		head -c 2000 "$tmp/out" >&2
		fails=$((fails + 1))
	else
		passes=$((passes + 1))
	fi
}

good=$tmp/good.cage
printf 'cage 1\nallow read "/usr/**"\n' >"$good"

expect 0 'usage: cagec FILE' -- --help
expect 0 "^cagec [0-9]" -- --version
expect 2 'no policy file given' --
expect 2 "unknown option '--frobnicate'" -- --frobnicate "$good"
expect 2 'needs a value' -- "$good" -o
expect 2 '-D wants NAME=VALUE' -- "$good" -D novalue
expect 2 'one policy file at a time' -- "$good" "$good"
expect 2 "unknown backend 'nope'" -- "$good" --emit nope
expect 2 '--color wants' -- "$good" --color=sometimes
expect 2 "unknown backend 'sbp'; did you mean 'sbpl'?" -- "$good" --emit sbp
expect 2 "not 'linx'; did you mean 'linux'?" -- "$good" --target linx
expect 2 "not 'macoss'; did you mean 'macos'?" -- lint --target macoss "$good"

# Errors that say how to fix them: the closest name for a misspelt -D name
# or --profile, $PWD for a relative -D path.
printf 'cage 1\nparam project: path\nprofile agent {\n    allow read project\n}\n' >"$tmp/dym.cage"
expect 1 "-D projcet: the policy declares no param of that name; did you mean 'project'?" -- \
	"$tmp/dym.cage" --emit ir -D projcet=/p -D project=/p
expect 1 "no profile named 'agnet'; did you mean 'agent'?" -- \
	"$tmp/dym.cage" --emit ir -D project=/p --profile agnet
expect 1 'path is not absolute; give an absolute path, e.g. -D project="$PWD"' -- \
	"$tmp/dym.cage" --emit ir -D project=.
expect 1 'e.g. -D project="$PWD/src"' -- "$tmp/dym.cage" --emit ir -D project=./src
expect 2 "cannot open '$tmp/missing.cage': No such file" -- "$tmp/missing.cage"
expect 2 "is a directory" -- "$tmp"
expect 2 "not a regular file" -- /dev/null
mkfifo "$tmp/fifo"
expect 2 "not a regular file" -- "$tmp/fifo"
expect 0 'allow read "/usr/\*\*"' -- "$good" --emit ir

# empty, garbage, NUL bytes: located errors, status 1
: >"$tmp/empty.cage"
expect 1 'empty.cage:1:1: error: missing version line' -- "$tmp/empty.cage"
head -c 65536 /dev/urandom >"$tmp/garbage.cage"
expect 1 'garbage.cage:[0-9]*:[0-9]*: error:' -- "$tmp/garbage.cage"
printf 'cage 1\nallow read "/a"\n\000\n' >"$tmp/nul.cage"
expect 1 'nul.cage:3:1: error: NUL byte' -- "$tmp/nul.cage"
# text garbage without NULs: every line wrong, capped, still status 1
tr -c 'a-z{}"=,\n ' 'x' </dev/urandom | head -c 200000 >"$tmp/text-garbage.cage"
expect 1 'text-garbage.cage:1:1: error' -- "$tmp/text-garbage.cage"

# a 10 MB valid policy compiles; a 17 MB one is refused with the limit named
awk 'BEGIN { print "cage 1"; for (i = 0; i < 330000; i++) printf "allow read \"/data/dir%06d/**\"\n", i }' >"$tmp/big.cage"
expect 0 '' -- "$tmp/big.cage" --emit ir -o "$tmp/big.ir"
awk 'BEGIN { print "cage 1"; for (i = 0; i < 560000; i++) printf "allow read \"/data/dir%06d/**\"\n", i }' >"$tmp/huge.cage"
expect 2 'limited to 16 MiB' -- "$tmp/huge.cage"
# deep nesting of braces and a very long line
awk 'BEGIN { print "cage 1"; for (i = 0; i < 100000; i++) printf "{"; print "" }' >"$tmp/deep.cage"
expect 1 'deep.cage:2:1: error: unexpected' -- "$tmp/deep.cage"
# one 1.5 MB line of targets: columns are computed incrementally, so this
# is linear (the time-out above catches a quadratic regression)
awk 'BEGIN { print "cage 1"; printf "allow read \"/a0\""; for (i = 1; i < 100000; i++) printf ", \"/a%d\"", i; print "" }' >"$tmp/wide.cage"
expect 0 '' -- "$tmp/wide.cage" --emit ir -o "$tmp/wide.ir"
# costs that grow faster than the input are cut off with an error, not a
# hang: lists naming lists (4^16 targets), a 20,000-profile extends chain,
# 10,000 module rules copied into 5,000 profiles
awk 'BEGIN { print "cage 1"; print "list l0 = \"a.com\""; for (i = 1; i <= 16; i++) printf "list l%d = l%d, l%d, l%d, l%d\n", i, i-1, i-1, i-1, i-1; print "allow connect l16" }' >"$tmp/explode.cage"
expect 1 'error: policy too large: its lists and rules expand' -- "$tmp/explode.cage"
awk 'BEGIN { print "cage 1"; print "profile p0 { allow read \"/a\" }"; for (i = 1; i < 20000; i++) printf "profile p%d extends p%d {}\n", i, i-1 }' >"$tmp/chain.cage"
expect 1 "chain.cage:66:21: error: 'extends' chains longer than 64" -- "$tmp/chain.cage"
awk 'BEGIN { print "cage 1"; for (i = 0; i < 10000; i++) printf "allow read \"/m%d\"\n", i; for (i = 0; i < 5000; i++) printf "profile p%d {}\n", i }' >"$tmp/wideprof.cage"
expect 1 "error: policy too large: with profile 'p200'" -- "$tmp/wideprof.cage"
# import cycle, missing import, param never given
printf 'cage 1\nimport "./b"\n' >"$tmp/a.cage"
printf 'cage 1\nimport "./a"\n' >"$tmp/b.cage"
expect 1 'b.cage:2:8: error: import cycle' -- "$tmp/a.cage"
printf 'cage 1\nimport "./nowhere"\n' >"$tmp/mi.cage"
expect 1 "mi.cage:2:8: error: cannot find import './nowhere'" -- "$tmp/mi.cage"
printf 'cage 1\nparam ws : path\nallow read ws\n' >"$tmp/pm.cage"
expect 1 "pm.cage:2:7: error: param 'ws' has no value" -- "$tmp/pm.cage"
expect 0 '' -- "$tmp/pm.cage" -D ws=/w --emit ir

# --target: which platform's stdlib modules; Seatbelt output is macOS only
case $(uname -s) in Darwin) host=macos ;; *) host=linux ;; esac
printf 'cage 1\nimport "std/base"\n' >"$tmp/tb.cage"
std="--stdlib $src/stdlib"
expect 2 "--target wants linux or macos, not 'windows'" -- "$tmp/tb.cage" --target windows
expect 2 'needs a value' -- "$tmp/tb.cage" --target
expect 0 "^# cage ir 1; target $host;" -- "$tmp/tb.cage" $std --emit ir
expect 0 '^# cage ir 1; target linux;' -- "$tmp/tb.cage" $std --target linux --emit ir
expect 0 '"/proc/\*\*"  # linux/std/base.cage:' -- "$tmp/tb.cage" $std --target linux --emit ir
expect 0 '"/System/\*\*"  # macos/std/base.cage:' -- "$tmp/tb.cage" $std --target macos --emit ir
# without --emit, --target linux writes IR (there is no Linux profile format)
expect 0 '^# cage ir 1; target linux;' -- "$tmp/tb.cage" $std --target linux
# sbpl (asked for, by default, or by a .sb name) means macOS's modules
expect 0 '(subpath "/System") ; macos/std/base.cage:' -- "$tmp/tb.cage" $std --emit sbpl
expect 0 '(subpath "/System") ; macos/std/base.cage:' -- "$tmp/tb.cage" $std
expect 0 '' -- "$tmp/tb.cage" $std -o "$tmp/tb.sb"
grep -q '; macos/std/base.cage:' "$tmp/tb.sb" ||
	{ echo "FAIL: -o x.sb did not compile for macOS" >&2; fails=$((fails + 1)); }
expect 2 '--target linux cannot be compiled to a Seatbelt profile' -- "$tmp/tb.cage" $std --target linux --emit sbpl
expect 2 '--target linux cannot be compiled to a Seatbelt profile' -- "$tmp/tb.cage" $std --target linux -o "$tmp/tl.sb"
[ ! -e "$tmp/tl.sb" ] || { echo "FAIL: --target linux wrote a .sb" >&2; fails=$((fails + 1)); }
expect 0 '' -- "$tmp/tb.cage" $std --target macos --emit sbpl
# a missing import names every directory searched, in order
printf 'cage 1\nimport "std/nope"\n' >"$tmp/tn.cage"
expect 1 "cannot find import 'std/nope' (searched $tmp/inc, $src/stdlib/linux, $src/stdlib)" -- \
	"$tmp/tn.cage" $std -I "$tmp/inc" --target linux --emit ir
expect 1 "cannot find import 'std/nope' (searched $src/stdlib/macos, $src/stdlib)" -- \
	"$tmp/tn.cage" $std --target macos --emit ir
# lint and explain take the same option; lint also "all"
expect 0 '' -- lint $std --target linux "$tmp/tb.cage"
expect 0 '' -- lint $std --target all "$tmp/tb.cage"
expect 2 '--target wants linux, macos or all' -- lint $std --target bsd "$tmp/tb.cage"
expect 0 'decided by: linux/std/base.cage' -- explain $std --target linux "$tmp/tb.cage" read /proc/self/status
expect 1 'denied' -- explain $std --target macos "$tmp/tb.cage" read /proc/self/status
expect 2 '--target wants linux or macos' -- explain $std --target all "$tmp/tb.cage" read /etc/hosts

# -o is all-or-nothing: a failing compile leaves the old file untouched
echo "previous content" >"$tmp/out.ir"
expect 1 'error' -- "$tmp/pm.cage" -o "$tmp/out.ir"
if [ "$(cat "$tmp/out.ir")" != "previous content" ]; then
	echo "FAIL: a failed compile changed the output file" >&2
	fails=$((fails + 1))
fi
if ls "$tmp"/out.ir.tmp.* >/dev/null 2>&1; then
	echo "FAIL: temporary output left behind" >&2
	fails=$((fails + 1))
fi
expect 0 '' -- "$tmp/pm.cage" -D ws=/w --emit ir -o "$tmp/out.ir"
grep -q 'allow read "/w/\*\*"' "$tmp/out.ir" || { echo "FAIL: -o did not write" >&2; fails=$((fails + 1)); }

# -o onto something that is not a regular file writes into it: renaming a
# temporary file over it would replace a FIFO (or, for root, /dev/null)
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.out" &
reader=$!
expect 0 '' -- "$tmp/pm.cage" -D ws=/w --emit ir -o "$tmp/fifo"
wait "$reader"
[ -p "$tmp/fifo" ] || { echo "FAIL: -o replaced a FIFO with a file" >&2; fails=$((fails + 1)); }
grep -q 'allow read "/w/\*\*"' "$tmp/fifo.out" ||
	{ echo "FAIL: -o did not write through the FIFO" >&2; fails=$((fails + 1)); }

# colour only when asked (or on a terminal)
expect 1 "$(printf '\033')\[1;31merror" -- "$tmp/pm.cage" --color=always
"$cagec" "$tmp/pm.cage" --color=never 2>&1 | grep -q "$(printf '\033')" &&
	{ echo "FAIL: colour with --color=never" >&2; fails=$((fails + 1)); }

# every long option in --help is documented in docs/cagec.md, and back
"$cagec" --help | grep -o -- '--[a-z][a-z-]*' | sort -u >"$tmp/help-opts"
grep -o -- '--[a-z][a-z-]*' "$src/docs/cagec.md" | sort -u >"$tmp/doc-opts"
if ! comm -23 "$tmp/help-opts" "$tmp/doc-opts" | grep -q . ; then
	passes=$((passes + 1))
else
	echo "FAIL: options in --help but not in docs/cagec.md:" >&2
	comm -23 "$tmp/help-opts" "$tmp/doc-opts" >&2
	fails=$((fails + 1))
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
