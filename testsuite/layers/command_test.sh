#!/bin/sh
# command_test.sh CAGERUN - the command layer: `cagerun -- NAME` (no -p)
# starts NAME however it was installed. Fixture installs in a fake home are
# laid out as each manager lays them out, with small scripts standing in
# for the agent and for node (the fake node prints the marker lines of the
# script it runs and reads the files the script names, as a real package
# reads its own modules and dependencies):
#
#   nvm, fnm, Homebrew    bin/NAME -> ../lib/node_modules/PKG/cli.js,
#                         `#!/usr/bin/env node`, node in the same bin
#                         (Homebrew's a link into PREFIX/Cellar: the prefix)
#   npx                   nvm's bin/npx -> ../lib/node_modules/npm/bin/npx-cli.js
#   bun                   ~/.bun/bin/NAME -> ../install/global/node_modules/PKG/cli.js,
#                         a dependency hoisted beside the package
#   pnpm                  ~/.local/share/pnpm/NAME, an sh wrapper (cmd-shim)
#                         running global/5/node_modules/PKG (a symlink into
#                         the .pnpm store), a dependency in the store
#   native installer      ~/.local/bin/NAME -> ~/.local/share/NAME/versions/V
#
# Version managers' shims (asdf, mise, volta) are shims_test.sh's.
# Each: the control (without cagerun the command prints its marker), then
# -p with a policy that grants only the system (the exec is refused: what
# the command layer is for), then the layered form (status 0, the marker,
# the dependency read). Then what cannot be made to run: a package
# directory others may write, and a later layer's
# deny over the package, each 125 naming the path; and --show's command
# layer.
cagerun=$1
. "$(dirname "$0")/check.sh"
H=$tmp/home
ws=$tmp/ws
mkdir -p "$H" "$ws/.git" "$tmp/xdg"
export HOME="$H" XDG_CONFIG_HOME="$tmp/xdg"
unset CAGE_STDLIB

# fake_node PATH: an interpreter that prints a script's `// say:` lines
# and reads the files its `// read:` lines name (relative to the script).
fake_node() {
	mkdir -p "$(dirname "$1")"
	cat >"$1" <<'NODE'
#!/bin/sh
d=$(dirname "$(readlink -f "$1")") # as node resolves the script's real path
sed -n 's|^// say: ||p' "$1" || exit 3
for f in $(sed -n 's|^// read: ||p' "$1"); do
	cat "$d/$f" || exit 4
done
NODE
	chmod 755 "$1"
}
# js_pkg DIR MARKER [DEP-RELATIVE-PATH]: a package with a cli.js.
js_pkg() {
	mkdir -p "$1"
	echo '{"name":"fixture"}' >"$1/package.json"
	{
		echo '#!/usr/bin/env node'
		echo "// say: $2"
		[ -n "${3:-}" ] && echo "// read: $3"
	} >"$1/cli.js"
	chmod 755 "$1/cli.js"
}

# nvm
nvm=$H/.nvm/versions/node/v22.0.0
js_pkg "$nvm/lib/node_modules/@anthropic-ai/claude-code" nvm-ok node_modules/dep/index.js
mkdir -p "$nvm/lib/node_modules/@anthropic-ai/claude-code/node_modules/dep" "$nvm/bin"
echo 'nested-dep-ok' >"$nvm/lib/node_modules/@anthropic-ai/claude-code/node_modules/dep/index.js"
ln -s ../lib/node_modules/@anthropic-ai/claude-code/cli.js "$nvm/bin/claude"
fake_node "$nvm/bin/node"
# npx, as npm ships it under nvm
js_pkg "$nvm/lib/node_modules/npm" npx-ok
mv "$nvm/lib/node_modules/npm/cli.js" "$nvm/lib/node_modules/npm/npx-cli.js"
mkdir -p "$nvm/lib/node_modules/npm/bin" && mv "$nvm/lib/node_modules/npm/npx-cli.js" "$nvm/lib/node_modules/npm/bin/"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$nvm/bin/npx"
# fnm: the shell's PATH entry is a per-shell symlink to the installation
fnm=$H/.local/share/fnm/node-versions/v22.0.0/installation
js_pkg "$fnm/lib/node_modules/@google/gemini-cli" fnm-ok
mkdir -p "$fnm/bin" "$H/.local/state/fnm_multishells"
ln -s ../lib/node_modules/@google/gemini-cli/cli.js "$fnm/bin/gemini"
fake_node "$fnm/bin/node"
ln -s "$fnm" "$H/.local/state/fnm_multishells/4242_1700000000000"
# Homebrew on Linux, under a prefix of the same shape
brew=$H/linuxbrew/.linuxbrew
js_pkg "$brew/lib/node_modules/@openai/codex" brew-ok
mkdir -p "$brew/bin" "$brew/Cellar/node/22.0.0/bin"
ln -s ../lib/node_modules/@openai/codex/cli.js "$brew/bin/codex"
fake_node "$brew/Cellar/node/22.0.0/bin/node"
ln -s ../Cellar/node/22.0.0/bin/node "$brew/bin/node"
# bun: the dependency hoisted beside the package
bun=$H/.bun/install/global/node_modules
js_pkg "$bun/@anthropic-ai/claude-code" bun-ok ../../hoisted/index.js
mkdir -p "$bun/hoisted" "$H/.bun/bin"
echo 'hoisted-dep-ok' >"$bun/hoisted/index.js"
ln -s ../install/global/node_modules/@anthropic-ai/claude-code/cli.js "$H/.bun/bin/claude"
fake_node "$H/.bun/bin/node"
# pnpm: a cmd-shim wrapper, the package a symlink into the .pnpm store
pn=$H/.local/share/pnpm
store=$pn/global/5/node_modules/.pnpm
js_pkg "$store/@anthropic-ai+claude-code@1.0.0/node_modules/@anthropic-ai/claude-code" pnpm-ok \
	../../../../dep@1.0.0/node_modules/dep/index.js
mkdir -p "$store/dep@1.0.0/node_modules/dep" "$pn/global/5/node_modules/@anthropic-ai"
echo 'store-dep-ok' >"$store/dep@1.0.0/node_modules/dep/index.js"
ln -s ../.pnpm/@anthropic-ai+claude-code@1.0.0/node_modules/@anthropic-ai/claude-code \
	"$pn/global/5/node_modules/@anthropic-ai/claude-code"
cat >"$pn/claude" <<'SHIM'
#!/bin/sh
basedir=$(dirname "$(echo "$0" | sed -e 's,\\,/,g')")

case `uname` in
    *CYGWIN*) basedir=`cygpath -w "$basedir"`;;
esac

if [ -x "$basedir/node" ]; then
  exec "$basedir/node"  "$basedir/global/5/node_modules/@anthropic-ai/claude-code/cli.js" "$@"
else
  exec node  "$basedir/global/5/node_modules/@anthropic-ai/claude-code/cli.js" "$@"
fi
SHIM
chmod 755 "$pn/claude"
fake_node "$tmp/pnpm-node/node"
# the native installer: a versioned program, linked from ~/.local/bin
mkdir -p "$H/.local/share/claude/versions" "$H/.local/bin"
printf '#!/bin/sh\necho native-ok\n' >"$H/.local/share/claude/versions/2.1.0"
chmod 755 "$H/.local/share/claude/versions/2.1.0"
ln -s ../share/claude/versions/2.1.0 "$H/.local/bin/claude"

# A policy that grants the system only, for the -p control.
cat >"$tmp/sys.cage" <<'POL'
cage 1
import "std/base"
env keep PATH HOME
POL
SYS=/usr/local/bin:/usr/bin:/bin
# run PATH ARGS...: cagerun in the workspace with that PATH.
run() {
	p=$1
	shift
	(cd "$ws" && PATH="$p" timeout 60 "$cagerun" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null)
	rc=$?
}
# installer LABEL PATH NAME MARKER [DEP-LINE]
installer() {
	label=$1 p=$2 name=$3 marker=$4 dep=${5:-}
	if (cd "$ws" && PATH="$p" "$name" >"$tmp/out" 2>"$tmp/err") && grep -qx "$marker" "$tmp/out"; then
		ok "$label: control, $name runs without cagerun"
	else
		bad "$label: control"
		return
	fi
	# (the exec is refused; execvp may then find the system's own $name)
	run "$p" -q -p "$tmp/sys.cage" -- "$name"
	if ! grep -qx "$marker" "$tmp/out" && { [ "$rc" -eq 126 ] || [ -x "/usr/bin/$name" ]; }; then
		ok "$label: with -p and the system alone, it cannot start ($rc)"
	else
		bad "$label: with -p and the system alone, status $rc"
	fi
	run "$p" -q -- "$name"
	if [ "$rc" -eq 0 ] && grep -qx "$marker" "$tmp/out" && { [ -z "$dep" ] || grep -qx "$dep" "$tmp/out"; }; then
		ok "$label: cagerun -- $name starts it${dep:+ and its dependency is read}"
	else
		bad "$label: cagerun -- $name, status $rc"
	fi
}
installer nvm "$nvm/bin:$SYS" claude nvm-ok nested-dep-ok
installer npx "$nvm/bin:$SYS" npx npx-ok
installer fnm "$H/.local/state/fnm_multishells/4242_1700000000000/bin:$SYS" gemini fnm-ok
installer homebrew "$brew/bin:$brew/sbin:$SYS" codex brew-ok
# Homebrew's programs load their loader and libraries from the prefix
run "$brew/bin:$SYS" --show -- codex
if grep -Fqx "  grant $brew/**   (its Homebrew prefix)" "$tmp/out"; then
	ok "homebrew: the prefix is granted for what its node loads"
else
	bad "homebrew: no grant of the prefix"
fi
installer bun "$H/.bun/bin:$SYS" claude bun-ok hoisted-dep-ok
installer pnpm "$pn:$tmp/pnpm-node:$SYS" claude pnpm-ok store-dep-ok
installer native "$H/.local/bin:$SYS" claude native-ok

# ---- the command layer's file: the same on every launch ----
# Named by its text in TMPDIR/cage-command.UID, so that the same command
# composes the same policy and the second launch reuses the kept plan
# (a fresh name per launch made every launch plan and keep anew).
T=$tmp/t
mkdir "$T"
cdir=$T/cage-command.$(id -u)
run_t() {
	p=$1
	shift
	(cd "$ws" && TMPDIR="$T" PATH="$p" timeout 60 "$cagerun" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null)
	rc=$?
}
run_t "$nvm/bin:$SYS" -v -- claude
run_t "$nvm/bin:$SYS" -v -- claude
layer=$(ls "$cdir"/command-*.cage 2>/dev/null)
if [ "$rc" -eq 0 ] && grep -qx nvm-ok "$tmp/out" && grep -q '^cagerun: plan: reused ' "$tmp/err" &&
	[ "$(echo "$layer" | wc -w)" -eq 1 ] && [ "$(stat -c %a "$cdir")" = 700 ] &&
	[ "$(stat -c %a "$layer")" = 600 ]; then
	ok "command file: one file of the user's own, and the second launch reuses the kept plan"
else
	bad "command file: status $rc, files: ${layer:-none}"
fi
cp "$layer" "$tmp/layer.orig"
# A file planted under that name is written over before it is compiled:
# the policy is what cagerun resolved, not what the file said. Writing
# one also clears out layers unused for 30 days.
printf 'cage 1\nallow read write "/**"\n' >"$layer"
: >"$cdir/command-0000000000000000.cage"
: >"$cdir/command-1111111111111111.cage"
touch -d '40 days ago' "$cdir/command-0000000000000000.cage"
run_t "$nvm/bin:$SYS" -- claude
if [ "$rc" -eq 0 ] && grep -qx nvm-ok "$tmp/out" && cmp -s "$layer" "$tmp/layer.orig"; then
	ok "command file: a planted text is replaced by the resolved one"
else
	bad "command file: planted text, status $rc"
fi
if [ ! -e "$cdir/command-0000000000000000.cage" ] && [ -e "$cdir/command-1111111111111111.cage" ]; then
	ok "command file: a layer unused for 40 days goes when one is written, a recent one stays"
else
	bad "command file: pruning: $(ls "$cdir" | tr '\n' ' ')"
fi
rm -f "$cdir/command-1111111111111111.cage"
# A symlink in its place is replaced, and what it pointed to is untouched.
echo victim >"$tmp/victim"
rm -f "$layer" && ln -s "$tmp/victim" "$layer"
run_t "$nvm/bin:$SYS" -- claude
if [ "$rc" -eq 0 ] && [ ! -L "$layer" ] && cmp -s "$layer" "$tmp/layer.orig" &&
	[ "$(cat "$tmp/victim")" = victim ]; then
	ok "command file: a symlink in its place is replaced, its target untouched"
else
	bad "command file: symlink, status $rc"
fi
# A directory others may enter is not used: a fresh one of the run's own,
# removed after, as before.
chmod 755 "$cdir"
rm -f "$layer"
run_t "$nvm/bin:$SYS" -- claude
chmod 700 "$cdir"
if [ "$rc" -eq 0 ] && grep -qx nvm-ok "$tmp/out" && [ -z "$(ls "$cdir")" ] &&
	[ -z "$(ls "$T" | grep '^cage-command\.' | grep -vx "cage-command.$(id -u)")" ]; then
	ok "command file: not in a directory others may enter; a fresh one, removed after"
else
	bad "command file: open directory, status $rc, left: $(ls "$T" "$cdir" | tr '\n' ' ')"
fi

# ---- what cannot be made to run: 125, naming the path ----
# a package directory others may write
chmod o+w "$nvm/lib/node_modules/@anthropic-ai/claude-code"
run "$nvm/bin:$SYS" -- claude
chmod o-w "$nvm/lib/node_modules/@anthropic-ai/claude-code"
refused "writable: a package directory others may write is refused (125)" \
	"cagerun: claude: $nvm/lib/node_modules/@anthropic-ai/claude-code, above $nvm/lib/node_modules/@anthropic-ai/claude-code/cli.js, is writable by others: anyone could replace what runs (chmod o-w it); nothing was run"
# the PATH directory the name was found in, which others may write
chmod o+w "$nvm/bin"
run "$nvm/bin:$SYS" -- claude
chmod o-w "$nvm/bin"
refused "writable: a PATH directory others may write is refused (125)" \
	"cagerun: claude: $nvm/bin is writable by others: anyone could replace what runs (chmod o-w it); nothing was run"
# a later layer's deny over the package: 125 naming the rule, never 126
mkdir -p "$tmp/xdg/cage/agents"
printf 'cage 1\ndeny read exec "%s/lib/node_modules/**"\n' "$nvm" >"$tmp/xdg/cage/agents/claude.cage"
run "$nvm/bin:$SYS" -- claude
rm -f "$tmp/xdg/cage/agents/claude.cage"
refused "denied: a layer's deny over the package is 125 with the rule and the line to add" \
	"cagerun: claude: $nvm/lib/node_modules/@anthropic-ai/claude-code/package.json (its package) is denied read by $tmp/xdg/cage/agents/claude.cage:2 (deny $nvm/lib/node_modules/**), so the command cannot start; nothing was run. To allow it, add after that rule: allow read exec \"$nvm/lib/node_modules/@anthropic-ai/claude-code/**\""

# ---- --show ----
run "$nvm/bin:$SYS" --show -- claude
if [ "$rc" -eq 0 ] && grep -Eq "^  [0-9]+\. command +xxh3:[0-9a-f]+  \(generated\) $nvm/bin/claude$" "$tmp/out" &&
	grep -Fqx "  grant $nvm/lib/node_modules/@anthropic-ai/claude-code/**   (its package)" "$tmp/out" &&
	grep -Fqx "  grant $nvm/bin/node   (its interpreter)" "$tmp/out" &&
	grep -Fqx "  $nvm/bin/claude -> $nvm/lib/node_modules/@anthropic-ai/claude-code/cli.js" "$tmp/out"; then
	ok "show: the command layer, how it was resolved, and its grants"
else
	bad "show: status $rc"
fi
finish
