#!/bin/sh
# layout.sh - the standard library's layout rules (docs/stdlib.md):
#   1. a module name lives in stdlib/std/ (portable) or in the platform
#      trees stdlib/linux/std/ and stdlib/macos/std/, never in both kinds,
#      so which file an import means never depends on search order;
#   2. every platform module exists for both platforms, so a policy that
#      compiles for one target compiles for the other.
#   3. Linux modules respect what Landlock can enforce: write, create or
#      delete only on DIR/** subtrees (no glob with those rights; rights on
#      an exact file are listed below, each explained where it is granted).
# Usage: layout.sh CAGEC SOURCE_DIR
set -u
cagec=$1
lib=$2/stdlib
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

names() { (cd "$lib/$1" && find std -name '*.cage' | sort); }
names . >"$tmp/portable"
names linux >"$tmp/linux"
names macos >"$tmp/macos"
[ -s "$tmp/portable" ] && [ -s "$tmp/linux" ] && [ -s "$tmp/macos" ] || {
	echo "FAIL: a stdlib tree is empty or missing under $lib" >&2
	exit 1
}

for t in linux macos; do
	both=$(comm -12 "$tmp/portable" "$tmp/$t")
	if [ -n "$both" ]; then
		echo "FAIL: portable and $t modules at once:" $both >&2
		fails=$((fails + 1))
	fi
done
only=$(comm -3 "$tmp/linux" "$tmp/macos" | tr -d '\t')
if [ -n "$only" ]; then
	echo "FAIL: platform modules missing for the other platform:" $only >&2
	fails=$((fails + 1))
fi

# Exact files a Linux module may grant write on: existing files opened for
# writing (devices, a config file the agent rewrites in place).
allowed_exact='^(/dev/(null|zero|full|random|urandom|tty|ptmx)|~/\.claude\.json)$'

# limits NAME IR: one line per write/create/delete grant Landlock cannot
# enforce as written.
limits() {
	grep -E '^ +[0-9]+ allow [a-z -]*(write|create|delete)' "$2" |
		sed -E 's/^.* "(.*)"  # .*$/\1/' |
		while IFS= read -r target; do
			case $target in
			*/\*\*) case ${target%/\*\*} in
				*[*?]*) echo "$1: glob with write rights: $target" ;;
				esac ;;
			*[*?]*) echo "$1: glob with write rights: $target" ;;
			*) printf '%s\n' "$target" | grep -Eq "$allowed_exact" ||
				echo "$1: write on an exact file: $target" ;;
			esac
		done
}

# compile NAME DIR...: the IR of `import "NAME"` for Linux into $tmp/m.ir.
compile() {
	name=$1
	shift
	printf 'cage 1\nimport "%s"\n' "$name" >"$tmp/m.cage"
	"$cagec" "$tmp/m.cage" --target linux --home /home/u --emit ir "$@" >"$tmp/m.ir" 2>&1
}

# compile_guarded NAME DIR...: the same beside std/guard, which declares the
# param workspace that std/guard and the agent modules (which import it) need.
compile_guarded() {
	name=$1
	shift
	printf 'cage 1\nimport "%s"\nimport "std/guard"\n' "$name" >"$tmp/m.cage"
	"$cagec" "$tmp/m.cage" --target linux --home /home/u -D workspace=/home/u/src/app \
		--emit ir "$@" >"$tmp/m.ir" 2>&1
}

# The check itself must catch both kinds of mistake.
mkdir -p "$tmp/inc/probe"
printf 'cage 1\nallow read write "~/.cache/x/**", "~/.x.json.*", "~/.x.json"\n' \
	>"$tmp/inc/probe/bad.cage"
compile probe/bad -I "$tmp/inc"
if [ "$(limits probe/bad "$tmp/m.ir" | wc -l)" -ne 2 ]; then
	echo "FAIL: the Landlock limits check misses a glob or an exact file:" >&2
	limits probe/bad "$tmp/m.ir" >&2
	fails=$((fails + 1))
fi

: >"$tmp/limits"
while read -r mod; do
	name=${mod%.cage}
	if ! compile_guarded "$name" --stdlib "$lib"; then
		echo "FAIL: $name does not compile for linux:" >&2
		cat "$tmp/m.ir" >&2
		fails=$((fails + 1))
		continue
	fi
	limits "$name" "$tmp/m.ir" >>"$tmp/limits"
done <"$tmp/linux"
if [ -s "$tmp/limits" ]; then
	echo "FAIL: Linux modules grant what Landlock cannot enforce:" >&2
	sort -u "$tmp/limits" >&2
	fails=$((fails + 1))
fi

if [ "$fails" -ne 0 ]; then
	exit 1
fi
echo "stdlib layout: $(wc -l <"$tmp/portable") portable, $(wc -l <"$tmp/linux") platform modules"
