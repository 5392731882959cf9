#!/bin/sh
# instructions.sh - the user-space instructions a launch spends compiling
# the policy and reusing its kept plan, counted by callgrind (not timed:
# the count does not depend on the machine's load). Two rows:
#   cagerun -q -p examples/claude-code.cage -D workspace=WS --mode enforce
#     -- /bin/true, the launching parent only (--trace-children=no), as
#     USER with ulimit -Sn 1024, the kept plan warm (two launches first);
#   cagec examples/claude-code.cage -D workspace=WS --emit ir -o /dev/null.
# Each prints the program's total and the inclusive counts of
# cage_load_file (the compile; twice in cagerun's -p form when std/guard
# asks for the private cache) and lnx_plan_get (the kept plan's reuse).
# Usage: testsuite/bench/instructions.sh [BUILD_DIR] [USER]   (as root)
# Needs valgrind and a C compiler (for landlock_abi_shim.c, which lets the
# launch get past valgrind's missing Landlock calls), and so a dynamically
# linked cagerun, which the shim can be preloaded into: a build configured
# with -DCAGE_STATIC_PIE=OFF (the static default has no loader to preload
# with).
set -eu
build=$(cd "${1:-build}" && pwd)
if ! readelf -l "$build/cagerun" | grep -q 'INTERP'; then
	echo "instructions.sh: $build/cagerun is static; configure a build with -DCAGE_STATIC_PIE=OFF" >&2
	exit 2
fi
user=${2:-cage-test}
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir "$tmp/ws" "$tmp/home" "$tmp/out"
git -C "$tmp/ws" init -q
cc -shared -fPIC -O2 -o "$tmp/shim.so" "$src/testsuite/bench/landlock_abi_shim.c" -ldl
chown -R "$user" "$tmp/ws" "$tmp/home" "$tmp/out"
policy=$src/examples/claude-code.cage
launch="cd $tmp/ws && HOME=$tmp/home $build/cagerun -q -p $policy -D workspace=$tmp/ws --mode enforce -- /bin/true"

counts() { # callgrind output file, then the functions to report
	out=$1
	shift
	callgrind_annotate --inclusive=yes "$out" 2>/dev/null | awk '
		/PROGRAM TOTALS/ { print "  total          " $1 }'
	for f in "$@"; do
		callgrind_annotate --inclusive=yes "$out" 2>/dev/null |
			awk -v f=":$f " 'index($0, f) && !index($0, "=>") { printf "  %-15s%s\n", fn, $1; exit }' fn="$f"
	done
}

# The first launch builds and keeps the plan, the second reuses it: the
# counted one is the third.
for i in 1 2; do
	runuser -u "$user" -- sh -c "ulimit -Sn 1024; $launch" || true
done
runuser -u "$user" -- sh -c "ulimit -Sn 1024; cd $tmp/ws && HOME=$tmp/home LD_PRELOAD=$tmp/shim.so \
	valgrind --tool=callgrind --trace-children=no --callgrind-out-file=$tmp/out/launch.cg \
	$build/cagerun -q -p $policy -D workspace=$tmp/ws --mode enforce -- /bin/true" \
	>/dev/null 2>"$tmp/launch.err" || true
echo "cagerun launch, parent only, as $user, kept plan warm:"
counts "$tmp/out/launch.cg" cage_load_file lnx_plan_get
(cd "$tmp/ws" && HOME=$tmp/home valgrind --tool=callgrind --callgrind-out-file="$tmp/cagec.cg" \
	"$build/cagec" "$policy" -D workspace="$tmp/ws" --emit ir -o /dev/null) 2>"$tmp/cagec.err"
echo "cagec --emit ir:"
counts "$tmp/cagec.cg" cage_load_file
