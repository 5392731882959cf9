#!/bin/sh
# cli.sh CAGEC WORKDIR - `cagec --emit table` and `cagec --dump-table` end to
# end: a table is written, dumped with the expected rules, and every kind of
# damage (truncation, a flipped byte, wrong magic, wrong version) is refused
# with a clear message and exit status 1; a missing file is exit status 2.
set -u
CAGEC=$1
W=$2
rm -rf "$W" && mkdir -p "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat > "$W/p.cage" <<'POLICY'
cage 1
profile project {
    allow connect "github.com", "*.githubusercontent.com:443", "x.org:8000-8100,9000"
    allow connect "127.0.0.1:5432", "[::1]:8080"
    deny connect "evil.githubusercontent.com"
    protect connect "*.secret.example"
}
POLICY

"$CAGEC" "$W/p.cage" --emit table -o "$W/p.cpt" || fail "emit table"
"$CAGEC" "$W/p.cage" -o "$W/q.cpt" || fail "emit by .cpt extension"
cmp -s "$W/p.cpt" "$W/q.cpt" || fail "the .cpt extension did not select the table backend"
"$CAGEC" --dump-table "$W/p.cpt" > "$W/dump.txt" || fail "dump"
for want in \
    'profile: project' \
    'rule 0 allow name github.com ports \* at .*p.cage:3:19 "github.com"' \
    'rule 1 allow suffix \*.githubusercontent.com ports 443 at' \
    'rule 2 allow name x.org ports 8000-8100,9000 at' \
    'rule 3 allow ipv4 127.0.0.1 ports 5432 at' \
    'rule 4 allow ipv6 \[::1\] ports 8080 at' \
    'rule 5 deny name evil.githubusercontent.com ports \* at' \
    'rule 6 protect suffix \*.secret.example ports \* at'; do
	grep -q "^$want" "$W/dump.txt" || fail "dump lacks: $want"
done

size=$(wc -c < "$W/p.cpt")
# expect STATUS MESSAGE-REGEX FILE
expect() {
	"$CAGEC" --dump-table "$3" > /dev/null 2> "$W/err.txt"
	st=$?
	[ "$st" -eq "$1" ] || fail "$3: exit $st, want $1"
	grep -q "$2" "$W/err.txt" || fail "$3: message '$(cat "$W/err.txt")' lacks '$2'"
}
for n in 0 7 79 80 100 $((size / 2)) $((size - 9)) $((size - 1)); do
	head -c "$n" "$W/p.cpt" > "$W/t$n.cpt"
	expect 1 "invalid proxy table: truncated" "$W/t$n.cpt"
done
cp "$W/p.cpt" "$W/flip.cpt"
printf '\377' | dd of="$W/flip.cpt" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
expect 1 "checksum mismatch" "$W/flip.cpt"
cp "$W/p.cpt" "$W/magic.cpt"
printf 'X' | dd of="$W/magic.cpt" bs=1 seek=0 conv=notrunc 2>/dev/null
expect 1 "bad magic" "$W/magic.cpt"
cp "$W/p.cpt" "$W/version.cpt"
printf '\011' | dd of="$W/version.cpt" bs=1 seek=8 conv=notrunc 2>/dev/null
expect 1 "format version 9, this build reads version 1" "$W/version.cpt"
expect 1 "bad magic" "$W/p.cage"
expect 2 "No such file" "$W/missing.cpt"
"$CAGEC" --dump-table "$W/p.cpt" "$W/p.cage" > /dev/null 2>&1 && fail "dump with a policy argument"

[ "$fails" -eq 0 ] && echo "cpt cli: all checks passed"
[ "$fails" -eq 0 ]
