#!/bin/sh
# The observer's fast path against its full path: with the default toggles
# the observer classifies a call before it looks at the file system and
# skips the lstat (and everything else) for what would not be recorded;
# with --record-covered --record-workspace every access is recorded, so
# every call takes the full path (read the name, resolve it, check that the
# file exists, classify, record). The same workload, run both ways, must
# give the same would-block records, in the same order. The workload is
# made of the cases where the two could differ (and of those the filter
# answers without the supervisor: O_PATH opens through openat and open(2),
# which no toggle records, next to the same calls without O_PATH): a read of a file that does
# not exist (no record), O_CREAT of a new and of an existing file, O_RDWR,
# O_RDONLY|O_TRUNC, O_PATH, unlink and exec of missing and present files,
# mkdir, rename, names relative to the cwd and to a directory descriptor,
# names with "//", "." and ".." and names that only look like them,
# paths the policy covers, and names laid in the tracee's memory across a
# page boundary and ending on the last byte before an unreadable page (the
# observer reads the tracee's memory page by page).
# usage: differential.sh CAGERUN
set -u
CAGERUN=$1
T=$(mktemp -d /tmp/cage-mondiff.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }

mkdir -p "$T/ws" "$T/cov" "$T/un/sub" "$T/home" "$T/cr" "$T/wr"
echo c > "$T/cov/c"; echo u > "$T/un/u"; echo p > "$T/un/p"; echo o > "$T/un/o"; echo t > "$T/un/t"; echo r > "$T/un/r"
echo x > "$T/un/gone"; : > "$T/un/ex"; echo d > "$T/un/..x"; echo h > "$T/un/.y"
# a name longer than the observer's first read of the tracee's memory
L=$T/un/$(printf '%060d/%060d/%060d/%060d/%060d' 1 2 3 4 5)
mkdir -p "$L" && echo l > "$L/f"
printf '#!/bin/sh\n:\n' > "$T/un/tool"; chmod +x "$T/un/tool"
cat > "$T/p.cage" <<P
cage 1
import "std/base"
profile watch {
    mode monitor
    allow read write exec "/usr/**"
    allow read "$T/cov/**"
    allow read create "$T/cr/**"
    allow read write "$T/wr/**"
    deny create "$T/wr/**"
    allow read exec "$T/ws/**"
    env keep PATH HOME
}
P
cat > "$T/ws/work.py" <<'PY'
import ctypes, mmap, os, sys
T = sys.argv[1]
def tryopen(p, fl, dir_fd=None):
    try:
        os.close(os.open(p, fl, 0o600, dir_fd=dir_fd))
    except OSError:
        pass
tryopen(T + "/cov/c", os.O_RDONLY)            # covered: nothing
tryopen(T + "/cov/missing", os.O_RDONLY)      # covered, missing: nothing
tryopen(T + "/un/u", os.O_RDONLY)             # would-block read
tryopen(T + "/un/missing", os.O_RDONLY)       # missing: ENOENT under enforce too
tryopen(T + "/un/new", os.O_WRONLY | os.O_CREAT)  # create + write
tryopen(T + "/un/ex", os.O_WRONLY | os.O_CREAT)   # exists: write
tryopen(T + "/un/r", os.O_RDWR)               # read + write
tryopen(T + "/un/t", os.O_RDONLY | os.O_TRUNC)  # read + write
tryopen(T + "/un/u", os.O_PATH)               # metadata only: nothing
tryopen(T + "/un/p", os.O_PATH)               # the filter's answer: never notified
tryopen(T + "/un/pc", os.O_PATH | os.O_CREAT)   # O_PATH drops O_CREAT: nothing made
tryopen(sys.argv[2] + "/f", os.O_RDONLY)      # a long name
tryopen(T + "/cov/c2", os.O_WRONLY | os.O_CREAT)  # read covers no create
tryopen(T + "/cr/n", os.O_WRONLY | os.O_CREAT)    # create covered, write not
tryopen(T + "/wr/n", os.O_WRONLY | os.O_CREAT)    # write covered, create not
for p in (T + "/un/nothere", T + "/un/gone"):
    try:
        os.unlink(p)
    except OSError:
        pass
for p in (T + "/un/notool", T + "/un/tool"):
    try:
        pid = os.fork()
        if pid == 0:
            try:
                os.execv(p, [p])
            finally:
                os._exit(127)
        os.waitpid(pid, 0)
    except OSError:
        pass
os.mkdir(T + "/un/d")
os.rename(T + "/un/ex", T + "/un/ex2")
os.chdir(T + "/un")
tryopen("u", os.O_RDONLY)                     # relative to the cwd
tryopen("sub/../missing2", os.O_RDONLY)
d = os.open(T + "/un/sub", os.O_RDONLY | os.O_DIRECTORY)
tryopen("../t", os.O_RDONLY, dir_fd=d)        # relative to a descriptor
tryopen("new2", os.O_WRONLY | os.O_CREAT, dir_fd=d)
os.close(d)
# names the observer must normalise ("//", ".", "..", a trailing '/'),
# and names that only look like "." or ".." (the observer skips the
# rewrite for a name that needs none)
tryopen(T + "//un//u", os.O_RDONLY)
tryopen("./r", os.O_RDONLY)
tryopen("sub/./../t", os.O_RDONLY)
tryopen("sub/", os.O_RDONLY | os.O_DIRECTORY)
tryopen("..x", os.O_RDONLY)
tryopen(T + "/un/.y", os.O_RDONLY)
tryopen(T + "/un/sub/..", os.O_RDONLY | os.O_DIRECTORY)
tryopen(T + "/un/sub/.", os.O_RDONLY | os.O_DIRECTORY)
os.chdir(T + "/ws")
# names in raw memory: across a page boundary, and ending on the last
# readable byte with an unreadable page after it
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.open.argtypes = [ctypes.c_void_p, ctypes.c_int]
libc.close.argtypes = [ctypes.c_int]
pg = mmap.PAGESIZE
base = libc.mmap(None, 3 * pg, 3, 0x22, -1, 0)     # PROT_READ|WRITE, PRIVATE|ANON
assert base not in (None, ctypes.c_void_p(-1).value)
assert libc.mprotect(base + 2 * pg, pg, 0) == 0    # the third page: unreadable
def at(addr, name, fl):
    b = name.encode() + b"\0"
    ctypes.memmove(addr, b, len(b))
    fd = libc.open(addr, fl)
    if fd >= 0:
        libc.close(fd)
    return len(b)
n = len(T + "/un/u") + 1
at(base + pg - n // 2, T + "/un/u", os.O_RDONLY)           # across pages 1 and 2
at(base + 2 * pg - n, T + "/un/r", os.O_RDONLY)            # NUL on the last byte
at(base + 2 * pg - 40 - len(T), T + "/un/" + "q" * 30 + "/x", os.O_RDONLY)  # missing
# the legacy open(2), which the filter answers by its flags too (x86_64)
if os.uname().machine == "x86_64":
    libc.syscall.restype = ctypes.c_long
    for fl in (os.O_PATH, os.O_RDONLY):
        fd = libc.syscall(ctypes.c_long(2), ctypes.c_char_p((T + "/un/o").encode()),
                           ctypes.c_int(fl))
        if fd >= 0:
            os.close(fd)
PY

run() { # log [flags]
	log=$1; shift
	(cd "$T/ws" && HOME="$T/home" timeout -s KILL 60 "$CAGERUN" --mode monitor -q -p "$T/p.cage" \
		--log "$log" "$@" -- python3 work.py "$T" "$L")
}
# reset the fixture between the runs: the workload changes it
reset() {
	rm -rf "$T/un/new" "$T/un/new2" "$T/un/d" "$T/un/ex2" "$T/un/sub/new2" "$T/cov/c2" "$T/cr/n" "$T/wr/n"
	: > "$T/un/ex"; echo x > "$T/un/gone"; echo t > "$T/un/t"
}
records() { # log [all] -> "syscall access path verdict" lines in log order
	python3 - "$@" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "path" not in r or (len(sys.argv) < 3 and r["verdict"] != "would-block"):
        continue
    print(r["syscall"], r["access"], r["path"], r["verdict"])
PY
}

# control: the workload does what it says without cagerun
reset
(cd "$T/ws" && python3 work.py "$T" "$L") && [ -e "$T/un/new" ] && [ -e "$T/un/sub/new2" ] &&
	[ -d "$T/un/d" ] && [ -e "$T/cr/n" ] && [ -e "$T/wr/n" ] && [ -e "$T/un/ex2" ] && [ ! -e "$T/un/gone" ] &&
	ok "control: the workload runs without cagerun" || bad "control: the workload failed"

reset
run "$T/fast.log" || bad "monitored run (default toggles): status $?"
reset
run "$T/full.log" --record-covered --record-workspace || bad "monitored run (toggles off): status $?"
records "$T/fast.log" > "$T/fast"
records "$T/full.log" > "$T/full"
records "$T/full.log" all > "$T/all"
if [ -s "$T/fast" ] && cmp -s "$T/fast" "$T/full"; then
	ok "fast path and full path: the same $(wc -l < "$T/fast") would-block records"
else
	bad "fast path and full path differ"; diff "$T/fast" "$T/full"
fi
grep -q " $T/cov/c covered" "$T/all" && ok "toggles off also recorded covered accesses" ||
	bad "toggles off recorded no covered access"
# O_PATH opens are answered in the filter; no toggle records them, so
# nothing is lost: the full path, which records everything, has none
if grep -q " $T/un/p \| $T/un/pc " "$T/all" || [ -e "$T/un/pc" ]; then
	bad "an O_PATH open was recorded, or made a file"
else
	ok "O_PATH opens: no record with every toggle off, nothing made"
fi
# open(2) of un/o, with O_PATH and then without: only the second is recorded
if [ "$(uname -m)" = x86_64 ]; then
	[ "$(grep -c " $T/un/o " "$T/all")" = 1 ] && ok "open(2): O_PATH not recorded, O_RDONLY recorded" ||
		bad "open(2) of un/o: $(grep -c " $T/un/o " "$T/all") records, want 1"
fi

# the records themselves: exactly what enforce would refuse, nothing else
U=$T/un
cat > "$T/want" <<W
openat read $U/u would-block
openat create $U/new would-block
openat write $U/new would-block
openat write $U/ex would-block
openat read $U/r would-block
openat write $U/r would-block
openat read $U/t would-block
openat write $U/t would-block
openat read $L/f would-block
openat create $T/cov/c2 would-block
openat write $T/cov/c2 would-block
openat write $T/cr/n would-block
openat create $T/wr/n would-block
unlink delete $U/gone would-block
execve exec $U/tool would-block
openat read $U/tool would-block
mkdir create $U/d would-block
rename delete $U/ex would-block
rename create $U/ex2 would-block
openat read $U/u would-block
openat read $U/sub would-block
openat read $U/t would-block
openat create $U/sub/new2 would-block
openat write $U/sub/new2 would-block
openat read $U/u would-block
openat read $U/r would-block
openat read $U/t would-block
openat read $U/sub would-block
openat read $U/..x would-block
openat read $U/.y would-block
openat read $U would-block
openat read $U/sub would-block
openat read $U/u would-block
openat read $U/r would-block
W
[ "$(uname -m)" = x86_64 ] && echo "open read $U/o would-block" >> "$T/want"
# the python interpreter's own start may read files elsewhere: compare
# only the fixture's
grep " $T/" "$T/fast" | grep -v " $T/ws/" > "$T/fast.fix"
if cmp -s "$T/want" "$T/fast.fix"; then
	ok "the would-block records are exactly the workload's"
else
	bad "the would-block records"; diff "$T/want" "$T/fast.fix"
fi
[ "$fails" = 0 ]
