#!/bin/sh
# guard.sh - what the create guard costs (docs/benchmarks.md, "The create
# guard"): per creating call (create_bench), for extracting a tarball of
# 4000 files in nested folders (what a package install does), and for a
# small C build, under
# cagerun with testsuite/qual/policies/guard.cage (guards: the supervisor
# runs) and with the same policy less its deny rules (no guards, no
# supervisor), and bare for reference.
#
#   [R=rounds] [BASE=other/cagerun] guard.sh CAGERUN CREATE_BENCH SRCDIR [N]
#
# The per-call rows run R times (default 3), interleaved; BASE adds that
# build's guarded row to each round, for a before-and-after in one run.
set -eu
CAGERUN=$1 BENCH=$2 SRC=$3 N=${4:-20000}
base=$(mktemp -d "${TMPDIR:-/tmp}/cage-gbench.XXXXXX")
trap 'rm -rf "$base"' EXIT
F=$(cd "$base" && pwd -P)
WS=$F/ws
mkdir "$WS"
cp "$BENCH" "$WS/cb"
# The same policy without the rules that make guards: its denies, and its
# protect with excepts (whose names made later the guard keeps too), which
# may run over several lines ending in commas.
sed -e '/^    deny /d' -e '/^    protect /{:a' -e '/,$/{N;ba' -e '}' -e 'd' -e '}' \
	"$SRC/testsuite/qual/policies/guard.cage" >"$F/noguard.cage"
if "$(dirname "$CAGERUN")/cagec" "$F/noguard.cage" -D workspace="$WS" --emit linux 2>/dev/null |
	grep -q '^guard '; then
	echo "guard.sh: the policy without guards still has some" >&2
	exit 1
fi
R=${R:-3} BASE=${BASE:-}
echo "per call, N=$N, $R rounds:"
r=0
while [ $r -lt "$R" ]; do
	printf '  bare:           '; (cd "$WS" && ./cb "$N")
	printf '  cagerun:        '; (cd "$WS" && "$CAGERUN" -p "$F/noguard.cage" -D workspace="$WS" --quiet -- ./cb "$N")
	printf '  cagerun+guard:  '; (cd "$WS" && "$CAGERUN" -p "$SRC/testsuite/qual/policies/guard.cage" -D workspace="$WS" --quiet -- ./cb "$N")
	if [ -n "$BASE" ]; then
		printf '  base+guard:     '; (cd "$WS" && "$BASE" -p "$SRC/testsuite/qual/policies/guard.cage" -D workspace="$WS" --quiet -- ./cb "$N")
	fi
	r=$((r + 1))
done
# A small C build: 20 files, one object each, linked.
mkdir "$WS/proj"
i=0
while [ $i -lt 20 ]; do
	printf 'int f%d(int x){return x*%d;}\n' $i $i >"$WS/proj/f$i.c"
	i=$((i + 1))
done
printf 'int main(void){return 0;}\n' >"$WS/proj/main.c"
printf 'OBJS=$(patsubst %%.c,%%.o,$(wildcard *.c))\nall: app\napp: $(OBJS)\n\tcc -o $@ $^\n%%.o: %%.c\n\tcc -O1 -c $<\nclean:\n\trm -f *.o app\n' >"$WS/proj/Makefile"
build() {
	(cd "$WS/proj" && make -s clean >/dev/null && s=$(date +%s%N) &&
		"$@" make -s -j1 >/dev/null && e=$(date +%s%N) && echo "$(((e - s) / 1000000)) ms")
}
echo "small C build (21 files, make -j1), 3 runs each:"
for k in 1 2 3; do
	printf '  bare:           '; build
	printf '  cagerun:        '; build "$CAGERUN" -p "$F/noguard.cage" -D workspace="$WS" --quiet --
	printf '  cagerun+guard:  '; build "$CAGERUN" -p "$SRC/testsuite/qual/policies/guard.cage" -D workspace="$WS" --quiet --
	if [ -n "$BASE" ]; then
		printf '  base+guard:     '; build "$BASE" -p "$SRC/testsuite/qual/policies/guard.cage" -D workspace="$WS" --quiet --
	fi
done
# An archive of 4000 small files three folders deep (20 x 10 x 20), as
# a package install unpacks; extracted into a fresh folder each time.
mkdir "$WS/src"
a=0
while [ $a -lt 20 ]; do
	b=0
	while [ $b -lt 10 ]; do
		mkdir -p "$WS/src/pkg$a/lib$b/mod"
		c=0
		while [ $c -lt 20 ]; do
			echo "$a $b $c" >"$WS/src/pkg$a/lib$b/mod/f$c.js"
			c=$((c + 1))
		done
		b=$((b + 1))
	done
	a=$((a + 1))
done
tar cf "$WS/tree.tar" -C "$WS/src" .
rm -rf "$WS/src"
untar() {
	(cd "$WS" && rm -rf out && mkdir out && s=$(date +%s%N) &&
		"$@" tar xf tree.tar -C out && e=$(date +%s%N) && echo "$(((e - s) / 1000000)) ms")
}
echo "tar x of 4000 files in 600 folders, $R runs each:"
r=0
while [ $r -lt "$R" ]; do
	printf '  bare:           '; untar
	printf '  cagerun:        '; untar "$CAGERUN" -p "$F/noguard.cage" -D workspace="$WS" --quiet --
	printf '  cagerun+guard:  '; untar "$CAGERUN" -p "$SRC/testsuite/qual/policies/guard.cage" -D workspace="$WS" --quiet --
	if [ -n "$BASE" ]; then
		printf '  base+guard:     '; untar "$BASE" -p "$SRC/testsuite/qual/policies/guard.cage" -D workspace="$WS" --quiet --
	fi
	r=$((r + 1))
done
