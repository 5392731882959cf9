#!/bin/sh
# task_policy.sh CAGERUN - `cagerun -p POLICY --task FILE`: the task layer
# on top of a policy run as written. What a task layer may do there
# (docs/cagerun.md, "A task layer on -p"), each case first shown without
# the task (or without cagerun) so that it cannot pass vacuously:
#
#   grant     a file the policy does not grant is readable only with the
#             task that grants it;
#   narrow    the task's deny wins over the policy profile's grant (its
#             rules come after all of the policy's);
#   reopen    a task allow over the policy's deny, or over its protect, is
#             refused (125, lint's finding in the task file), and so is
#             keeping a variable the policy unsets or declaring a profile;
#   show      --show lists both layers and says what the task may do.
cagerun=$1
. "$(dirname "$0")/check.sh"
ws=$tmp/ws
mkdir -p "$ws" "$tmp/extra"
echo "extra-$$" >"$tmp/extra/f"
echo denied >"$ws/h"
echo narrowed >"$ws/x"
echo protected >"$ws/p"
cat >"$tmp/pol.cage" <<'POL'
cage 1
param workspace : path
protect read write "{workspace}/p"
profile p {
    allow read exec "/usr/**", "/bin/**", "/lib/**", "/lib64/**", "/etc/**"
    allow read write workspace
    deny read write "{workspace}/h"
    env keep PATH
    env unset CAGE_TASK_SECRET
}
POL
printf 'cage 1\nallow read "%s/extra/**"\n' "$tmp" >"$tmp/grant.cage"
printf 'cage 1\ndeny read write "{workspace}/x"\n' >"$tmp/narrow.cage"
printf 'cage 1\nallow read write "{workspace}/h"\n' >"$tmp/reopen.cage"
printf 'cage 1\nallow read write "{workspace}/p"\n' >"$tmp/protect.cage"
printf 'cage 1\nenv keep CAGE_TASK_SECRET\n' >"$tmp/env.cage"
printf 'cage 1\nprofile mine {\n    allow read "%s/extra/**"\n}\n' "$tmp" >"$tmp/profile.cage"
# run [TASK] -- COMMAND...: cagerun -p pol.cage [--task TASK] in the workspace.
run() {
	task=$1
	shift
	if [ "$task" = - ]; then set -- -p "$tmp/pol.cage" "$@"; else
		set -- -p "$tmp/pol.cage" --task "$task" "$@"; fi
	(cd "$ws" && CAGE_TASK_SECRET=s3cret timeout 60 "$cagerun" -q -D workspace="$ws" "$@" \
		>"$tmp/out" 2>"$tmp/err" </dev/null)
	rc=$?
}

# grant
if cat "$tmp/extra/f" >/dev/null 2>&1; then ok "grant: control, the file is readable outside"; else
	bad "grant: control"; fi
run - -- cat "$tmp/extra/f"
if [ "$rc" -ne 0 ] && grep -q 'Permission denied' "$tmp/err"; then
	ok "grant: without the task the policy refuses it"; else bad "grant: without the task, status $rc"; fi
run "$tmp/grant.cage" -- cat "$tmp/extra/f"
if [ "$rc" -eq 0 ] && grep -qx "extra-$$" "$tmp/out"; then
	ok "grant: with the task it is read"; else bad "grant: with the task, status $rc"; fi

# narrow
run - -- cat "$ws/x"
if [ "$rc" -eq 0 ] && grep -qx narrowed "$tmp/out"; then
	ok "narrow: the policy grants the workspace file"; else bad "narrow: control, status $rc"; fi
run "$tmp/narrow.cage" -- cat "$ws/x"
if [ "$rc" -ne 0 ] && grep -q 'Permission denied' "$tmp/err"; then
	ok "narrow: the task's deny wins over the profile's grant"; else bad "narrow: status $rc"; fi

# reopen: refused before anything runs
for t in reopen:unsafe-order protect:protect-violation; do
	f=${t%%:*} id=${t#*:}
	run "$tmp/$f.cage" -- sh -c 'echo ran'
	refused "reopen: $f.cage, an allow over the policy's deny or protect: 125 [$id]" \
		"cagerun: $tmp/$f.cage:2:" "[$id]" \
		"cagerun: $tmp/$f.cage has 1 lint error; a task layer on -p $tmp/pol.cage may add grants and denies but not re-open what the policy denies or protects; nothing was run"
done
run - -- sh -c 'echo "${CAGE_TASK_SECRET-unset}"'
if [ "$rc" -eq 0 ] && grep -qx unset "$tmp/out"; then ok "env: control, the policy unsets it"; else
	bad "env: control, status $rc"; fi
run "$tmp/env.cage" -- sh -c 'echo "${CAGE_TASK_SECRET-unset}"'
refused "env: keeping what the policy unsets is refused" \
	"cagerun: $tmp/env.cage:2:10: error: the task layer keeps CAGE_TASK_SECRET, which the policy unsets"
run "$tmp/profile.cage" -- true
refused "profile: a task profile under -p is refused" "its profile 'mine' would not run"

# show
run "$tmp/grant.cage" --show
if [ "$rc" -eq 0 ] && grep -q "^  1\. policy .*$tmp/pol.cage" "$tmp/out" &&
	grep -q "^  2\. task .*$tmp/grant.cage" "$tmp/out" &&
	grep -q "the task layer is on top of -p's policy" "$tmp/out" &&
	grep -q "^profile: p$" "$tmp/out"; then
	ok "show: both layers, the policy's profile, and what the task may do"
else
	bad "show: status $rc"
fi
finish
