#!/bin/sh
# keptcompile.sh CAGERUN - a compile kept on disk (docs/cagerun.md, "A
# compile kept on disk") is taken only for the same request with nothing
# it read changed, and never grants what a fresh compile would not:
#   - a request's second run keeps it and the third takes it (--verbose
#     says so), finding the plan the first run kept (the same compiled
#     rules); runs each in an environment of its own keep nothing;
#   - the policy edited to deny a file: not taken ("changed"), and the
#     file, readable without cagerun (the control) and in the run before,
#     is denied; the run after takes the new compile, still denied;
#   - a module found later on the search path: a file put before it on an
#     earlier -I folder changes what the import means; not taken, and the
#     grant the first module gave is gone;
#   - a folder on the search path swapped for a symlink to the same
#     module: not taken (its real path changed), then taken anew;
#   - another environment, another -D, another --mode: each compiles or
#     applies what it says;
#   - a kept file with a changed byte, cut short, mode 0644 or a symlink in its place
#     is refused and the run compiles, with the right result.
set -u
cagerun=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/err" ] && tail -c 1500 "$tmp/err" >&2
	fails=$((fails + 1))
}
home=$tmp/home
mkdir -p "$home" "$tmp/data" "$tmp/data2" "$tmp/i1" "$tmp/i2"
echo one >"$tmp/data/f"
echo two >"$tmp/data2/f"
plans=$home/.cache/cage/.plans
cat >"$tmp/i2/extra.cage" <<EOF
cage 1
allow read "$tmp/data2/**"
EOF
write_policy() { # EFFECT: allow or deny reading data/
	cat >"$tmp/p.cage" <<EOF
cage 1
import "extra"
profile t {
    mode enforce-fs
    allow read exec "/usr/**", "/bin/**", "/lib/**", "/lib64/**", "/etc/**", "/proc/**"
    allow read write "/dev/null"
    $1 read "$tmp/data/**"
}
EOF
}
# run [ENV=V...] -- CAGERUN-ARGS...: cagerun -v with a fixed environment
# (the environment is part of the request), output in $tmp/err.
run() {
	e=
	while [ "$1" != -- ]; do e="$e $1"; shift; done
	shift
	# shellcheck disable=SC2086 # e is a list of NAME=VALUE words
	env -i PATH=/usr/bin:/bin HOME="$home" LANG=C.UTF-8 $e \
		"$cagerun" -v -I "$tmp/i1" -I "$tmp/i2" -p "$tmp/p.cage" "$@" >"$tmp/err" 2>&1
}
took() { grep -q 'compile: kept on disk' "$tmp/err"; }
said() { grep -q "compile: not the one kept on disk: .*$1" "$tmp/err"; }
reads() { grep -qx "$1" "$tmp/err"; }

write_policy allow
if cat "$tmp/data/f" >/dev/null && cat "$tmp/data2/f" >/dev/null; then ok; else bad "control: the files do not read"; fi

# ---- kept from the second run, then taken -------------------------------
run -- -- cat "$tmp/data/f" "$tmp/data2/f"
if [ $? -eq 0 ] && reads one && reads two && ! took; then ok; else bad "first run"; fi
if ! ls "$plans"/*.cmp >/dev/null 2>&1; then ok; else bad "kept after one run"; fi
run -- -- cat "$tmp/data/f" "$tmp/data2/f"
if [ $? -eq 0 ] && reads one && reads two && ! took; then ok; else bad "second run"; fi
if ls "$plans"/*.cmp >/dev/null 2>&1; then ok; else bad "nothing kept after two runs"; fi
run -- -- cat "$tmp/data/f" "$tmp/data2/f"
if [ $? -eq 0 ] && reads one && reads two && took; then ok; else bad "third run: not taken"; fi
# The kept plan is found by the compiled rules' digest: the kept compile
# finds the plan the fresh compile kept, so its rules are those rules.
if grep -q 'plan: reused' "$tmp/err"; then ok; else bad "the kept compile did not find the kept plan"; fi

# ---- the policy edited ---------------------------------------------------
write_policy deny
run -- -- cat "$tmp/data/f"
s=$?
if [ $s -ne 0 ] && ! reads one && ! took && said "p.cage changed since it was compiled"; then ok; else
	bad "edited policy: status $s, the kept compile taken or the file read"
fi
run -- -- cat "$tmp/data/f"
s=$?
if [ $s -ne 0 ] && ! reads one && took; then ok; else bad "after the edit: status $s, or not taken"; fi

# ---- a module put earlier on the search path -----------------------------
run -- -- cat "$tmp/data2/f"
if [ $? -eq 0 ] && reads two && took; then ok; else bad "control: data2 read, kept"; fi
printf 'cage 1\n' >"$tmp/i1/extra.cage"
run -- -- cat "$tmp/data2/f"
s=$?
if [ $s -ne 0 ] && ! reads two && ! took && said "changed since it was compiled"; then ok; else
	bad "a shadowing module: status $s, taken or data2 read"
fi
rm "$tmp/i1/extra.cage"
run -- -- cat "$tmp/data2/f"
if [ $? -eq 0 ] && reads two && ! took; then ok; else bad "the shadowing module removed"; fi

# ---- a folder on the search path swapped for a symlink -------------------
# The same module, the same bytes, now found through a symlink: its real
# path is another (which a policy's own relative names would follow), so
# the compile is not taken; the one after takes the new compile.
run -- -- cat "$tmp/data2/f"
if [ $? -eq 0 ] && reads two && took; then ok; else bad "control: data2 read, kept"; fi
mv "$tmp/i2" "$tmp/i2real" && ln -s i2real "$tmp/i2"
run -- -- cat "$tmp/data2/f"
s=$?
if [ $s -eq 0 ] && reads two && ! took && said "i2/extra.cage changed since it was compiled"; then ok; else
	bad "a folder on the search path became a symlink: status $s, taken or data2 not read"
fi
run -- -- cat "$tmp/data2/f"
if [ $? -eq 0 ] && reads two && took; then ok; else bad "after the symlink: status $s, or not taken"; fi
rm "$tmp/i2" && mv "$tmp/i2real" "$tmp/i2"
run -- -- true
if [ $? -eq 0 ] && ! took; then ok; else bad "the symlink undone: the kept compile taken"; fi

# ---- another request -----------------------------------------------------
run -- -- true
if took; then ok; else bad "control: kept for the same request"; fi
n0=$(ls "$plans"/*.cmp | wc -l)
run CAGE_TEST_OTHER=1 -- -- true
if [ $? -eq 0 ] && ! took; then ok; else bad "another environment took the kept compile"; fi
# An environment seen once keeps nothing; one that differs on every run
# never does (the recent misses, kept.h).
i=0
while [ $i -lt 20 ]; do run CAGE_TEST_RUN=$i -- -- true; i=$((i + 1)); done
if [ "$(ls "$plans"/*.cmp | wc -l)" -eq "$n0" ]; then ok; else
	bad "runs each in an environment of its own kept $(($(ls "$plans"/*.cmp | wc -l) - n0)) compiles"
fi
run -- --mode off -- true
if [ $? -eq 0 ] && took && grep -q 'WITHOUT any sandbox' "$tmp/err"; then ok; else
	bad "--mode off: the kept compile with the mode asked for"
fi

# ---- kept files that are not right --------------------------------------
run -- -- true
f=$plans/$(sed -n 's/.*compile: kept on disk, \([0-9a-f]*\.cmp\) .*/\1/p' "$tmp/err")
if took && [ -f "$f" ]; then ok; else bad "control: the request's kept compile is $f"; fi
size=$(wc -c <"$f")
printf 'X' | dd of="$f" bs=1 seek=$((size / 2)) conv=notrunc status=none
run -- -- cat "$tmp/data/f"
s=$?
if [ $s -ne 0 ] && ! took && said "not one this build wrote whole"; then ok; else
	bad "a changed byte: status $s, or taken"
fi
run -- -- true
if took; then ok; else bad "written again after the bad one"; fi
head -c 30 "$f" >"$tmp/short" && cat "$tmp/short" >"$f"
run -- -- cat "$tmp/data/f"
s=$?
if [ $s -ne 0 ] && ! took && said "not one this build wrote whole"; then ok; else
	bad "a file cut short: status $s, or taken"
fi
run -- -- true
chmod 0644 "$f"
run -- -- true
if ! took && said "mode 0644"; then ok; else bad "mode 0644 taken"; fi
run -- -- true
cp "$f" "$tmp/copy.cmp" && rm "$f" && ln -s "$tmp/copy.cmp" "$f"
run -- -- cat "$tmp/data/f"
s=$?
if [ $s -ne 0 ] && ! took && said "cannot open"; then ok; else bad "a symlink taken: status $s"; fi

echo "keptcompile: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
