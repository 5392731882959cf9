#!/bin/sh
# keptlayers.sh CAGERUN - the layered form's compile kept on disk
# (docs/cagerun.md, "A compile kept on disk"): without -p the layers are
# found on every run and a kept compile is taken only under what was
# found, with everything it read unchanged and a project layer still
# approved. Each security case first shows the access working (the
# control, or the run before with the kept compile), then refused:
#   - a trusted project layer's grant: kept from the second run, taken on
#     the third, the same policy fingerprint as the fresh compiles;
#   - the trust store removed, the layer unchanged: not taken ("no longer
#     approved"), the grant gone (the layer is untrusted: it only narrows);
#   - the project layer edited to deny: not taken, the file denied;
#   - a user agent layer added (CONFIG/cage/agents/NAME.cage) with a deny:
#     another set of layers, so not taken, and the deny holds;
#   - another program of the same name put first on PATH: another command
#     layer, not taken, and it runs;
#   - a project layer put nearer the working folder: not taken, its deny
#     holds.
set -u
cagerun=$1
tmp=$(mktemp -d)
trap "rm -rf \"$tmp\"" EXIT
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/err" ] && tail -c 1500 "$tmp/err" >&2
	fails=$((fails + 1))
}
home=$tmp/home
xdg=$tmp/xdg
repo=$tmp/repo
mkdir -p "$home" "$xdg" "$repo/.git" "$repo/.cage" "$repo/sub" "$tmp/data" "$tmp/bin1" "$tmp/bin2"
echo one >"$tmp/data/f"
echo two >"$tmp/data/g"
# The command: a program of its own on PATH, named like no agent of the
# standard library, so that its agent layer is the user's alone.
printf '#!/bin/sh\necho "bin1 $*"\nexec cat "$@"\n' >"$tmp/bin1/kcat"
printf '#!/bin/sh\necho "bin2 $*"\nexec cat "$@"\n' >"$tmp/bin2/kcat"
chmod 0755 "$tmp/bin1/kcat" "$tmp/bin2/kcat"
path=$tmp/bin1:/usr/bin:/bin
# run CAGERUN-ARGS...: cagerun -v in the repository's sub folder with a
# fixed environment (the environment is part of the request); output in
# $tmp/err.
run() {
	(cd "$repo/sub" && env -i PATH="$path" HOME="$home" XDG_CONFIG_HOME="$xdg" LANG=C.UTF-8 \
		"$cagerun" -v --mode enforce-fs "$@" >"$tmp/err" 2>&1 </dev/null)
}
# The project layer as it is now approved (cagerun trust).
approve() { (cd "$repo" && env HOME="$home" XDG_CONFIG_HOME="$xdg" "$cagerun" trust >/dev/null 2>&1); }
took() { grep -q 'compile: kept on disk' "$tmp/err"; }
said() { grep -q "compile: not the one kept on disk: .*$1" "$tmp/err"; }
reads() { grep -qx "$1" "$tmp/err"; }
fp() { sed -n 's/.*cagerun: policy \(xxh3:[0-9a-f]*\).*/\1/p' "$tmp/err"; }

if cat "$tmp/data/f" "$tmp/data/g" >/dev/null; then ok; else bad "control: the files do not read"; fi
printf 'cage 1\nallow read "%s/data/**"\n' "$tmp" >"$repo/.cage/policy.cage"
approve
if [ -f "$xdg/cage/trust" ]; then ok; else bad "cagerun trust wrote no store"; fi

# ---- kept from the second run, then taken -------------------------------
run -- kcat "$tmp/data/f"
if [ $? -eq 0 ] && reads one && ! took; then ok; else bad "first run"; fi
fp1=$(fp)
run -- kcat "$tmp/data/f"
if [ $? -eq 0 ] && reads one && ! took; then ok; else bad "second run"; fi
run -- kcat "$tmp/data/f"
if [ $? -eq 0 ] && reads one && took && [ "$(fp)" = "$fp1" ] && [ -n "$fp1" ]; then ok; else
	bad "third run: not taken, or policy $(fp) against $fp1"
fi
if grep -q 'plan: reused' "$tmp/err"; then ok; else bad "the kept compile did not find the kept plan"; fi

# ---- the approval withdrawn, the layer unchanged ------------------------
mv "$xdg/cage/trust" "$tmp/trust.saved"
run -- kcat "$tmp/data/f"
s=$?
if [ $s -ne 0 ] && ! reads one && ! took && said "no longer approved"; then ok; else
	bad "trust withdrawn: status $s, taken or the file read"
fi
mv "$tmp/trust.saved" "$xdg/cage/trust"
run -- kcat "$tmp/data/f"
if [ $? -eq 0 ] && reads one && took; then ok; else bad "trust back: not taken or not read"; fi

# ---- the project layer edited --------------------------------------------
printf 'cage 1\nallow read "%s/data/**"\ndeny read "%s/data/g"\n' "$tmp" "$tmp" \
	>"$repo/.cage/policy.cage"
approve
run -- kcat "$tmp/data/g"
s=$?
if [ $s -ne 0 ] && ! reads two && ! took && said "changed since it was compiled"; then ok; else
	bad "edited project layer: status $s, taken or g read"
fi
run -- kcat "$tmp/data/g"
run -- kcat "$tmp/data/g"
s=$?
if [ $s -ne 0 ] && ! reads two && took; then ok; else bad "after the edit: status $s, or not taken"; fi

# denied_by WHAT FILE: f reads with the kept compile (the control); a
# layer FILE that denies it is found then: not taken, and f is denied.
denied_by() {
	run -- kcat "$tmp/data/f"
	if [ $? -eq 0 ] && reads one && took; then ok; else bad "control before $1: f read with the kept compile"; fi
	mkdir -p "${2%/*}"
	printf 'cage 1\ndeny read "%s/data/f"\n' "$tmp" >"$2"
	run -- kcat "$tmp/data/f"
	s=$?
	if [ $s -ne 0 ] && ! reads one && ! took; then ok; else bad "$1: status $s, taken or f read"; fi
}

# ---- a user agent layer added ---------------------------------------------
denied_by "agent layer added" "$xdg/cage/agents/kcat.cage"
rm "$xdg/cage/agents/kcat.cage"

# ---- another program first on PATH --------------------------------------
run -- kcat "$tmp/data/f"
if [ $? -eq 0 ] && reads one && grep -q '^bin1 ' "$tmp/err" && took; then ok; else
	bad "control: bin1's kcat with the kept compile"
fi
path=$tmp/bin2:$tmp/bin1:/usr/bin:/bin
run -- kcat "$tmp/data/f"
if [ $? -eq 0 ] && grep -q '^bin2 ' "$tmp/err" && ! took; then ok; else
	bad "another kcat first on PATH: not run, or the kept compile taken"
fi
path=$tmp/bin1:/usr/bin:/bin

# ---- a project layer nearer the working folder ----------------------------
denied_by "a nearer project layer" "$repo/sub/.cage/policy.cage"

echo "keptlayers: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
