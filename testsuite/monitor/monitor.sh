#!/bin/sh
# Monitor mode end to end: a scripted session (reads under several folders,
# a write outside the workspace, an exec, a direct connect to a loopback
# server, HTTP through the proxy to a name mapped to 127.0.0.1 by
# --resolve, a CONNECT tunnel through it, a child that outlives its parent, a secret read) monitored;
# its would-block list must be exactly what it did; output and status
# match an unmonitored run; the toggles off record more; suggest never
# proposes the secret; applying the suggestion leaves only the refused
# secret would-block, and the session then runs under enforce; a small
# make build goes the same way; the supervisor's memory stays flat over a
# long session.
# usage: monitor.sh CAGERUN CAGEC SRCDIR
set -u
CAGERUN=$1 CAGEC=$2 SRC=$3
T=$(mktemp -d /tmp/cage-monitor.XXXXXX)
SRV=
cleanup() {
	[ -n "$SRV" ] && kill "$SRV" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

mkdir -p "$T/ws" "$T/data/a" "$T/data/b" "$T/data/late" "$T/tools" "$T/out" "$T/home/.ssh" "$T/www"
echo a > "$T/data/a/x"; echo b > "$T/data/b/y"; echo late > "$T/data/late/z"
echo secret > "$T/home/.ssh/id_rsa"; echo hello-from-www > "$T/www/index.html"
printf '#!/bin/sh\necho tool-ran\n' > "$T/tools/hello.sh"; chmod +x "$T/tools/hello.sh"

# A loopback HTTP server of our own (bounded: killed at exit).
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd "$T/www" && exec python3 -m http.server --bind 127.0.0.1 "$PORT" >/dev/null 2>&1) &
SRV=$!
i=0
until curl -s -o /dev/null "http://127.0.0.1:$PORT/" || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done

cat > "$T/p.cage" <<P
cage 1
import "std/base"
param workspace : path
profile session {
    mode monitor
    allow read write exec workspace
    allow read "$T/data/a/**"
    env keep PATH HOME
}
P
cp "$T/p.cage" "$T/p0.cage"
cat > "$T/ws/session.sh" <<S
cat $T/data/a/x $T/data/b/y
$T/tools/hello.sh
echo written > $T/out/file
cat $T/home/.ssh/id_rsa >/dev/null 2>&1 || true
curl -s --noproxy '*' http://127.0.0.1:$PORT/index.html
curl -s http://fake.test:$PORT/index.html
curl -s -p http://tunnel.test:$PORT/index.html
sh -c '(sleep 0.3; cat $T/data/late/z) & exit 0'
sleep 1
exit 7
S
RES="--resolve fake.test:$PORT:127.0.0.1 --resolve tunnel.test:$PORT:127.0.0.1"
run() { # mode policy log [flags]
	mode=$1 pol=$2 log=$3; shift 3
	(cd "$T/ws" && HOME="$T/home" timeout -s KILL 60 "$CAGERUN" --mode "$mode" -q -p "$pol" \
		-D workspace="$T/ws" $RES --log "$log" "$@" -- sh session.sh)
}
wouldblock() { # log -> sorted "access target" lines
	python3 - "$1" <<'PY'
import json, sys
out = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("verdict") != "would-block":
        continue
    out.add("%s %s" % (r["access"], r["path"] if "path" in r else "%s:%d" % (r["host"], r["port"])))
print("\n".join(sorted(out)))
PY
}

# 1. monitored session: output, status, the exact would-block list
rm -f "$T/out/file"
run monitor "$T/p.cage" "$T/log1" > "$T/mon.out" 2> "$T/mon.err"; st=$?
rm -f "$T/out/file"
# the same session unmonitored (the proxy's name mapping is replaced by a
# direct request, so the bytes that come back are the same)
sed -e "s|curl -s http://fake.test:$PORT/|curl -s --noproxy '*' --resolve fake.test:$PORT:127.0.0.1 http://fake.test:$PORT/|" \
	-e "s|curl -s -p http://tunnel.test:$PORT/|curl -s --noproxy '*' --resolve tunnel.test:$PORT:127.0.0.1 http://tunnel.test:$PORT/|" \
	"$T/ws/session.sh" > "$T/plain.sh"
(cd "$T/ws" && HOME="$T/home" sh "$T/plain.sh") > "$T/plain.out" 2>&1; pst=$?
[ "$st" = 7 ] && [ "$pst" = 7 ] && ok "monitored status $st = unmonitored $pst" || bad "status: monitored $st, unmonitored $pst"
cmp -s "$T/mon.out" "$T/plain.out" && ok "monitored output = unmonitored output" || { bad "output differs"; diff "$T/mon.out" "$T/plain.out"; cat "$T/mon.err"; }
cat > "$T/expect" <<E
connect fake.test:$PORT
connect localhost:$PORT
connect tunnel.test:$PORT
create $T/out/file
exec $T/tools/hello.sh
read $T/data/b/y
read $T/data/late/z
read $T/home/.ssh/id_rsa
read $T/tools/hello.sh
write $T/out/file
E
wouldblock "$T/log1" > "$T/got"
if cmp -s "$T/expect" "$T/got"; then ok "would-block list is exactly the session's"; else bad "would-block list"; diff "$T/expect" "$T/got"; fi
"$CAGEC" monitor-report "$T/log1" > "$T/report" && grep -q "would-block: " "$T/report" &&
	grep -q "fake.test:$PORT" "$T/report" && ok "monitor-report summarises the log" || { bad "monitor-report"; cat "$T/report"; }

# 2. toggles off: covered accesses and the workspace are recorded too
run monitor "$T/p.cage" "$T/log2" --record-covered --record-workspace > /dev/null 2>&1
n1=$(wc -l < "$T/log1"); n2=$(wc -l < "$T/log2")
grep -q '"verdict":"covered"' "$T/log2" && grep -q "\"path\":\"$T/ws/session.sh\"" "$T/log2" &&
	[ "$n2" -gt "$n1" ] && ok "toggles off: $n2 records instead of $n1" || bad "toggles off: $n1 -> $n2"
grep -q '"verdict":"covered"' "$T/log1" && bad "default toggles recorded a covered access" || ok "default toggles record only would-block"

# 3. suggest: never the secret; applied, only the refused secret is left
HOME="$T/home" "$CAGEC" suggest "$T/log1" --into "$T/p.cage" -D workspace="$T/ws" > "$T/diff" 2>&1
grep -q "^+.*\.ssh" "$T/diff" && bad "suggest proposed the secret" || ok "suggest does not propose ~/.ssh"
grep -q "wanted, refused" "$T/diff" && grep -q "id_rsa: a secret location" "$T/diff" &&
	ok "the secret is listed as wanted, refused" || { bad "refused list"; cat "$T/diff"; }
grep -q "^+    allow connect \"fake.test:$PORT\"" "$T/diff" && ok "the proxied host is proposed with its port" || { bad "host line"; cat "$T/diff"; }
HOME="$T/home" "$CAGEC" suggest "$T/log1" --into "$T/p.cage" -D workspace="$T/ws" --write > /dev/null 2>&1
"$CAGEC" fmt --check "$T/p.cage" > /dev/null && ok "the applied policy is fmt-clean" || bad "applied policy not fmt-clean"
rm -f "$T/out/file"
run monitor "$T/p.cage" "$T/log3" > /dev/null 2>&1
wouldblock "$T/log3" > "$T/got3"
[ "$(cat "$T/got3")" = "read $T/home/.ssh/id_rsa" ] && ok "after the suggestion only the refused secret would block" ||
	{ bad "still would-block after suggest"; cat "$T/got3"; }
rm -f "$T/out/file"
run enforce "$T/p.cage" "$T/log4" > "$T/enf.out" 2> "$T/enf.err"; st=$?
[ "$st" = 7 ] && cmp -s "$T/enf.out" "$T/plain.out" && ok "enforce with the suggestion runs the session" ||
	{ bad "enforce run: status $st"; diff "$T/enf.out" "$T/plain.out"; cat "$T/enf.err"; }
# control: the original policy under enforce does not let it run
rm -f "$T/out/file"
run enforce "$T/p0.cage" "$T/log5" --log-denials > "$T/enf0.out" 2>"$T/enf0.err"
cmp -s "$T/enf0.out" "$T/plain.out" && bad "control: the original policy let the session run" || ok "control: the original policy blocks the session"
grep -q '"verdict":"denied"' "$T/log5" && grep -q "\"host\":\"fake.test\"" "$T/log5" &&
	ok "enforce logs the host it denied as a record" || bad "no host denial record in the enforce log"
grep -q "\"path\":\"$T/data/b/y\",\"verdict\":\"denied\"" "$T/log5" &&
	grep -q "\"path\":\"$T/out/file\",\"verdict\":\"denied\"" "$T/log5" &&
	! grep -q "\"path\":\"$T/data/a/x\"" "$T/log5" &&
	ok "--log-denials records the paths enforce refused, and only those" ||
	{ bad "--log-denials records"; grep '"denied"' "$T/log5"; cat "$T/enf0.err"; }
grep -q '"path"' "$T/log4" && bad "without --log-denials, paths were recorded" || ok "without --log-denials, no path is observed"

# 4. a make build outside the workspace: monitored, suggested, enforced
mkdir -p "$T/proj"
printf '#include <stdio.h>\nint main(void){puts("built");return 0;}\n' > "$T/proj/m.c"
printf 'm: m.c\n\tcc -o m m.c\n' > "$T/proj/Makefile"
cat > "$T/b.cage" <<P
cage 1
import "std/base"
param workspace : path
profile build {
    mode monitor
    allow read write exec workspace
    env keep PATH HOME
}
P
cat > "$T/ws/session.sh" <<S
make -s -C $T/proj && $T/proj/m
S
run monitor "$T/b.cage" "$T/blog" > "$T/b.out" 2>&1; st=$?
[ "$st" = 0 ] && grep -q built "$T/b.out" && ok "monitored build runs" || { bad "monitored build: $st"; cat "$T/b.out"; }
rm -f "$T/proj/m"
HOME="$T/home" "$CAGEC" suggest "$T/blog" --into "$T/b.cage" -D workspace="$T/ws" --write > /dev/null 2>&1
run enforce "$T/b.cage" "$T/blog2" > "$T/b2.out" 2>&1; st=$?
[ "$st" = 0 ] && grep -q built "$T/b2.out" && ok "the build runs under enforce with the suggestion" || { bad "enforced build: $st"; cat "$T/b2.out"; cat "$T/b.cage"; }

# 4b. --log-denials where the policy needs the create guard: the guard's
# supervisor holds the one listener and observes too. Control first: the
# same session without cagerun reads the file and creates .envrc.
cat > "$T/g.cage" <<P
cage 1
import "std/base"
param workspace : path
profile guarded {
    mode enforce
    allow read write exec workspace
    protect write "{workspace}/.envrc"
    env keep PATH HOME
}
P
cat > "$T/ws/session.sh" <<S
cat $T/data/b/y
echo x > .envrc
echo fine > ok.txt && cat ok.txt
S
rm -f "$T/ws/.envrc" "$T/ws/ok.txt"
(cd "$T/ws" && sh session.sh) > "$T/g0.out" 2>&1
[ -e "$T/ws/.envrc" ] && grep -q '^b$' "$T/g0.out" && ok "control: without cagerun the session reads and creates .envrc" ||
	bad "control for the guarded --log-denials session"
rm -f "$T/ws/.envrc" "$T/ws/ok.txt"
run enforce "$T/g.cage" "$T/glog" --log-denials > "$T/g.out" 2> "$T/g.err"; st=$?
if [ "$st" = 0 ] && grep -q '^fine$' "$T/g.out" && ! grep -q '^b$' "$T/g.out" && [ ! -e "$T/ws/.envrc" ] &&
	grep -q "\"path\":\"$T/data/b/y\",\"verdict\":\"denied\"" "$T/glog" &&
	grep -q "\"access\":\"create\",\"path\":\"$T/ws/.envrc\",\"verdict\":\"denied\"" "$T/glog" &&
	! grep -q "ok.txt" "$T/glog"; then
	ok "--log-denials with the create guard: denials recorded, guard holds, allowed work runs"
else
	bad "--log-denials with the create guard: status $st"; cat "$T/g.err" "$T/glog"
fi
rm -f "$T/ws/ok.txt"

# 4c. changing a file's mode is writing it: monitor records a chmod the
# policy would block (the control: chmod works without cagerun)
cat > "$T/ws/session.sh" <<S
chmod 600 $T/data/a/x && echo chmod-ok
S
(cd "$T/ws" && sh session.sh) > "$T/c0.out" 2>&1
run monitor "$T/p0.cage" "$T/clog" > "$T/c.out" 2>&1; st=$?
chmod 644 "$T/data/a/x"
if grep -q chmod-ok "$T/c0.out" && [ "$st" = 0 ] && grep -q chmod-ok "$T/c.out" &&
	grep -q "\"syscall\":\"fchmodat[2]*\",\"access\":\"write\",\"path\":\"$T/data/a/x\",\"verdict\":\"would-block\"" "$T/clog"; then
	ok "monitor records a chmod as a write the policy would block"
else
	bad "chmod not recorded: status $st"; cat "$T/c.out" "$T/clog"
fi

# 5. memory: a long session of would-block reads; the supervisor's RSS
# after 20000 more accesses is within 1 MiB of what it was after 2000
cat > "$T/ws/session.sh" <<S
i=0; while [ \$i -lt 2000 ]; do : < $T/data/b/y; i=\$((i + 1)); done
touch $T/mark1; j=0; while [ ! -e $T/ack1 ] && [ \$j -lt 400 ]; do sleep 0.05; j=\$((j + 1)); done
i=0; while [ \$i -lt 20000 ]; do : < $T/data/b/y; i=\$((i + 1)); done
touch $T/mark2; j=0; while [ ! -e $T/ack2 ] && [ \$j -lt 400 ]; do sleep 0.05; j=\$((j + 1)); done
S
(cd "$T/ws" && HOME="$T/home" timeout -s KILL 120 "$CAGERUN" -q -p "$T/p0.cage" -D workspace="$T/ws" \
	--log "$T/mlog" -- sh session.sh) &
CR=$!
rss() { awk '/^VmRSS/ {print $2}' /proc/$CR/status; }
wait_for() { k=0; while [ ! -e "$1" ] && [ $k -lt 1200 ]; do sleep 0.05; k=$((k + 1)); done; }
wait_for "$T/mark1"; r1=$(rss); touch "$T/ack1"
wait_for "$T/mark2"; r2=$(rss); touch "$T/ack2"
wait $CR
lines=$(wc -l < "$T/mlog")
if [ -n "$r1" ] && [ -n "$r2" ] && [ "$lines" -ge 22000 ] && [ $((r2 - r1)) -lt 1024 ]; then
	ok "supervisor RSS flat: ${r1} KiB -> ${r2} KiB over $lines records"
else
	bad "supervisor RSS ${r1:-?} KiB -> ${r2:-?} KiB over $lines records"
fi

[ $fails = 0 ] && echo "all monitor tests passed" || echo "$fails monitor test(s) failed"
[ $fails = 0 ]
