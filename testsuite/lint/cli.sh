#!/bin/sh
# cli.sh - `cagec lint` and `cagec explain` from the outside: exit
# statuses, many files in one call, -W / -Werror, suppressions, JSON and
# SARIF well-formed (SARIF checked for what code scanning uploads need),
# explain's verdicts, and the docs naming every check and option.
# Every SARIF log made here is validated against the SARIF 2.1.0 JSON
# schema (testsuite/data/sarif) with Debian's python3-jsonschema.
# Usage: cli.sh CAGEC SOURCE_DIR [PYTHON3_WITH_JSONSCHEMA]
set -eu
cagec=$1
src=$2
py=${3:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fails=0
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}
# run WANT_STATUS ARGS...: output in $tmp/out
run() {
	want=$1
	shift
	set +e
	"$cagec" "$@" --home /home/u --stdlib "$src/stdlib" >out 2>err
	got=$?
	set -e
	[ "$got" -eq "$want" ] || { fail "cagec $*: status $got, want $want"; cat out err >&2; }
}

cat >clean.cage <<'EOF'
cage 1
profile p {
    allow read write "~/src/**"
    allow read "~/docs/**"
    allow connect "github.com:443"
}
EOF
cat >unsafe.cage <<'EOF'
cage 1
profile p {
    deny read "~/src/private/**"
    allow read "~/src/**"
}
EOF
cat >warn.cage <<'EOF'
cage 1
profile p {
    allow connect "*"
}
EOF
cat >suppressed.cage <<'EOF'
cage 1
profile p {
    # cage: allow broad-host — a web crawler: it may reach any site
    allow connect "*"
}
EOF
cat >secrets.cage <<'EOF'
cage 1
protect "~/.ssh/**"
profile p {
    allow read "~/**"
    allow read write "~/src/**"
}
EOF

run 0 lint clean.cage
[ ! -s out ] || fail "a clean policy printed findings"
run 1 lint unsafe.cage
grep -q '^unsafe.cage:4:16: error: allow read re-opens ~/src/private/\*\* that line 3 denies \[unsafe-order\]$' out ||
	fail "unsafe-order message"
grep -q '^unsafe.cage:3:15: note: ' out || fail "no note at the second rule"
# many files, one process; the status is the worst of them
run 1 lint clean.cage unsafe.cage warn.cage
grep -q '^unsafe.cage:' out && grep -q '^warn.cage:' out || fail "not every file was linted"
run 0 lint warn.cage
grep -q '\[broad-host\]' out || fail "broad-host not reported"
run 1 lint -Werror warn.cage
grep -q 'error: .*\[broad-host\]' out || fail "-Werror did not make it an error"
run 1 lint -W broad-host=error warn.cage
run 0 lint -W no-broad-host warn.cage
[ ! -s out ] || fail "-W no-broad-host still reports"
run 0 lint -Wno-broad-host warn.cage
[ ! -s out ] || fail "-Wno-broad-host still reports"
run 0 lint -W unsafe-order=warning unsafe.cage
grep -q 'warning: .*\[unsafe-order\]' out || fail "-W ID=warning"
run 0 lint suppressed.cage
[ ! -s out ] || fail "a suppression with a reason did not silence the finding"
run 2 lint -W no-such-check warn.cage
run 2 lint -W unknown-param=off warn.cage
run 2 lint --format yaml warn.cage
run 2 lint does-not-exist.cage
run 2 lint
run 0 lint --list-checks
for id in unsafe-order protect-violation dead-rule redundant-rule symlink-escape writable-ancestor \
	hardlink-alias noncanonical-path secret-exposed broad-grant broad-host ip-literal unknown-param \
	unused-param unused-import unsupported-on-target; do
	grep -q "^$id " out || fail "--list-checks lacks $id"
	grep -q "\`$id\`" "$src/docs/lint.md" || fail "docs/lint.md does not describe $id"
done
# every option of `cagec lint --help` is documented
"$cagec" lint --help | grep -o -- '--[a-z][a-z-]*' | sort -u >help-opts
grep -o -- '--[a-z][a-z-]*' "$src/docs/lint.md" | sort -u >doc-opts
missing=$(comm -23 help-opts doc-opts)
[ -z "$missing" ] || fail "options in cagec lint --help but not in docs/lint.md: $missing"

# JSON: parses, and the counts agree with the findings
run 1 lint --format json clean.cage unsafe.cage secrets.cage
python3 - out <<'EOF' || fail "JSON output"
import json, sys
d = json.load(open(sys.argv[1]))
diags = d["diagnostics"]
assert d["errors"] == sum(x["severity"] == "error" for x in diags), d["errors"]
assert d["warnings"] == sum(x["severity"] == "warning" for x in diags)
ids = {x["id"] for x in diags}
assert {"unsafe-order", "protect-violation", "secret-exposed"} <= ids, ids
for x in diags:
    assert x["file"] and x["line"] >= 1 and x["column"] >= 1 and x["message"], x
EOF

# sarif_valid FILE: the log is valid against the SARIF 2.1.0 schema.
sarif_valid() {
	"$py" "$src/testsuite/lint/sarif_validate.py" \
		"$src/testsuite/data/sarif/sarif-schema-2.1.0.json" "$1" ||
		fail "SARIF log $1 is not valid against the SARIF 2.1.0 schema"
}

# SARIF 2.1.0 as code scanning reads it
run 1 lint --format sarif clean.cage unsafe.cage secrets.cage warn.cage
sarif_valid out
python3 - out <<'EOF' || fail "SARIF output"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == "2.1.0" and "sarif-2.1.0" in d["$schema"]
assert len(d["runs"]) == 1
run = d["runs"][0]
drv = run["tool"]["driver"]
assert drv["name"] == "cagec" and drv["version"]
rules = [r["id"] for r in drv["rules"]]
assert len(rules) == len(set(rules))
for r in drv["rules"]:
    assert r["shortDescription"]["text"]
    assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")
assert run["results"], "no results"
# only property names the SARIF 2.1.0 schema defines at each level
# (its objects have additionalProperties: false)
def keys(obj, allowed, what):
    extra = set(obj) - set(allowed)
    assert not extra, (what, extra)
keys(d, ["$schema", "version", "runs"], "sarifLog")
keys(run, ["tool", "invocations", "originalUriBaseIds", "columnKind", "results"], "run")
assert run["invocations"] == [{"executionSuccessful": True}], run["invocations"]
assert run["columnKind"] in ("utf16CodeUnits", "unicodeCodePoints")
keys(run["tool"], ["driver"], "tool")
keys(drv, ["name", "version", "rules"], "toolComponent")
for r in drv["rules"]:
    keys(r, ["id", "shortDescription", "defaultConfiguration"], "reportingDescriptor")
    keys(r["shortDescription"], ["text"], "multiformatMessageString")
    keys(r["defaultConfiguration"], ["level"], "reportingConfiguration")
def phys(p):
    keys(p, ["artifactLocation", "region"], "physicalLocation")
    keys(p["artifactLocation"], ["uri", "uriBaseId"], "artifactLocation")
    keys(p["region"], ["startLine", "startColumn", "endColumn"], "region")
    r = p["region"]
    assert all(isinstance(v, int) and v >= 1 for v in r.values()), r
    assert r.get("endColumn", 10**9) >= r.get("startColumn", 1), r
allowed = {"ruleId", "ruleIndex", "level", "message", "locations", "relatedLocations"}
for res in run["results"]:
    assert set(res) <= allowed, set(res) - allowed
    keys(res["message"], ["text"], "message")
    for l in res["locations"]:
        keys(l, ["physicalLocation"], "location")
        phys(l["physicalLocation"])
    for rel in res.get("relatedLocations", []):
        keys(rel, ["id", "message", "physicalLocation"], "relatedLocation")
        phys(rel["physicalLocation"])
    assert rules[res["ruleIndex"]] == res["ruleId"]
    assert res["level"] in ("error", "warning", "note")
    assert res["message"]["text"]
    loc = res["locations"][0]["physicalLocation"]
    uri = loc["artifactLocation"]["uri"]
    assert uri.endswith(".cage") and " " not in uri, uri
    assert loc["region"]["startLine"] >= 1 and loc["region"].get("startColumn", 1) >= 1
    for rel in res.get("relatedLocations", []):
        assert rel["id"] >= 1 and rel["message"]["text"]
        assert rel["physicalLocation"]["region"]["startLine"] >= 1
kinds = {r["ruleId"] for r in run["results"]}
assert {"unsafe-order", "broad-host", "protect-violation"} <= kinds, kinds
EOF

# SARIF columns are code points (columnKind), so a tab counts one; notes in
# the standard library are relative to their own base, CAGE_STDLIB, which
# the run locates; the user's files stay under %SRCROOT%.
printf 'cage 1\nimport "std/secrets"\nprofile p {\n\tallow read "~/**"\n}\n' >tabs.cage
run 1 lint --format sarif tabs.cage
sarif_valid out
python3 - out <<'EOF' || fail "SARIF columns and base ids"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
res = [r for r in run["results"] if r["ruleId"] == "protect-violation"][0]
loc = res["locations"][0]["physicalLocation"]
assert loc["artifactLocation"] == {"uri": "tabs.cage", "uriBaseId": "%SRCROOT%"}, loc
assert loc["region"]["startColumn"] == 13 and loc["region"]["endColumn"] == 19, loc["region"]
rel = res["relatedLocations"][0]["physicalLocation"]["artifactLocation"]
assert rel["uriBaseId"] == "CAGE_STDLIB" and rel["uri"].endswith("secrets.cage"), rel
base = run["originalUriBaseIds"]["CAGE_STDLIB"]["uri"]
assert base.startswith("file:///") and base.endswith("/stdlib/"), base
EOF
# Findings with one cause are one result, the rest as related locations.
# (writable-ancestor is a warning here: the pins hold the protected trees.)
printf 'cage 1\nimport "std/secrets"\nprofile p {\n    allow write "~"\n}\n' >home.cage
run 0 lint --format sarif -W no-broad-grant -W no-secret-exposed -W no-protect-violation home.cage
sarif_valid out
python3 - out <<'EOF' || fail "SARIF grouped findings"
import json, sys
res = json.load(open(sys.argv[1]))["runs"][0]["results"]
wa = [r for r in res if r["ruleId"] == "writable-ancestor"]
assert len(wa) == 1, len(wa)
rel = wa[0]["relatedLocations"]
assert len(rel) >= 10, len(rel)
assert len({r["id"] for r in rel}) == len(rel)
assert sum(r["message"]["text"].startswith("also: ") for r in rel) >= 9, rel
EOF
run 0 lint home.cage
[ "$(grep -c 'writable-ancestor\]$' out)" = 1 ] || fail "writable-ancestor is not one finding for one rule"
[ "$(wc -l <out)" -lt 80 ] || fail "allow write ~ still prints $(wc -l <out) lines"

# A missing input: status 2, and the log records the failed execution.
run 2 lint --format sarif clean.cage missing.cage
sarif_valid out
python3 - out <<'EOF' || fail "SARIF missing input"
import json, sys
inv = json.load(open(sys.argv[1]))["runs"][0]["invocations"]
assert len(inv) == 1 and inv[0]["executionSuccessful"] is False, inv
notes = inv[0]["toolExecutionNotifications"]
assert len(notes) == 1 and "missing.cage" in notes[0]["message"]["text"], notes
assert notes[0]["level"] == "error"
EOF
grep -q "missing.cage" err || fail "missing input not reported on stderr"

# explain: verdict, deciding rule with location, what it overrode
run 0 explain unsafe.cage read '~/src/private/a.txt'
grep -q '^allowed: read ~/src/private/a.txt (profile p)$' out || fail "explain verdict"
grep -q 'decided by: unsafe.cage:4:16: allow read ~/src/\*\*' out || fail "explain deciding rule"
grep -q 'overrode: *unsafe.cage:3:15: deny read ~/src/private/\*\*' out || fail "explain overrode"
run 1 explain secrets.cage read /home/u/.ssh/id_rsa
grep -q '^denied: read ~/.ssh/id_rsa' out && grep -q 'decided by: secrets.cage:2:9: protect' out ||
	fail "explain of a protected path"
grep -q 'overrode: *secrets.cage:4:16: allow read ~/\*\*' out || fail "explain lists the beaten allow"
run 0 explain clean.cage connect github.com:443
grep -q '^allowed: connect github.com:443' out || fail "explain connect"
run 1 explain clean.cage connect github.com:22
grep -q 'default deny' out || fail "explain default deny"
run 2 explain clean.cage teleport /x
# Opening a guarded file (docs/stdlib.md): a copy of std/guard without the
# entry, found first on -I, is loaded by every import of std/guard; lint
# then names the opened entry once, and a suppression with a reason quiets it.
mkdir -p mine/std
grep -v '"{workspace}/.vscode/\*\*"' "$src/stdlib/std/guard.cage" >mine/std/guard.cage
cmp -s mine/std/guard.cage "$src/stdlib/std/guard.cage" && fail "the .vscode line was not dropped"
cat >opened.cage <<'EOF2'
cage 1
import "std/agents/claude"
profile p {
    allow read write exec workspace
}
EOF2
run 0 lint -I mine opened.cage
[ "$(grep -c 'warning:' out)" -eq 1 ] || fail "opening one guarded entry gives one finding"
grep -q 'write in {workspace}/.vscode/\*\*, where code runs from later, outside the cage (std/guard: VS Code runs' out ||
	fail "runs-later-writable names the entry and why (std/guard's comment)"
sed 's|^    allow read write exec workspace|    # cage: allow runs-later-writable - this task edits .vscode/tasks.json\n&|' \
	opened.cage >opened2.cage
run 0 lint -I mine opened2.cage
[ ! -s out ] || fail "the suppressed runs-later-writable still printed"
run 0 explain -I mine opened.cage -D workspace=/w create /w/.vscode/tasks.json
run 1 explain opened.cage -D workspace=/w create /w/.vscode/tasks.json
# explain rename/link: the rename and link rule, and a delete a pin refuses
cat >moves.cage <<'EOF2'
cage 1
profile p {
    allow read write "~/w/**"
    deny read "~/w/secret/**"
}
EOF2
run 1 explain moves.cage rename '~/w/secret/k' '~/w/k'
grep -q '^denied: rename ~/w/secret/k ~/w/k (profile p)$' out || fail "explain rename verdict"
grep -q 'gains: *~/w/k grants read' out || fail "explain rename names the gain"
run 1 explain moves.cage link '~/w/secret/k' '~/w/k'
grep -q '^denied: link ~/w/secret/k ~/w/k' out || fail "explain link verdict"
run 1 explain moves.cage delete '~/w/secret/k'
grep -q 'also keeps what it matches from being deleted' out || fail "explain delete names the guard"
run 0 explain moves.cage create '~/w/k'
run 0 explain moves.cage rename '~/w/a' '~/w/b'
grep -q 'gains: *none' out || fail "explain rename without a gain"
run 1 explain moves.cage delete '~/w'
grep -q '(~/w is pinned, a directory above' out || fail "explain delete names the pin"
# explain --target linux judges a symlink as the kernel does: delete,
# rename and link act on the link itself (in the directory holding it),
# read and write on where it leads. Both ways, against the answer for the
# target the Linux side once gave.
fx=$(pwd -P)/fx
mkdir -p "$fx/ro" "$fx/rw"
echo x >"$fx/ro/g"
echo x >"$fx/rw/f"
ln -s "$fx/rw/f" "$fx/ro/lnk"
ln -s "$fx/ro/g" "$fx/rw/lnk2"
cat >links.cage <<EOF2
cage 1
profile p {
    allow read "$fx/ro/**"
    allow read write "$fx/rw/**"
}
EOF2
run 0 explain --target linux links.cage delete "$fx/rw/lnk2"
grep -q "^allowed: delete $fx/rw/lnk2 (profile p)\$" out || fail "explain: deleting a link in a writable tree"
run 1 explain --target linux links.cage delete "$fx/ro/lnk"
grep -q "^denied: delete $fx/ro/lnk (profile p)\$" out || fail "explain: deleting a link in a read-only tree"
run 1 explain --target linux links.cage rename "$fx/ro/lnk" "$fx/rw/moved"
grep -q "^denied: rename $fx/ro/lnk $fx/rw/moved" out || fail "explain: renaming a link out of a read-only tree"
run 0 explain --target linux links.cage rename "$fx/rw/lnk2" "$fx/rw/moved"
grep -q "^allowed: rename $fx/rw/lnk2 $fx/rw/moved" out || fail "explain: renaming a link in a writable tree"
run 1 explain --target linux links.cage write "$fx/rw/lnk2"
grep -q "resolves to $fx/ro/g" out || fail "explain: writing through a link is judged at its target"
run 1 explain --target linux links.cage write "$fx/ro/lnk"
grep -q "write means: write (allowed), create (denied), delete (denied)" out &&
	grep -q "but write is allowed: on Linux, the kernel follows symlinks" out ||
	fail "explain: writing through a link to a writable file, not replacing the link"
run 2 explain moves.cage read '~/w/a' '~/w/b'
run 2 explain moves.cage rename '~/w/a'
run 2 explain clean.cage read
# ... and its errors repeat the input they reject, with a way out
run 2 explain clean.cage raed /x
grep -q "'raed' is not an access .*did you mean 'read'?" err || fail "explain: misspelt access"
run 2 explain clean.cage read
grep -q "got 'clean.cage' 'read'" err || fail "explain: wrong operand count does not repeat them"
run 2 explain clean.cage connect https://github.com/x
grep -q "'https://github.com/x': a URL is not a host.*\"github.com:443\"" err ||
	fail "explain: a URL is not explained as one"
run 2 explain clean.cage read 'src/*'
grep -q "'src/\*': path is not absolute" err || fail "explain: a bad path is not repeated"

# explain never guesses: a param without a default is the compile error
# (lint checks with a placeholder, explain does not).
cat >param.cage <<'EOF'
cage 1
param project: path
profile p {
    allow read "{project}/**"
}
EOF
run 2 explain param.cage read /home/u/src/a
grep -q "param 'project' has no value: give it with -D project=PATH" err ||
	fail "explain with a missing param does not fail as compiling does"
[ -s out ] && fail "explain with a missing param printed a verdict"
run 0 explain param.cage read /home/u/src/a -D project=/home/u/src

# read in a query means what it means in a rule: read + read-metadata,
# allowed only when both are, and the access that differs is named.
cat >set.cage <<'EOF'
cage 1
profile p {
    allow read "/data/**"
    deny read-metadata "/data/hidden/**"
    allow write "/out/**"
    deny delete "/out/keep/**"
}
EOF
run 1 explain set.cage read /data/hidden/x
grep -q '^denied: read /data/hidden/x (profile p)$' out || fail "explain read: not denied as a set"
grep -q 'read means: read (allowed), read-metadata (denied)' out || fail "explain read: parts not listed"
grep -q 'decided by: set.cage:4:24: deny read-metadata' out || fail "explain read: deciding rule"
grep -q 'but read is allowed: set.cage:3:16: allow read' out || fail "explain read: differing part"
run 0 explain set.cage read /data/x
grep -q 'read means: read (allowed), read-metadata (allowed)' out || fail "explain read: all allowed"
run 0 explain set.cage read-metadata /data/x
run 1 explain set.cage write /out/keep/a
grep -q 'write means: write (allowed), create (allowed), delete (denied)' out ||
	fail "explain write: parts not listed"

# Non-ASCII names: ? is one character, so "/U?ers" covers "/Uüers" (two
# bytes for ü) but not "/Uüüers"; the Linux plan expands globs on disk the
# same way.
printf 'cage 1\nprofile p {\n    allow read create "%s/U?ers/**"\n    protect create "%s/U?ers"\n}\n' \
	"$tmp/nu" "$tmp/nu" >utf8.cage
run 1 explain --target macos utf8.cage create "$tmp/nu/Uüers"
grep -q "decided by: utf8.cage:4:20: protect create" out || fail "explain: ? does not cover a two-byte character"
run 1 explain --target macos utf8.cage create "$tmp/nu/Uüüers/x"
run 0 explain --target macos utf8.cage create "$tmp/nu/Uüers/x"
run 0 explain --target macos utf8.cage create "$tmp/nu/Users/x"
mkdir -p "$tmp/nu/Uüers" "$tmp/nu/Uüüers"
set +e
"$cagec" utf8.cage --emit linux --target linux --home /home/u >plan 2>&1
set -e
grep -q "^grant $tmp/nu/Uüers " plan || fail "Linux plan: ? does not expand to a two-byte character"
grep -q "Uüüers" plan && fail "Linux plan: ? expanded to two characters"

# -W and suppressions: a misspelt check id gets the closest one
run 2 lint -W no-unsafe_order clean.cage
grep -q "unknown check id 'unsafe_order'; did you mean 'unsafe-order'?" err || fail "-W did you mean"
run 2 lint --format sarf clean.cage
grep -q "not 'sarf'; did you mean 'sarif'?" err || fail "--format did you mean"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)" >&2; exit 1; }
echo "lint cli: all checks passed"
