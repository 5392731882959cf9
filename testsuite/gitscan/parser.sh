#!/bin/sh
# parser.sh - runtime/gitscan/gs_config.c against git itself: every file in
# testsuite/gitscan/configs/ (and a few written here: includeIf with this
# run's paths, a NUL byte) is read by gs_dump and by
# `git config --file F --includes --list --show-origin -z`, in a scratch
# repository. Where git reads the file, the two outputs must be the same
# bytes; where git refuses it, gs_dump must refuse it too. gs_dump may be
# stricter than git only where STRICTER below says so (fail closed).
#
#   parser.sh GS_DUMP SRCDIR
set -u
[ $# -eq 2 ] || { echo "usage: parser.sh GS_DUMP SRCDIR" >&2; exit 2; }
DUMP=$1 SRC=$2
command -v git >/dev/null || { echo "SKIP: no git"; exit 0; }
base=$(mktemp -d "${TMPDIR:-/tmp}/cage-gsparse.XXXXXX") || exit 1
trap 'rm -rf "$base"' EXIT
F=$(cd "$base" && pwd -P)
cp -R "$SRC/testsuite/gitscan/configs" "$F/c" || exit 1
git init -q "$F/repo" || exit 1
# A condition true for the scratch repository: both sides follow it.
printf '[includeIf "gitdir:%s/"]\n\tpath = %s/c/inc/one.cfg\n[includeIf "gitdir/i:%s/"]\n\tpath = ../c/inc/two.cfg\n' \
	"$F/repo" "$F" "$(echo "$F/repo" | tr a-z A-Z)" > "$F/c/includeif.cfg"
printf '[include]\n\tpath = ~/inc.cfg\n' > "$F/c/tilde.cfg"
printf '[t]\n\tv = home\n' > "$F/inc.cfg"
# ~user: another user's home, which git finds with getpwnam and gs_dump
# asks of the cage-lookup helper (runtime/lookup/): a missing include is
# skipped by both, an unknown user refused by both.
printf '[include]\n\tpath = ~%s/cage-gsparse-missing.cfg\n[t]\n\tv = 1\n' "$(id -un)" > "$F/c/tilde_user.cfg"
printf '[include]\n\tpath = ~cage-no-such-user-here/x.cfg\n' > "$F/c/tilde_nouser.cfg"
printf '[s]\n\tk = a\000b\n' > "$F/c/stricter_nul.cfg"
printf '[include]\n\tpath = %%(prefix)/etc/x\n' > "$F/c/stricter_prefix.cfg"
# Include chains at git's depth limit (10 files deep accepted) and one past it.
for n in 9 10; do
	mkdir "$F/c/chain$n"
	i=0
	while [ $i -lt $n ]; do
		printf '[k]\n\tv%d = 1\n[include]\n\tpath = %d.cfg\n' $i $((i + 1)) > "$F/c/chain$n/$i.cfg"
		i=$((i + 1))
	done
	printf '[k]\n\tlast = 1\n' > "$F/c/chain$n/$n.cfg"
	printf '[include]\n\tpath = chain%d/0.cfg\n' $n > "$F/c/chain$n.cfg"
done
PASS=0 FAILED=0
for f in "$F"/c/*.cfg; do
	n=${f##*/}
	g=$(cd "$F/repo" && HOME=$F git config --file "$f" --includes --list --show-origin -z 2>/dev/null | od -An -c)
	grc=$(cd "$F/repo" && HOME=$F git config --file "$f" --includes --list --show-origin -z >/dev/null 2>&1; echo $?)
	m=$(HOME=$F "$DUMP" "$f" 2>"$F/err" | od -An -c)
	mrc=$(HOME=$F "$DUMP" "$f" >/dev/null 2>&1; echo $?)
	case $n in stricter_*) strict=1 ;; *) strict=0 ;; esac
	if [ "$grc" != 0 ] && [ "$mrc" != 0 ]; then
		PASS=$((PASS + 1)); echo "PASS $n (both refuse)"
	elif [ "$grc" = 0 ] && [ "$mrc" != 0 ] && [ $strict = 1 ]; then
		PASS=$((PASS + 1)); echo "PASS $n (refused here, fail closed: $(cat "$F/err"))"
	elif [ "$grc" = 0 ] && [ "$mrc" = 0 ] && [ "$g" = "$m" ] && [ $strict = 0 ]; then
		PASS=$((PASS + 1)); echo "PASS $n"
	else
		FAILED=$((FAILED + 1))
		echo "FAIL $n: git rc=$grc, gs_dump rc=$mrc"
		echo "  git:     $g" | head -c 2000; echo
		echo "  gs_dump: $m" | head -c 2000; echo
		sed 's/^/  | /' "$F/err"
	fi
done
# The value reader against `git config --get` too, on the one file.
for k in s.a s.b s.c s.d s.e s.f s.l s.m; do
	want=$(git config --file "$F/c/quoting.cfg" --get "$k" | od -An -c)
	got=$("$DUMP" "$F/c/quoting.cfg" | tr '\0' '\n' | awk -v k="$k" 'f { print; exit } $0 == k { f = 1 }' | od -An -c)
	if [ "$want" = "$got" ]; then PASS=$((PASS + 1)); echo "PASS get $k"
	else FAILED=$((FAILED + 1)); echo "FAIL get $k: git '$want', gs_dump '$got'"; fi
done
echo "$PASS passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
