#!/bin/sh
# plancache.sh CAGERUN CAGEC - the kept Linux plan (docs/plan-format.md) can never
# grant more than a fresh build, and no cage can write it:
#   - between two runs a directory the policy denies is created; one is
#     removed; a denied directory is swapped for a symlink to a readable
#     one; a denied file is replaced; the policy is edited; a param and
#     HOME change. Each time the run with the cache probes exactly what a
#     run with an empty cache probes, the changed path is denied there, and
#     (the control) the same probe reads it without cagerun;
#   - a kept plan with a flipped byte, truncated, mode 0666, owned by
#     another user, or a symlink in its place is discarded and rebuilt;
#   - inside the cage the cache folder cannot be written, its files not
#     changed or removed, and neither it nor its parent renamed away,
#     while the same steps work outside and the tree around it is
#     writable inside;
#   - `cagec --emit plan` writes the same bytes cagerun keeps, and nothing
#     for a policy cagerun refuses.
# Every reuse is seen first ("reused" with --verbose), so no step passes
# because the cache was never used.
set -u
cagerun=$1
cagec=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8
unset XDG_CACHE_HOME 2>/dev/null
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/err" ] && tail -c 2000 "$tmp/err" >&2
	fails=$((fails + 1))
}
ws=$tmp/ws
mkdir -p "$ws"

# layout HOME: the fixture every scenario starts from.
layout() {
	rm -rf "$1"
	mkdir -p "$1/w/gone" "$1/w/link" "$1/pub" "$1/d1" "$1/d2" "$1/w/pub2" "$1/.cache"
	for f in w/gone/f w/link/f pub/pubfile d1/f d2/f w/pub2/f w/keep; do echo "$f" >"$1/$f"; done
	echo secret >"$1/w/secret.txt"
}
cat >"$tmp/p.cage" <<'POL'
cage 1
param data : path
profile t {
    mode enforce-fs
    allow read exec "/usr/**", "/bin/**", "/lib/**", "/lib64/**", "/etc/**", "/proc/**"
    allow read write "/dev/null"
    allow read write "~/**"
    deny read write "~/w/new/**"
    deny read write "~/w/gone/**"
    deny read write "~/w/link/**"
    deny read write "~/w/secret.txt"
    deny read write "~/w/*.key"
    deny read write "{data}/**"
}
POL
cp "$tmp/p.cage" "$tmp/orig.cage"

# What the probe reads: every path a scenario changes, under $H.
probe_paths() {
	echo "$1/w/new/f $1/w/gone/f $1/w/link/f $1/w/link/pubfile $1/pub/pubfile $1/w/secret.txt"
	echo "$1/d1/f $1/d2/f $1/w/pub2/f $1/w/keep $1/w/new.key"
}
probe='for p; do if cat "$p" >/dev/null 2>&1; then echo "$p:yes"; else echo "$p:no"; fi; done'

# cr CACHE-ROOT OUT ARGS...: cagerun from the workspace with the home $H,
# caching under CACHE-ROOT (the home's own ~/.cache when "home"); the
# probe's answers in OUT, messages in $tmp/err, status in $rc.
cr() {
	croot=$1 out=$2
	shift 2
	if [ "$croot" = home ]; then unset XDG_CACHE_HOME; else export XDG_CACHE_HOME="$croot"; fi
	# shellcheck disable=SC2046 # one word per path
	(cd "$ws" && HOME=$H timeout 60 "$cagerun" --verbose -p "$tmp/p.cage" -D data="$data" "$@" \
		${CR_EXTRA:-} -- sh -c "$probe" sh $(probe_paths "$H") >"$out" 2>"$tmp/err" </dev/null)
	rc=$?
	unset XDG_CACHE_HOME
}
n=0
# fresh: the same run with a cache no run has used.
fresh() {
	n=$((n + 1))
	mkdir -p "$tmp/fresh$n"
	cr "$tmp/fresh$n" "$tmp/out.fresh"
	if grep -q 'plan: reused' "$tmp/err"; then bad "fresh run $n reused a plan"; fi
}

# scenario NAME TARGET EXPECT CHANGE: a run keeps the plan, a second
# reuses it, CHANGE runs, then the cached run must equal a fresh one and
# deny TARGET, which the probe reads without cagerun. EXPECT: "rebuild"
# (the kept plan must not be reused), "same" (the plan a fresh build
# makes is the kept one, so reusing it is right), "reused" (the same,
# and the kept plan must be reused), "refused" (a fresh build refuses
# the policy: so must the cached run).
scenario() {
	name=$1 target=$2 expect=$3 change=$4
	want=0
	[ "$expect" = refused ] && want=125
	H=$tmp/home data=$tmp/home/d1
	layout "$H"
	cp "$tmp/orig.cage" "$tmp/p.cage"
	cr home "$tmp/out.1"
	[ "$rc" -eq 0 ] && grep -q 'plan: kept as' "$tmp/err" || bad "$name: first run kept no plan (status $rc)"
	cr home "$tmp/out.2"
	if [ "$rc" -eq 0 ] && grep -q 'plan: reused' "$tmp/err"; then ok; else bad "$name: second run did not reuse the plan (status $rc)"; fi
	eval "$change"
	cr home "$tmp/out.cached"
	crc=$rc
	# What the run that ran said: a kept compile found stale while its
	# sandbox was built (docs/cagerun.md, "A compile kept on disk") ends
	# that attempt, and the run starts again from a fresh compile.
	sed -n '/compile: not the one kept on disk/,$p' "$tmp/err" >"$tmp/err.cached"
	[ -s "$tmp/err.cached" ] || cp "$tmp/err" "$tmp/err.cached"
	if [ "$expect" = reused ]; then
		if grep -q 'plan: reused' "$tmp/err.cached"; then ok; else
			bad "$name: the same entries under new times did not reuse the kept plan"
		fi
	elif [ "$expect" != same ] && grep -q 'plan: reused' "$tmp/err.cached"; then
		bad "$name: the changed state reused the kept plan"
	else ok; fi
	fresh
	if [ "$crc" -eq "$want" ] && [ "$rc" -eq "$want" ] && cmp -s "$tmp/out.cached" "$tmp/out.fresh"; then ok; else
		bad "$name: with the cache (status $crc) differs from a fresh build (status $rc): $(diff "$tmp/out.cached" "$tmp/out.fresh" | tr '\n' ' ')"
	fi
	[ "$expect" = refused ] || [ "$target" = - ] && return
	if grep -qx "$target:no" "$tmp/out.fresh"; then ok; else bad "$name: fresh build does not deny $target"; fi
	# shellcheck disable=SC2046
	if sh -c "$probe" sh $(probe_paths "$H") | grep -qx "$target:yes"; then ok; else
		bad "$name: control: $target is not readable without cagerun"
	fi
	# A third run reuses the rebuilt plan.
	cr home "$tmp/out.3"
	if grep -q 'plan: reused' "$tmp/err" && cmp -s "$tmp/out.3" "$tmp/out.fresh"; then ok; else bad "$name: the rebuilt plan was not reused"; fi
}

# A denied directory comes to exist: a plan kept from before it did would
# not hide it.
scenario created "$tmp/home/w/new/f" rebuild 'mkdir "$H/w/new" && echo f >"$H/w/new/f"'
# A denied directory goes (the kept plan would mount on nothing; nothing
# is left to deny, so only the equality is shown), and then comes back as
# a symlink to a readable directory, which a fresh build hides.
scenario removed - rebuild 'rm -r "$H/w/gone"'
# The same with --log-denials, where the kept plan's paths are asked
# before its sandbox is started rather than while it is built (lnx_run.c).
CR_EXTRA="--log-denials"
scenario created-log-denials "$tmp/home/w/new/f" rebuild 'mkdir "$H/w/new" && echo f >"$H/w/new/f"'
scenario symlink-log-denials "$tmp/home/pub/pubfile" rebuild 'rm -r "$H/w/link" && ln -s "$H/pub" "$H/w/link"'
CR_EXTRA=
scenario removed-then-link "$tmp/home/pub/pubfile" rebuild 'rm -r "$H/w/gone"; ln -s "$H/pub" "$H/w/gone"'
# A denied directory becomes a symlink to a readable one: a fresh build
# hides what it now reaches.
scenario symlink "$tmp/home/pub/pubfile" rebuild 'rm -r "$H/w/link" && ln -s "$H/pub" "$H/w/link"'
# A denied file is replaced by a new one: the plan names it by path only,
# so the kept plan is the fresh one. Replaced by a directory, it is a
# policy Linux cannot enforce exactly there: refused either way.
scenario file-replaced "$tmp/home/w/secret.txt" same 'echo new >"$H/w/s.new" && mv "$H/w/s.new" "$H/w/secret.txt"'
scenario file-to-dir "$tmp/home/w/secret.txt/f" refused 'rm "$H/w/secret.txt" && mkdir "$H/w/secret.txt" && echo x >"$H/w/secret.txt/f"'
# ~/w is listed for the *.key glob. A file saved through a temporary
# name (what git does to .git/index) and a file made and removed again
# move its times but leave its entries: the kept plan is reused (and is
# what a fresh build makes). A new name the glob matches is a rebuild
# that denies it; a new name it does not match is one too (the listing
# changed), and the fresh build is the same.
scenario saved-by-rename - reused 'echo k >"$H/w/keep.tmp" && mv "$H/w/keep.tmp" "$H/w/keep"'
scenario made-and-removed - reused 'echo t >"$H/w/t" && rm "$H/w/t"'
scenario key-created "$tmp/home/w/new.key" rebuild 'echo key >"$H/w/new.key"'
scenario other-created - rebuild 'echo o >"$H/w/other"'
# The policy is edited: a new deny.
scenario policy-edited "$tmp/home/w/pub2/f" rebuild 'sed -i "s|    deny read write \"~/w/new/\*\*\"|    deny read write \"~/w/new/**\"\n    deny read write \"~/w/pub2/**\"|" "$tmp/p.cage"'
# The param moves the deny elsewhere.
scenario param "$tmp/home/d2/f" rebuild 'data=$H/d2'
# Another HOME: every ~ rule means other paths.
scenario home "$tmp/home2/w/secret.txt" rebuild 'H=$tmp/home2; layout "$H"'

# ---- tampered artifacts are discarded ----
H=$tmp/home data=$tmp/home/d1
layout "$H"
cp "$tmp/orig.cage" "$tmp/p.cage"
cr home "$tmp/out.1"
plan=$(ls "$H/.cache/cage/.plans/"*.plan 2>/dev/null | head -n 1)
[ -n "$plan" ] || bad "tamper: no plan kept"
fresh
# tamper NAME CMD: CMD spoils $plan; the next run must discard it, run
# as a fresh build does, and keep a sound one (reused by the run after).
tamper() {
	name=$1
	cr home "$tmp/out.pre"
	grep -q 'plan: reused' "$tmp/err" || bad "tamper $name: the plan was not reused before"
	eval "$2"
	cr home "$tmp/out.t"
	if [ "$rc" -eq 0 ] && grep -q 'discarded, planning again' "$tmp/err" && ! grep -q 'plan: reused' "$tmp/err" &&
		cmp -s "$tmp/out.t" "$tmp/out.fresh"; then ok; else bad "tamper $name: not discarded (status $rc)"; fi
	if [ -f "$plan" ] && [ ! -L "$plan" ] && [ "$(stat -c %a "$plan")" = 600 ] &&
		[ "$(stat -c %u "$plan")" = "$(id -u)" ]; then ok; else bad "tamper $name: not rewritten sound"; fi
}
tamper flip 'printf "\377" | dd of="$plan" bs=1 seek=200 conv=notrunc 2>/dev/null'
tamper truncate 'truncate -s 100 "$plan"'
tamper chmod 'chmod 0666 "$plan"'
if [ "$(id -u)" -eq 0 ] && id cage-test >/dev/null 2>&1; then
	tamper chown 'chown cage-test "$plan"'
else
	echo "SKIP: tamper chown (needs root and the cage-test user)"
fi
tamper symlink 'mv "$plan" "$tmp/real.plan" && ln -s "$tmp/real.plan" "$plan"'
tamper fifo 'rm "$plan" && mkfifo "$plan"'

# ---- cagec --emit plan: the same artifact ----
cr home "$tmp/out.pre"
(cd "$ws" && HOME=$H "$cagec" --emit plan -D data="$data" "$tmp/p.cage" -o "$tmp/cagec.plan" 2>"$tmp/err")
if [ $? -eq 0 ] && cmp -s "$tmp/cagec.plan" "$plan"; then ok; else bad "cagec --emit plan differs from the kept plan"; fi
rm -r "$H/w/secret.txt" && mkdir "$H/w/secret.txt" && echo x >"$H/w/secret.txt/f"
(cd "$ws" && HOME=$H "$cagec" --emit plan -D data="$data" "$tmp/p.cage" -o "$tmp/refused.plan" 2>"$tmp/err")
if [ $? -ne 0 ] && [ ! -s "$tmp/refused.plan" ] && grep -q 'cannot be enforced exactly' "$tmp/err"; then ok; else
	bad "cagec --emit plan wrote a plan cagerun refuses"
fi
rm -r "$H/w/secret.txt" && echo secret >"$H/w/secret.txt"

# ---- no cage writes the cache ----
cache=$H/.cache/cage/.plans
cr home "$tmp/out.pre"
cp "$plan" "$tmp/before.plan"
attack='
echo x >"$1/planted" 2>/dev/null && echo "WROTE planted"
echo x >>"$2" 2>/dev/null && echo "WROTE append"
rm -f "$2" 2>/dev/null && [ ! -e "$2" ] && echo "WROTE removed"
mv "$3/.cache/cage" "$3/.cache/moved" 2>/dev/null && echo "WROTE moved cage"
mv "$3/.cache" "$3/moved-cache" 2>/dev/null && echo "WROTE moved .cache"
ln -s / "$1/link" 2>/dev/null && echo "WROTE link"
touch "$3/.cache/beside" 2>/dev/null && echo "BESIDE"
'
# Control: every step works outside (on a copy, then put back).
cp -a "$H/.cache" "$tmp/cache.save"
sh -c "$attack" sh "$cache" "$plan" "$H" >"$tmp/out"
if [ "$(grep -c '^WROTE' "$tmp/out")" -eq 5 ] || [ "$(grep -c '^WROTE' "$tmp/out")" -eq 6 ]; then ok; else
	bad "control: the attack does not work outside: $(tr '\n' ' ' <"$tmp/out")"
fi
rm -rf "$H/.cache" "$H/moved-cache"
cp -a "$tmp/cache.save" "$H/.cache"
(cd "$ws" && HOME=$H timeout 60 "$cagerun" --verbose -p "$tmp/p.cage" -D data="$data" \
	-- sh -c "$attack" sh "$cache" "$plan" "$H" >"$tmp/out" 2>"$tmp/err" </dev/null)
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'plan: reused' "$tmp/err" && ! grep -q '^WROTE' "$tmp/out" &&
	grep -q '^BESIDE' "$tmp/out"; then ok; else
	bad "inside: the cache was writable: $(tr '\n' ' ' <"$tmp/out") (status $rc)"
fi
if cmp -s "$plan" "$tmp/before.plan" && [ ! -e "$cache/planted" ] && [ ! -e "$cache/link" ]; then ok; else
	bad "inside: the cache changed"
fi

# ---- the cache is bounded: past 128 plans the oldest go ----
i=0
while [ $i -lt 140 ]; do
	: >"$cache/old$i.plan"
	i=$((i + 1))
done
touch -d '2001-01-01' "$cache"/old*.plan
rm -f "$plan"
cr home "$tmp/out.p"
kept=$(find "$cache" -name '*.plan' | wc -l)
if [ "$rc" -eq 0 ] && [ "$kept" -le 128 ] && [ -f "$plan" ]; then ok; else
	bad "bound: $kept plans kept, the new one $([ -f "$plan" ] && echo kept || echo gone)"
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
