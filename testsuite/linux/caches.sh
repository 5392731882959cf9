#!/bin/sh
# caches.sh CAGERUN SRCDIR - private caches (docs/cagerun.md, "Private
# caches"), in a scratch HOME, with the layered form and the shipped
# examples:
#   - the user's real caches, tool homes and PATH folders are refused,
#     each first shown writable without cagerun, then (as a control that
#     the check can fail) writable under a policy that shares one;
#   - npm install, pip install (a venv in the workspace, a local index on
#     loopback), cargo build (a path dependency, offline) and go build/test
#     (a local module) work inside and leave their caches in the agent's
#     private folder, which the next caged session finds warm.
# A tool that is missing is a SKIP line (.ci/deps installs every one, so
# CI never skips). No network beyond 127.0.0.1.
set -u
cagerun=$1
src=$2
tmp=$(mktemp -d)
srv_pid=
cleanup() {
	[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null
	chmod -R u+w "$tmp" 2>/dev/null # go makes its module cache read-only
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0 passes=0
export HOME="$tmp/home" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8
unset XDG_CACHE_HOME XDG_CONFIG_HOME npm_config_cache PIP_CACHE_DIR CARGO_HOME GOPATH \
	GOMODCACHE GOCACHE GOFLAGS 2>/dev/null
ok() { passes=$((passes + 1)); }
bad() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/err" ] && tail -c 2500 "$tmp/err" >&2
	fails=$((fails + 1))
}
skip() { echo "SKIP: $*"; }
# cr ARGS...: cagerun from the workspace; status in $rc, output in out/err.
cr() {
	(cd "$ws" && timeout 180 "$cagerun" -q "$@" >"$tmp/out" 2>"$tmp/err" </dev/null)
	rc=$?
}
have() { command -v "$1" >/dev/null 2>&1; }

ws=$tmp/ws
# layered.cage reads ~/datasets
mkdir -p "$HOME/datasets" "$ws"
(cd "$ws" && git init -q . 2>/dev/null) || mkdir -p "$ws/.git"
cache=$HOME/.cache/cage

# The forms: the layered one (its key is the command's name) and each
# shipped example (its key is the selected profile's name).
examples="claude-code:claude codex:codex gemini:gemini go-offline:build layered:task"

# ---- the real caches are refused ----
real="$HOME/.npm/_npx $HOME/.cache/pip $HOME/.cargo/registry $HOME/go/pkg/mod
$HOME/.cache/pre-commit $HOME/.local/bin $HOME/.local/share/pnpm"
# shellcheck disable=SC2086 # one word per folder
mkdir -p $real
plant='for d; do if echo x >"$d/planted" 2>/dev/null; then echo "WROTE $d"; fi; done'
# Control: each one is writable without cagerun.
# shellcheck disable=SC2086
sh -c "$plant" sh $real >"$tmp/out"
if [ "$(grep -c '^WROTE' "$tmp/out")" -eq 7 ]; then ok; else bad "control: the fixture caches are not writable"; fi
# shellcheck disable=SC2086
for d in $real; do rm -f "$d/planted"; done
# shellcheck disable=SC2086
cr -- sh -c "$plant" sh $real
if [ "$rc" -eq 0 ] && ! grep -q '^WROTE' "$tmp/out"; then ok; else
	bad "layered: a real cache was writable: $(grep '^WROTE' "$tmp/out" | tr '\n' ' ') (status $rc)"
fi
for ex in $examples; do
	name=${ex%%:*}
	# shellcheck disable=SC2086
	cr -p "$src/examples/$name.cage" -D workspace="$ws" -- sh -c "$plant" sh $real
	if [ "$rc" -eq 0 ] && ! grep -q '^WROTE' "$tmp/out"; then ok; else
		bad "$name.cage: a real cache was writable: $(grep '^WROTE' "$tmp/out" | tr '\n' ' ') (status $rc)"
	fi
done
# shellcheck disable=SC2086
for d in $real; do [ -e "$d/planted" ] && bad "planted in $d"; done
# Control for the check itself: a policy that shares one real cache
# writable (and no std/guard) lets the write through, and lint says so.
cat >"$tmp/share.cage" <<EOF
cage 1
import "std/base"
profile share {
    allow read write "~/.cargo/registry/**"
}
EOF
cr -p "$tmp/share.cage" -- sh -c "$plant" sh "$HOME/.cargo/registry"
if grep -q "^WROTE $HOME/.cargo/registry" "$tmp/out"; then ok; else
	bad "control: a policy sharing ~/.cargo/registry cannot write it (status $rc)"
fi
rm -f "$HOME/.cargo/registry/planted"
cagec=$(dirname "$cagerun")/cagec
if [ -x "$cagec" ]; then
	"$cagec" lint "$tmp/share.cage" >"$tmp/out" 2>&1
	if grep -q 'runs-later-writable' "$tmp/out" && grep -q 'build scripts' "$tmp/out"; then ok; else
		bad "lint does not warn about the shared registry: $(cat "$tmp/out")"
	fi
fi

# ---- --show lists the private caches ----
cr --show -- npm
if grep -q "^caches: $cache/npm " "$tmp/out" && grep -q "npm_config_cache=\"$cache/npm/npm\"" "$tmp/out"; then ok; else
	bad "--show: no private cache for npm: $(head -c 1500 "$tmp/out")"
fi
cr -p "$src/examples/claude-code.cage" -D workspace="$ws" --show -- claude
if grep -q "CARGO_HOME=\"$cache/claude/cargo\"" "$tmp/out"; then ok; else
	bad "--show -p: the key is not the profile's name"
fi
# A task layer on -p keeps the policy's private cache (it declares no
# profile of its own).
printf 'cage 1\nallow read "/usr/share/**"\n' >"$tmp/task.cage"
cr -p "$src/examples/claude-code.cage" -D workspace="$ws" --task "$tmp/task.cage" --show -- claude
if grep -q "CARGO_HOME=\"$cache/claude/cargo\"" "$tmp/out"; then ok; else
	bad "--show -p --task: no private cache, or not the policy's: $(grep -i cach "$tmp/out" "$tmp/err" | head -5)"
fi
# A run makes the folder, the user's own and private.
cr -- true
if [ "$(stat -c '%a %u' "$cache/true" 2>/dev/null)" = "700 $(id -u)" ]; then ok; else
	bad "the private cache is not 0700 and the user's: $(stat -c '%a %u' "$cache/true" 2>&1)"
fi
# A symlink where a private cache would be is refused (125), not followed.
mkdir -p "$tmp/elsewhere"
ln -s "$tmp/elsewhere" "$cache/evil"
cr -- evil
if [ "$rc" -eq 125 ] && grep -q "symlink" "$tmp/err"; then ok; else bad "a symlinked cache folder: status $rc"; fi

# ---- npm ----
if have npm; then
	mkdir -p "$tmp/dep" "$ws/app"
	printf '{"name":"cage-dep","version":"1.0.0","main":"index.js"}\n' >"$tmp/dep/package.json"
	echo 'module.exports = 42' >"$tmp/dep/index.js"
	(cd "$tmp/dep" && npm_config_cache="$tmp/npm-outside" npm pack --silent >/dev/null 2>&1) && cp "$tmp/dep/cage-dep-1.0.0.tgz" "$ws/app/"
	printf '{"name":"app","version":"1.0.0"}\n' >"$ws/app/package.json"
	for form in "layered:sh" "claude-code:claude" "gemini:gemini"; do
		name=${form%%:*} key=${form#*:}
		rm -rf "$ws/app/node_modules" "$ws/app/package-lock.json"
		[ "$name" = layered ] && set -- || set -- -p "$src/examples/$name.cage" -D workspace="$ws"
		cr "$@" -- sh -c 'cd app && npm install --offline --no-audit --no-fund ./cage-dep-1.0.0.tgz'
		if [ "$rc" -eq 0 ] && [ -f "$ws/app/node_modules/cage-dep/index.js" ]; then ok; else
			bad "npm install ($name): status $rc"
		fi
		n=$(find "$cache/$key/npm/_cacache" -type f 2>/dev/null | wc -l)
		if [ "$n" -gt 0 ]; then ok; else bad "npm ($name): nothing in $cache/$key/npm"; fi
		# The next session finds the cache the first one left.
		cr "$@" -- sh -c 'npm cache verify'
		if grep -q "Content verified: [1-9]" "$tmp/out"; then ok; else
			bad "npm ($name): the next session's cache is empty: $(cat "$tmp/out")"
		fi
	done
	[ -e "$HOME/.npm/_cacache" ] && bad "npm wrote the real ~/.npm"
else
	skip "npm is not installed"
fi

# ---- pip, from a local index on loopback ----
if have python3 && python3 -c 'import ensurepip, venv' 2>/dev/null; then
	mkdir -p "$tmp/index/simple/cage-pkg"
	python3 - "$tmp/index" <<'EOF'
import sys, zipfile, hashlib, base64
d = sys.argv[1]
name = "cage_pkg-1.0-py3-none-any.whl"
files = {
    "cage_pkg/__init__.py": "VALUE = 42\n",
    "cage_pkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: cage-pkg\nVersion: 1.0\n",
    "cage_pkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: cage-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
rec = []
with zipfile.ZipFile(f"{d}/{name}", "w") as z:
    for p, t in files.items():
        z.writestr(p, t)
        h = base64.urlsafe_b64encode(hashlib.sha256(t.encode()).digest()).rstrip(b"=").decode()
        rec.append(f"{p},sha256={h},{len(t)}")
    rec.append("cage_pkg-1.0.dist-info/RECORD,,")
    z.writestr("cage_pkg-1.0.dist-info/RECORD", "\n".join(rec) + "\n")
open(f"{d}/simple/cage-pkg/index.html", "w").write(f'<a href="../../{name}">{name}</a>\n')
EOF
	# pip caches what a trusted host serves with cache headers.
	cat >"$tmp/srv.py" <<'EOF'
import functools, http.server, sys
class H(http.server.SimpleHTTPRequestHandler):
    def end_headers(self):
        self.send_header("Cache-Control", "public, max-age=3600")
        super().end_headers()
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])),
    functools.partial(H, directory=sys.argv[1])).serve_forever()
EOF
	port=$((20000 + $$ % 20000))
	timeout 600 python3 "$tmp/srv.py" "$tmp/index" "$port" >/dev/null 2>&1 &
	srv_pid=$!
	i=0
	while [ $i -lt 50 ] && ! python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	printf 'cage 1\nallow connect "localhost:%s", "127.0.0.1:%s"\n' "$port" "$port" >"$tmp/index.cage"
	python3 -m venv "$ws/.venv" >"$tmp/err" 2>&1 || bad "python3 -m venv"
	idx="--index-url http://127.0.0.1:$port/simple --trusted-host 127.0.0.1 --disable-pip-version-check"
	# The layered form (its key: pip) through a task layer that reaches the
	# index; codex.cage in enforce-fs, where the network is open.
	for form in "layered:pip" "codex:codex"; do
		name=${form%%:*} key=${form#*:}
		"$ws/.venv/bin/pip" uninstall -y -q cage-pkg >/dev/null 2>&1
		if [ "$name" = layered ]; then set -- --task "$tmp/index.cage"; else
			set -- -p "$src/examples/$name.cage" -D workspace="$ws" --mode enforce-fs
		fi
		# shellcheck disable=SC2086
		cr "$@" -- "$ws/.venv/bin/pip" install -q $idx cage-pkg
		if [ "$rc" -eq 0 ] && "$ws/.venv/bin/python" -c 'import cage_pkg; assert cage_pkg.VALUE == 42'; then ok; else
			bad "pip install ($name): status $rc"
		fi
		n=$(find "$cache/$key/pip" -type f 2>/dev/null | wc -l)
		if [ "$n" -gt 0 ]; then ok; else bad "pip ($name): nothing in $cache/$key/pip"; fi
		cr "$@" -- "$ws/.venv/bin/pip" cache dir
		if grep -qx "$cache/$key/pip" "$tmp/out"; then ok; else bad "pip ($name): cache dir $(cat "$tmp/out")"; fi
		# The next session: pip's own count of what the cache holds.
		cr "$@" -- "$ws/.venv/bin/pip" cache info
		if grep -Eq "(HTTP files|Number of HTTP files).*: *[1-9]" "$tmp/out"; then ok; else
			bad "pip ($name): the next session's cache is empty: $(cat "$tmp/out")"
		fi
	done
	[ -e "$HOME/.cache/pip/http" ] || [ -e "$HOME/.cache/pip/http-v2" ] && bad "pip wrote the real ~/.cache/pip"
	kill "$srv_pid" 2>/dev/null
	srv_pid=
else
	skip "python3 with venv and ensurepip is not installed"
fi

# ---- cargo, offline, a path dependency ----
if have cargo; then
	mkdir -p "$ws/rs/lib/src" "$ws/rs/app/src"
	printf '[package]\nname = "cagelib"\nversion = "0.1.0"\nedition = "2021"\n' >"$ws/rs/lib/Cargo.toml"
	echo 'pub fn value() -> u32 { 42 }' >"$ws/rs/lib/src/lib.rs"
	printf '[package]\nname = "cageapp"\nversion = "0.1.0"\nedition = "2021"\n[dependencies]\ncagelib = { path = "../lib" }\n' \
		>"$ws/rs/app/Cargo.toml"
	echo 'fn main() { println!("value {}", cagelib::value()); }' >"$ws/rs/app/src/main.rs"
	for form in "layered:sh" "claude-code:claude"; do
		name=${form%%:*} key=${form#*:}
		rm -rf "$ws/rs/app/target"
		[ "$name" = layered ] && set -- || set -- -p "$src/examples/$name.cage" -D workspace="$ws"
		cr "$@" -- sh -c 'cd rs/app && cargo build --offline -q && ./target/debug/cageapp'
		if [ "$rc" -eq 0 ] && grep -q "value 42" "$tmp/out"; then ok; else bad "cargo build ($name): status $rc"; fi
		# A tool installed into the private CARGO_HOME runs in the next session.
		cr "$@" -- sh -c 'cargo install --offline -q --path rs/app'
		if [ "$rc" -eq 0 ] && [ -x "$cache/$key/cargo/bin/cageapp" ]; then ok; else
			bad "cargo install ($name): status $rc"
		fi
		cr "$@" -- sh -c '"$CARGO_HOME/bin/cageapp"'
		if [ "$rc" -eq 0 ] && grep -q "value 42" "$tmp/out"; then ok; else bad "cargo ($name): the next session lacks the install"; fi
	done
	[ -e "$HOME/.cargo/bin/cageapp" ] && bad "cargo installed into the real ~/.cargo"
else
	skip "cargo is not installed"
fi

# ---- go, a local module, offline ----
if have go; then
	mkdir -p "$ws/go/dep" "$ws/go/app"
	printf 'module example.com/dep\n\ngo 1.19\n' >"$ws/go/dep/go.mod"
	printf 'package dep\n\nfunc Value() int { return 42 }\n' >"$ws/go/dep/dep.go"
	printf 'package dep\n\nimport "testing"\n\nfunc TestValue(t *testing.T) {\n\tif Value() != 42 {\n\t\tt.Fatal(Value())\n\t}\n}\n' \
		>"$ws/go/dep/dep_test.go"
	printf 'module example.com/app\n\ngo 1.19\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ../dep\n' \
		>"$ws/go/app/go.mod"
	printf 'package main\n\nimport (\n\t"fmt"\n\t"example.com/dep"\n)\n\nfunc main() { fmt.Println("value", dep.Value()) }\n' \
		>"$ws/go/app/main.go"
	for form in "layered:sh" "go-offline:build"; do
		name=${form%%:*} key=${form#*:}
		[ "$name" = layered ] && set -- || set -- -p "$src/examples/$name.cage" -D workspace="$ws"
		cr "$@" -- sh -c 'cd go/app && GOFLAGS=-mod=mod GOTOOLCHAIN=local go build -o app . && ./app'
		if [ "$rc" -eq 0 ] && grep -q "value 42" "$tmp/out"; then ok; else bad "go build ($name): status $rc"; fi
		n=$(find "$cache/$key/go-build" -type f 2>/dev/null | wc -l)
		if [ "$n" -gt 0 ]; then ok; else bad "go ($name): nothing in $cache/$key/go-build"; fi
		cr "$@" -- sh -c 'cd go/dep && GOTOOLCHAIN=local go test .'
		[ "$rc" -eq 0 ] && ok || bad "go test ($name): status $rc"
		# The next session's test result comes from the build cache.
		cr "$@" -- sh -c 'cd go/dep && GOTOOLCHAIN=local go test .'
		if [ "$rc" -eq 0 ] && grep -q "(cached)" "$tmp/out"; then ok; else
			bad "go ($name): the next session did not use the cache: $(cat "$tmp/out")"
		fi
	done
	[ -e "$HOME/.cache/go-build" ] && bad "go wrote the real ~/.cache/go-build"
else
	skip "go is not installed"
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
