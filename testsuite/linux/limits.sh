#!/bin/sh
# limits.sh - the policy's resource limits hold on Linux (docs/cagerun.md,
# "Resource limits"), each case beside its control:
#   - a fork bomb ends inside the cage: the same bomb outside forks every
#     child it asks for; inside it stops at the limit with EAGAIN, the host
#     can still fork meanwhile, and none of its processes outlive the run;
#     a run killed with SIGKILL leaves its cgroup, which a later run sweeps;
#     a process limit counts the sandbox only (the same limit as a plain
#     rlimit, outside, counts the user's other processes too);
#   - a disk filler in TMPDIR stops with ENOSPC at `limit tmp`;
#   - a descriptor hog stops with EMFILE at `limit files`, and without a
#     limit the command gets the limit cagerun was started with;
#   - the command may use every CPU cagerun may (init starts beside
#     cagerun's CPU and takes the whole set back);
#   - memory: enforced where a memory cgroup can be made (a delegated
#     cgroup v2 controller; cgroup v1's memory hierarchy for root), else
#     refused (125) unless best-effort, which says so in one line;
#   - the shipped examples and the layered form carry the defaults, a fork
#     bomb stops under them, and ordinary parallel work still passes.
# Every hog is bounded in count and time on its own (lnx_hog.c).
# usage: limits.sh CAGERUN HOG SRCDIR
set -u
cagerun=$1
src=$3
tmp=$(mktemp -d)
chmod 755 "$tmp"
sleepers=
cleanup() {
	[ -n "$sleepers" ] && kill $sleepers 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
home=$tmp/home
ws=$home/src/app
# What the examples' path params name.
mkdir -p "$ws/bin" "$tmp/xdg" "$home/.cache/go-build" "$home/go" "$home/datasets"
git init -q "$ws" || exit 1
# The hog under a name of this run only, so that counting its processes
# counts nobody else's.
hog=$ws/bin/hog-$$
cp "$2" "$hog" || exit 1
export HOME="$home" XDG_CONFIG_HOME="$tmp/xdg"
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() {
	echo "FAIL: $*"
	for f in out err; do
		[ -s "$tmp/$f" ] && { echo "  $f:"; sed 's/^/    /' "$tmp/$f"; }
	done
	failed=$((failed + 1))
}
# value KEY FILE: the number after KEY= in FILE
value() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" "$2" | tail -n 1; }
hogs() { n=$(pgrep -c -f "^$hog ") ; echo "${n:-0}"; }

# policy NAME LIMIT-LINES...: a small policy with these limit lines.
policy() {
	name=$1
	shift
	{
		echo 'cage 1'
		echo 'param workspace : path'
		echo 'profile t {'
		echo '    allow read exec "/usr/**", "/bin/**", "/lib/**", "/lib64/**", "/etc/**", "/proc/**"'
		echo '    allow read write "/dev/null"'
		echo '    allow read write exec workspace'
		for l in "$@"; do echo "    $l"; done
		echo '}'
	} >"$tmp/$name.cage"
}
# run POLICY ARGS...: cagerun on it, output in out/err, status in $rc
run() {
	p=$1
	shift
	timeout -k 5 60 "$cagerun" -p "$tmp/$p.cage" -D workspace="$ws" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

policy none
policy procs 'limit processes 64'
policy tmp 'limit tmp 8 MiB'
policy files 'limit files 64'
policy mem 'limit memory 64 MiB'
policy tmpbig 'limit tmp 256 MiB'
policy memtmp 'limit memory 64 MiB' 'limit tmp 256 MiB'
policy membe 'limit memory 64 MiB best-effort'

# ---- processes ----
# Control: outside any cage, the bomb gets every child it asks for.
"$hog" fork 200 0 >"$tmp/out" 2>"$tmp/err"
if [ "$(value forked "$tmp/out")" = 200 ]; then ok; else bad "control: 200 forks outside"; fi
# Inside: it stops at the limit (the sandbox's init and the bomb itself
# count too), with EAGAIN; the host forks meanwhile, and its count of the
# bomb's processes is bounded by the limit.
rm -f "$ws/full"
timeout -k 5 60 "$cagerun" -v -p "$tmp/procs.cage" -D workspace="$ws" -- \
	"$hog" fork 1000 3 "$ws/full" >"$tmp/out" 2>"$tmp/err" &
bg=$!
i=0
while [ ! -e "$ws/full" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
during=$(hogs)
# Where the pids cgroup is the mechanism: it holds the sandbox's processes
# (every bomb process was born inside) and not cagerun, whose own threads
# must not count against the limit.
crun=$(pgrep -P $bg -x cagerun | head -n 1)
cgdir=$(find /sys/fs/cgroup -maxdepth 4 -type d -name "cage-run.${crun:-none}" 2>/dev/null | head -n 1)
in_cg=0
cagerun_in_cg=no
if [ -n "$cgdir" ]; then
	in_cg=$(wc -l <"$cgdir/cgroup.procs")
	grep -qx "$crun" "$cgdir/cgroup.procs" && cagerun_in_cg=yes
fi
if sh -c 'exit 0'; then host_fork=yes; else host_fork=no; fi
wait $bg
rc=$?
forked=$(value forked "$tmp/out")
if [ "$rc" -eq 0 ] && [ -n "$forked" ] && [ "$forked" -ge 50 ] && [ "$forked" -lt 64 ] &&
	grep -q 'err=EAGAIN' "$tmp/out"; then ok; else bad "fork bomb stops at limit processes 64 (forked ${forked:-?})"; fi
if [ "$during" -ge 50 ] && [ "$during" -le 64 ]; then ok; else bad "host sees ${during} bomb processes at the limit (want 50..64)"; fi
if [ "$host_fork" = yes ]; then ok; else bad "the host could not fork during the bomb"; fi
after=$(hogs)
if [ "$after" -eq 0 ]; then ok; else bad "$after bomb processes outlived the run"; fi
# How it was enforced, and what cagerun says at exit: a pids cgroup reports
# the failed forks; RLIMIT_NPROC leaves nothing to read.
if grep -q 'limit processes: pids cgroup' "$tmp/err"; then
	if grep -q 'cagerun: limit processes 64 was reached: [0-9]* forks\? failed' "$tmp/err"; then ok; else bad "exit report of the pids cgroup"; fi
	if [ "$in_cg" -ge 50 ] && [ "$in_cg" -le 64 ] && [ "$cagerun_in_cg" = no ]; then ok; else bad "the run's cgroup ${cgdir:-(not found)} held $in_cg processes (want 50..64), cagerun among them: $cagerun_in_cg"; fi
	if [ -n "$cgdir" ] && [ ! -d "$cgdir" ]; then ok; else bad "the run's cgroup ${cgdir:-(not found)} outlived the run"; fi
elif grep -q 'limit processes: RLIMIT_NPROC in the user namespace' "$tmp/err" && [ "$(id -u)" -ne 0 ]; then
	ok
else
	bad "how limit processes was enforced"
fi
# A run killed with SIGKILL leaves its cgroup behind, empty (the control);
# the next run that sweeps (its lease made anew in a TMPDIR of its own, no
# spare there, the sweep's mark a minute old) removes it (lnx_limits_sweep).
if [ -n "$cgdir" ]; then
	mkdir -p "$tmp/sw"
	TMPDIR=$tmp/sw timeout -k 5 60 "$cagerun" -q -p "$tmp/procs.cage" -D workspace="$ws" -- \
		sh -c 'echo up >"$0"; sleep 30' "$ws/killed-up" >/dev/null 2>&1 &
	kbg=$!
	i=0
	while [ ! -e "$ws/killed-up" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	kpid=$(pgrep -P $kbg -x cagerun | head -n 1)
	kcg=$(find /sys/fs/cgroup -maxdepth 4 -type d -name "cage-run.${kpid:-none}" 2>/dev/null | head -n 1)
	[ -n "$kpid" ] && kill -KILL "$kpid"
	wait $kbg 2>/dev/null
	i=0
	while [ -n "$kcg" ] && [ -s "$kcg/cgroup.procs" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	sleep 2.5 # older than LNX_LIMITS_SWEEP_AGE
	if [ -n "$kcg" ] && [ -d "$kcg" ] && [ ! -s "$kcg/cgroup.procs" ]; then
		touch -d '2 minutes ago' "$tmp/sw/cage-swept.$(id -u)"
		rm -rf "$tmp/sw/cage-spare.$(id -u)"
		TMPDIR=$tmp/sw timeout -k 5 60 "$cagerun" -q -p "$tmp/procs.cage" -D workspace="$ws" -- \
			true >"$tmp/out" 2>"$tmp/err"
		if [ ! -d "$kcg" ]; then ok; else bad "the killed run's cgroup $kcg was not swept"; fi
	else
		bad "control: the killed run's cgroup ${kcg:-(not found)} is not left behind, empty"
	fi
fi
# cgroup v1, where the run's cgroups are made while init builds its
# mounts (lnx_limits_make): a cgroup left under the run's own name
# (cage-run.PID: a killed run's, whose pid this run now has) is replaced
# when empty, and the command runs in the new one (the control); holding
# a process, it cannot be, and the run refuses to start, nothing run.
# left.sh makes it under its own pid, which cagerun keeps by the exec.
case "$cgdir" in */pids/*)
	parent=${cgdir%/*}
	cat >"$tmp/left.sh" <<'EOF'
d=$1/cage-run.$$
mkdir "$d" || exit 90
echo "$d" >"$2"
[ "$3" = - ] || echo "$3" >"$d/cgroup.procs" || exit 91
shift 3
exec "$@"
EOF
	rm -f "$ws/left-ran"
	timeout -k 5 60 sh "$tmp/left.sh" "$parent" "$tmp/left" - "$cagerun" -q -p "$tmp/procs.cage" \
		-D workspace="$ws" -- sh -c 'grep :pids: /proc/self/cgroup >"$0"' "$ws/left-ran" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	left=$(cat "$tmp/left" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ -n "$left" ] && grep -q ":pids:${left#"$parent"}\$" "$ws/left-ran" && [ ! -d "$left" ]; then ok; else
		bad "an empty cgroup left under the run's name: status $rc, the command's $(cat "$ws/left-ran" 2>/dev/null), left ${left:-?}"
	fi
	rm -f "$ws/left-ran" "$tmp/left"
	sleep 30 &
	holder=$!
	timeout -k 5 60 sh "$tmp/left.sh" "$parent" "$tmp/left" "$holder" "$cagerun" -q -p "$tmp/procs.cage" \
		-D workspace="$ws" -- touch "$ws/left-ran" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	left=$(cat "$tmp/left" 2>/dev/null)
	if [ "$rc" -eq 125 ] && [ ! -e "$ws/left-ran" ] && grep -q "cannot create the cgroup $left: .*nothing was run" "$tmp/err"; then ok; else
		bad "a cgroup left under the run's name, holding a process: status $rc (want 125), the command $([ -e "$ws/left-ran" ] && echo ran || echo did not run)"
	fi
	[ -n "$left" ] && echo "$holder" >"$parent/cgroup.procs"
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	[ -n "$left" ] && rmdir "$left"
	# A kept plan found stale while init builds its mounts: that sandbox
	# is thrown away and a second one built, which joins the cgroups the
	# first attempt made (lnx_limits_make runs once). The control: the
	# same run, the plan still fresh, reused.
	policy stale 'limit processes 64' 'deny write "{workspace}/gate/**"'
	rm -rf "$ws/gate"
	in_pids='grep :pids: /proc/self/cgroup'
	for i in 1 2 3; do run stale -v -- sh -c "$in_pids"; done
	if [ "$rc" -eq 0 ] && grep -q 'plan: reused' "$tmp/err" && grep -q ':pids:/.*cage-run\.' "$tmp/out"; then ok; else
		bad "control: a kept plan reused, the command in the run's pids cgroup"
	fi
	mkdir "$ws/gate"
	run stale -v -- sh -c "$in_pids"
	if [ "$rc" -eq 0 ] && grep -q 'changed since the kept plan was built' "$tmp/err" &&
		grep -q ':pids:/.*cage-run\.' "$tmp/out"; then ok; else
		bad "a stale kept plan's second sandbox: status $rc, the command in $(cat "$tmp/out")"
	fi
	rm -rf "$ws/gate"
	;;
esac
# The limit counts the sandbox only: with 40 more processes of this user
# running outside, the bomb inside still reaches the limit, while the same
# limit as a plain RLIMIT_NPROC outside (the control) counts them. Root is
# exempt from RLIMIT_NPROC, so the control means something only for others.
i=0
while [ $i -lt 40 ]; do sleep 30 & sleepers="$sleepers $!"; i=$((i + 1)); done
run procs -- "$hog" fork 1000 0
inside=$(value forked "$tmp/out")
if [ -n "$inside" ] && [ "$inside" -ge 50 ]; then ok; else bad "with 40 processes outside, the bomb inside forked ${inside:-?} (want >= 50)"; fi
if [ "$(id -u)" -ne 0 ]; then
	"$hog" nproc-rlimit 64 "$hog" fork 1000 0 >"$tmp/out" 2>"$tmp/err"
	outside=$(value forked "$tmp/out")
	if [ -n "$outside" ] && [ "$outside" -lt "$inside" ]; then ok; else bad "control: RLIMIT_NPROC 64 outside forked ${outside:-?}, not fewer than inside (${inside})"; fi
fi
if [ "$(id -u)" -eq 0 ]; then
	# Why root needs the cgroup: the kernel exempts it from RLIMIT_NPROC.
	"$hog" nproc-rlimit 20 "$hog" fork 40 0 >"$tmp/out" 2>"$tmp/err"
	if [ "$(value forked "$tmp/out")" = 40 ]; then ok; else bad "root: RLIMIT_NPROC 20 did not stop 40 forks"; fi
fi
kill $sleepers 2>/dev/null
wait 2>/dev/null
sleepers=

# ---- tmp ----
# Control: with no limit, 16 MiB fit in TMPDIR.
run none -- sh -c '"$1" fill 16 "$TMPDIR/f"' sh "$hog"
if [ "$rc" -eq 0 ] && grep -q 'wrote=16 err=none' "$tmp/out"; then ok; else bad "control: 16 MiB into TMPDIR without a limit"; fi
run tmp -- sh -c '"$1" fill 16 "$TMPDIR/f"' sh "$hog"
wrote=$(value wrote "$tmp/out")
if [ "$rc" -eq 0 ] && grep -q 'err=ENOSPC' "$tmp/out" && [ "${wrote:-99}" -le 8 ]; then ok; else bad "limit tmp 8 MiB: ENOSPC by 8 MiB"; fi
if grep -q 'the private tmp was full at the end (limit tmp 8 MiB)' "$tmp/err"; then ok; else bad "exit report of the full tmp"; fi
run tmp -q -- sh -c '"$1" fill 16 "$TMPDIR/f"' sh "$hog"
if ! grep -q 'tmp was full' "$tmp/err"; then ok; else bad "--quiet still reports the full tmp"; fi

# ---- files ----
"$hog" files 200 >"$tmp/out"
if grep -q 'opened=200 err=none' "$tmp/out"; then ok; else bad "control: 200 descriptors outside"; fi
run files -- "$hog" files 200
if [ "$rc" -eq 0 ] && grep -q 'err=EMFILE' "$tmp/out" && [ "$(value opened "$tmp/out")" -lt 64 ]; then ok; else bad "limit files 64: EMFILE before 64"; fi
run files -- sh -c 'ulimit -Hn'
if [ "$(cat "$tmp/out")" = 64 ]; then ok; else bad "limit files 64: hard limit $(cat "$tmp/out")"; fi
# Without a limit: the limits cagerun was started with.
want="$(ulimit -Sn) $(ulimit -Hn)"
run none -- sh -c 'echo "$(ulimit -Sn) $(ulimit -Hn)"'
if [ "$(cat "$tmp/out")" = "$want" ]; then ok; else bad "no limit files: the command got $(cat "$tmp/out"), want $want"; fi

# ---- CPUs ----
# Init starts on the CPUs beside cagerun's and takes the whole set back
# before it starts anything (lnx_sandbox.c, start_beside): the command
# may use every CPU cagerun could, guarded or not.
allowed='s/^Cpus_allowed_list:[[:space:]]*//p'
want=$(sed -n "$allowed" /proc/self/status)
run none -- sed -n "$allowed" /proc/self/status
if [ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = "$want" ]; then ok; else
	bad "the command may use CPUs $(cat "$tmp/out"), cagerun $want"
fi
timeout -k 5 60 "$cagerun" -q -p "$src/examples/claude-code.cage" -D workspace="$ws" --mode enforce-fs \
	-- sed -n "$allowed" /proc/self/status >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = "$want" ]; then ok; else
	bad "guarded: the command may use CPUs $(cat "$tmp/out"), cagerun $want"
fi

# ---- memory ----
# Enforced through a memory cgroup: a delegated cgroup v2 controller, or
# cgroup v1's memory hierarchy for root on hosts that mount it.
"$hog" alloc 256 >"$tmp/out"
if grep -q 'allocated=256' "$tmp/out"; then ok; else bad "control: 256 MiB allocated outside"; fi
run mem -- "$hog" alloc 256
if [ "$rc" -eq 125 ]; then
	if grep -q 'limit memory 64 MiB cannot be enforced here' "$tmp/err" &&
		grep -q 'mem.cage:7:5' "$tmp/err" && [ ! -s "$tmp/out" ]; then ok; else bad "strict memory refused with its location"; fi
	run membe -- "$hog" alloc 128
	if [ "$rc" -eq 0 ] && [ "$(grep -c 'best-effort limits NOT enforced here: memory 64 MiB' "$tmp/err")" = 1 ] &&
		grep -q 'allocated=128' "$tmp/out"; then ok; else bad "best-effort memory runs and says so once"; fi
	run membe -q -- "$hog" alloc 16
	if [ "$rc" -eq 0 ] && ! grep -q 'NOT enforced' "$tmp/err"; then ok; else bad "--quiet: no best-effort line"; fi
else
	# A memory cgroup: the allocation ends the command, not the machine.
	if [ "$rc" -ne 0 ] && grep -q 'limit memory 64 MiB was reached' "$tmp/err" &&
		[ "$(value allocated "$tmp/out")" -le 64 ]; then ok; else bad "memory cgroup: the allocation was not stopped (status $rc)"; fi
	# The tmpfs's pages are the sandbox's memory too: a tmp bigger than
	# the memory bound fills only as far as the memory lets it (the
	# control: the same fill under the same tmp limit, no memory limit).
	run tmpbig -- sh -c '"$1" fill 128 "$TMPDIR/f"' sh "$hog"
	if [ "$rc" -eq 0 ] && grep -q 'wrote=128 err=none' "$tmp/out"; then ok; else bad "control: 128 MiB into a 256 MiB tmp"; fi
	run memtmp -- sh -c '"$1" fill 128 "$TMPDIR/f"' sh "$hog"
	if [ "$rc" -ne 0 ] && ! grep -q 'wrote=128' "$tmp/out" &&
		grep -q 'limit memory 64 MiB was reached' "$tmp/err"; then ok; else bad "tmp pages count as memory: 128 MiB into tmp under limit memory 64 MiB (status $rc)"; fi
fi

# ---- the shipped examples and the layered form ----
for ex in "$src"/examples/*.cage; do
	name=$(basename "$ex" .cage)
	timeout -k 5 60 "$cagerun" -q -p "$ex" -D workspace="$ws" --mode enforce -- sh -c \
		'echo "$(ulimit -Hn)"; cat /proc/self/mountinfo' >"$tmp/out" 2>"$tmp/err"
	if [ "$(head -n 1 "$tmp/out")" -le 65536 ] && grep -q "/cage-tmp\.[^ /]*\(/tmp\)\? rw,.* tmpfs .*size=4194304k" "$tmp/out"; then ok; else bad "$name: the defaults of std/limits (files, tmp)"; fi
	# A fork bomb stops at the default 4096 (it asks for more; each child
	# only waits).
	timeout -k 5 120 "$cagerun" -q -p "$ex" -D workspace="$ws" --mode enforce -- \
		"$hog" fork 5000 0 >"$tmp/out" 2>"$tmp/err"
	forked=$(value forked "$tmp/out")
	if [ -n "$forked" ] && [ "$forked" -ge 4000 ] && [ "$forked" -lt 4096 ] && grep -q err=EAGAIN "$tmp/out"; then ok; else bad "$name: fork bomb stops at 4096 (forked ${forked:-?})"; fi
done
# The same under the layered form (cagerun's defaults include std/limits),
# and --show says what it will bound.
(cd "$ws" && timeout -k 5 60 "$cagerun" --show -- "$hog") >"$tmp/out" 2>"$tmp/err"
if grep -qx 'limits: processes 4096, memory 16 GiB best-effort, tmp 4 GiB, files 65536' "$tmp/out"; then ok; else bad "--show lists the limits"; fi
# Raising a default: the user's own std/limits, found first through -I.
mkdir -p "$tmp/inc/std"
printf 'cage 1\nlimit processes 10000\n' >"$tmp/inc/std/limits.cage"
(cd "$ws" && timeout -k 5 60 "$cagerun" -I "$tmp/inc" --show -- "$hog") >"$tmp/out" 2>"$tmp/err"
if grep -qx 'limits: processes 10000' "$tmp/out"; then ok; else bad "-I DIR/std/limits.cage replaces the defaults"; fi
(cd "$ws" && timeout -k 5 120 "$cagerun" -q -- "$hog" fork 5000 0) >"$tmp/out" 2>"$tmp/err"
forked=$(value forked "$tmp/out")
if [ -n "$forked" ] && [ "$forked" -ge 4000 ] && [ "$forked" -lt 4096 ]; then ok; else bad "layered form: fork bomb stops at 4096 (forked ${forked:-?})"; fi
if [ "$(hogs)" -eq 0 ]; then ok; else bad "bomb processes outlived the example runs"; fi
# Ordinary heavy work passes under the defaults: a parallel make of 200
# targets, 64 at a time, each a shell and a compiler-like child.
{
	printf 'all:'
	i=0
	while [ $i -lt 200 ]; do printf ' o%d' $i; i=$((i + 1)); done
	printf '\n\t@echo built\no%%:\n\t@sh -c '\''i=0; while [ $$i -lt 200 ]; do i=$$((i+1)); done; echo $$i > $$TMPDIR/$@'\''\n'
} >"$ws/Makefile"
timeout -k 5 120 "$cagerun" -q -p "$src/examples/claude-code.cage" -D workspace="$ws" -- \
	make -C "$ws" -j64 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^built$' "$tmp/out"; then ok; else bad "make -j64 under claude-code (status $rc)"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
