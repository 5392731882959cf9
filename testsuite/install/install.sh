#!/bin/sh
# install.sh - cage as a user installs it, used with nothing from the source
# or build tree:
#  1. `cmake --install BUILD --prefix P`, then P moved elsewhere: the moved
#     cagec finds its standard library beside itself, lints and compiles a
#     shipped example and cagerun starts, in a mount namespace where the
#     source and build trees are empty tmpfs mounts (checked from inside).
#  2. `cpack -G DEB`: the package's name, version, maintainer and computed
#     Depends, and exactly the files it should hold; then the package is
#     extracted (dpkg -x) into an empty root, the installed files of the
#     packages its Depends names are copied in from this system, and the
#     example is linted and compiled in a chroot of that root. The root holds
#     nothing else (no shell, no source tree, no /usr/local), so a library
#     missing from Depends, or a file the programs read from elsewhere,
#     fails the run.
# Needs root or unprivileged user namespaces (for the mount namespace and
# the chroot); exits 77 (skipped) when neither is available.
set -u
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

if [ "$(id -u)" -eq 0 ]; then ns="unshare -m"; else ns="unshare -r -m"; fi
if ! $ns true 2>/dev/null; then
	echo "SKIP: no mount namespace ($ns failed)" >&2
	exit 77
fi
build=$(cd "$build" && pwd -P)
src=$(cd "$src" && pwd -P)
case $tmp in "$src"/* | "$build"/*) echo "FAIL: scratch dir inside the tree" >&2; exit 1 ;; esac

# hidden CMD...: runs CMD with the source and build trees replaced by empty
# directories (the build tree first: it may lie inside the source tree).
hidden() {
	$ns sh -c '
		b=$1 s=$2; shift 2
		mount -t tmpfs -o size=1m,mode=0755 none "$b" || exit 90
		mount -t tmpfs -o size=1m,mode=0755 none "$s" || exit 90
		[ ! -e "$s/CMakeLists.txt" ] && [ ! -e "$b/CMakeCache.txt" ] || exit 91
		exec "$@"' hidden "$build" "$src" "$@"
}

ex=share/doc/cage/examples/claude-code.cage

# ---- 1. cmake --install --prefix, then moved ----
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log" >&2; fail "cmake --install"; }
for f in bin/cagec bin/cagerun libexec/cage/cage-lookup libexec/cage/cage-lint share/cage/stdlib/std/secrets.cage \
	share/cage/stdlib/linux/std/base.cage share/cage/stdlib/macos/std/base.cage \
	share/man/man1/cagec.1.gz share/man/man1/cagerun.1.gz share/man/man5/cage.5.gz "$ex"; do
	[ -f "$tmp/prefix/$f" ] || fail "cmake --install did not install $f"
done
mv "$tmp/prefix" "$tmp/moved"
m=$tmp/moved
mkdir "$tmp/ws"
hidden "$m/bin/cagec" lint --target linux "$m/$ex" >"$tmp/lint.out" 2>&1 ||
	{ cat "$tmp/lint.out" >&2; fail "moved tree: cagec lint of the example"; }
hidden "$m/bin/cagec" "$m/$ex" -D workspace="$tmp/ws" --emit ir -o "$tmp/ex.ir" >"$tmp/c.out" 2>&1 ||
	{ cat "$tmp/c.out" >&2; fail "moved tree: cagec compile of the example"; }
grep -q '# linux/std/base.cage:' "$tmp/ex.ir" 2>/dev/null ||
	fail "moved tree: the IR has no rule from the installed standard library"
hidden "$m/bin/cagec" "$m/$ex" -D workspace="$tmp/ws" --target macos -o "$tmp/ex.sb" >"$tmp/c.out" 2>&1 ||
	{ cat "$tmp/c.out" >&2; fail "moved tree: Seatbelt profile of the example"; }
hidden "$m/bin/cagerun" --version >"$tmp/v.out" 2>&1 ||
	{ cat "$tmp/v.out" >&2; fail "moved tree: cagerun --version"; }
grep -qx "name lookups: $m/libexec/cage/cage-lookup" "$tmp/v.out" ||
	{ cat "$tmp/v.out" >&2; fail "moved tree: cagerun does not find its cage-lookup"; }
grep -qx "layer lint: $m/libexec/cage/cage-lint" "$tmp/v.out" ||
	{ cat "$tmp/v.out" >&2; fail "moved tree: cagerun does not find its cage-lint"; }
# --show asks cage-lint for lint's findings: it must run from the tree.
hidden "$m/bin/cagerun" -p "$m/$ex" -D workspace="$tmp/ws" --show >"$tmp/show.out" 2>&1 &&
	grep -qx 'lint:' "$tmp/show.out" ||
	{ cat "$tmp/show.out" >&2; fail "moved tree: cagerun --show did not get lint's verdict"; }
hidden "$m/bin/cagec" --help | grep -q -- "(default: $m/share/cage/stdlib," ||
	fail "moved tree: cagec --help does not name the standard library beside it"
# cage-launch, with no launcher to use, runs the cagerun beside it.
if [ -e "$build/cage-launch" ]; then
	CAGE_LAUNCHER_SOCKET=$tmp/none.sock hidden "$m/bin/cage-launch" --version </dev/null 2>&1 |
		grep -qx "name lookups: $m/libexec/cage/cage-lookup" ||
		fail "moved tree: cage-launch does not run the cagerun beside it"
fi
# a missing import names the moved tree's directories
printf 'cage 1\nimport "std/nope"\n' >"$tmp/nope.cage"
hidden "$m/bin/cagec" "$tmp/nope.cage" --target linux --emit ir >"$tmp/n.out" 2>&1
grep -q "cannot find import 'std/nope' (searched $m/share/cage/stdlib/linux, $m/share/cage/stdlib)" "$tmp/n.out" ||
	{ cat "$tmp/n.out" >&2; fail "moved tree: the missing-import message"; }
# a standard library that group or others may write is not trusted
chmod g+w "$m/share/cage/stdlib"
hidden "$m/bin/cagec" "$tmp/nope.cage" --target linux --emit ir >"$tmp/n.out" 2>&1
if grep -q "$m/share/cage/stdlib" "$tmp/n.out"; then
	cat "$tmp/n.out" >&2
	fail "moved tree: a group-writable standard library was used"
fi
chmod g-w "$m/share/cage/stdlib"
# man finds the pages of the moved tree
if command -v man >/dev/null; then
	for p in "1 cagec" "1 cagerun" "5 cage"; do
		set -- $p
		got=$(MANPATH="$m/share/man" man -w "$1" "$2" 2>&1)
		[ "$got" = "$m/share/man/man$1/$2.$1.gz" ] || fail "man -w $1 $2 gives '$got'"
	done
fi
# control: the hiding is real (the build tree's cagec cannot run hidden)
if hidden "$build/cagec" --version >/dev/null 2>&1; then
	fail "control: the build tree was not hidden"
fi

# ---- 2. the Debian package in a clean root ----
if ! command -v cpack >/dev/null || ! command -v dpkg-deb >/dev/null; then
	echo "cpack or dpkg-deb missing: the package part is skipped" >&2
	[ "$fails" -eq 0 ] && exit 77
	exit 1
fi
(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg") >"$tmp/cpack.log" 2>&1 ||
	{ cat "$tmp/cpack.log" >&2; fail "cpack -G DEB"; }
deb=$(ls "$tmp"/pkg/cage_*.deb 2>/dev/null | head -n 1)
if [ -z "$deb" ]; then
	fail "no cage_*.deb was built"
	exit 1
fi
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = cage ] || fail "Package is '$(field Package)'"
version=$(sed -n 's/^project(cage VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', want $version"
field Maintainer | grep -q '<.*@.*>' || fail "Maintainer is '$(field Maintainer)'"
depends=$(field Depends)
# libc6 always; libxxhash0 and libseccomp2 when the programs load them
# (CAGE_STATIC_DEPS=OFF, or no static archives: docs/install.md).
needed=$(for p in "$build/cagec" "$build/cagerun" "$build/cage-lookup" "$build/cage-lint"; do [ -e "$p" ] && objdump -p "$p"; done |
	awk '$1 == "NEEDED" { print $2 }')
for lib in libc6 libxxhash0 libseccomp2; do
	case $lib in
	libxxhash0) echo "$needed" | grep -q '^libxxhash\.so' || continue;;
	libseccomp2) echo "$needed" | grep -q '^libseccomp\.so' || continue;;
	esac
	echo "$depends" | grep -q "\\b$lib\\b" || fail "Depends lacks $lib: '$depends'"
done
# exactly the files we mean to ship
dpkg-deb -c "$deb" | awk '{ print $6 }' | grep -v '/$' | sort >"$tmp/files"
grep -v -E '^\./usr/(bin/(cagec|cagerun|cage-launch)|libexec/cage/cage-(lookup|lint)|share/cage/stdlib/.*\.cage|share/man/man1/(cagec|cagerun)\.1\.gz|share/man/man5/cage\.5\.gz|share/doc/cage/(README\.md|docs/[a-z-]+\.md|examples/[a-z-]+\.cage))$' \
	"$tmp/files" >"$tmp/extra" && { cat "$tmp/extra" >&2; fail "the package holds files it should not"; }
for f in usr/bin/cagec usr/bin/cagerun usr/libexec/cage/cage-lookup usr/libexec/cage/cage-lint usr/share/cage/stdlib/linux/std/base.cage \
	usr/share/man/man1/cagec.1.gz usr/share/man/man1/cagerun.1.gz usr/share/man/man5/cage.5.gz "usr/$ex"; do
	grep -qx "\\./$f" "$tmp/files" || fail "the package lacks /$f"
done

root=$tmp/root
mkdir -p "$root/proc" "$root/tmp"
dpkg -x "$deb" "$root" || fail "dpkg -x"
# The dependencies as installed on this system, nothing more; a merged /usr
# (/lib -> usr/lib, ...) is laid out as here, so the loader's paths hold.
for d in bin sbin lib lib32 lib64 libx32; do
	if [ -L "/$d" ]; then
		mkdir -p "$root/$(readlink "/$d" | sed 's|^/||')"
		ln -s "$(readlink "/$d")" "$root/$d"
	fi
done
for p in $(echo "$depends" | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/^ *//; s/ *$//'); do
	dpkg-query -W "$p" >/dev/null 2>&1 || { fail "dependency $p is not installed here"; continue; }
	dpkg -L "$p" | while read -r f; do
		if [ -f "$f" ] || { [ -L "$f" ] && [ ! -d "$f" ]; }; then echo "${f#/}"; fi
	done >>"$tmp/deps.list"
done
tar -C / --no-recursion -cf - -T "$tmp/deps.list" | tar -C "$root" -xf - ||
	fail "copying the dependencies into the clean root"
[ ! -e "$root/bin/sh" ] && [ ! -e "$root/usr/local" ] && [ ! -e "$root$src" ] ||
	fail "the clean root holds more than the package and its dependencies"
inroot() {
	$ns sh -c 'r=$1; shift; mount --rbind /proc "$r/proc" || exit 90; exec chroot "$r" "$@"' \
		inroot "$root" "$@"
}
rex=/usr/$ex
inroot /usr/bin/cagec lint --target linux "$rex" >"$tmp/r.out" 2>&1 ||
	{ cat "$tmp/r.out" >&2; fail "package: cagec lint of the example in the clean root"; }
inroot /usr/bin/cagec "$rex" -D workspace=/tmp --emit ir >"$tmp/r.ir" 2>"$tmp/r.err" ||
	{ cat "$tmp/r.err" >&2; fail "package: cagec compile of the example in the clean root"; }
grep -q '# linux/std/base.cage:' "$tmp/r.ir" || fail "package: no rule from the packaged standard library"
inroot /usr/bin/cagec "$rex" -D workspace=/tmp --emit table -o /tmp/ex.cpt >"$tmp/r.out" 2>&1 &&
	inroot /usr/bin/cagec --dump-table /tmp/ex.cpt >"$tmp/r.dump" 2>&1 ||
	{ cat "$tmp/r.out" "$tmp/r.dump" >&2; fail "package: proxy table in the clean root"; }
inroot /usr/bin/cagerun --help >"$tmp/r.out" 2>&1 ||
	{ cat "$tmp/r.out" >&2; fail "package: cagerun --help in the clean root"; }
inroot /usr/bin/cagerun --version 2>&1 | grep -qx "name lookups: /usr/libexec/cage/cage-lookup" ||
	fail "package: cagerun does not find /usr/libexec/cage/cage-lookup"
inroot /usr/bin/cagerun --version 2>&1 | grep -qx "layer lint: /usr/libexec/cage/cage-lint" ||
	fail "package: cagerun does not find /usr/libexec/cage/cage-lint"
inroot /usr/bin/cagerun -p "$rex" -D workspace=/tmp --show >"$tmp/r.out" 2>&1 &&
	grep -qx 'lint:' "$tmp/r.out" ||
	{ cat "$tmp/r.out" >&2; fail "package: cagerun --show did not get lint's verdict"; }
inroot /usr/bin/cagec --help | grep -q -- '(default: /usr/share/cage/stdlib,' ||
	fail "package: cagec does not name /usr/share/cage/stdlib as its standard library"
if [ -e "$build/cage-launch" ]; then
	grep -qx './usr/bin/cage-launch' "$tmp/files" || fail "the package lacks /usr/bin/cage-launch"
	inroot /usr/bin/cage-launch --version </dev/null 2>&1 |
		grep -qx "name lookups: /usr/libexec/cage/cage-lookup" ||
		fail "package: cage-launch does not run /usr/bin/cagerun"
fi

if [ "$fails" -ne 0 ]; then
	echo "install: $fails check(s) failed" >&2
	exit 1
fi
echo "install: moved prefix and Debian package ($(basename "$deb"), Depends: $depends) work without the source tree"
