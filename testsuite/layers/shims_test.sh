#!/bin/sh
# shims_test.sh CAGERUN - version managers' shims in the command layer:
# `cagerun -- NAME` (no -p) where NAME on PATH is an asdf, mise or volta
# shim runs the program the manager would choose, without running the
# manager. Fixture homes are laid out as each manager lays them out, with
# a small "node" standing in for each installed version (`--version`
# prints it, `-e CODE` runs CODE with sh, a script argument prints its
# `// say:` lines); the managers' own programs are stand-ins that print
# that they ran, so a run that reached them is seen.
#
#   asdf   ~/.asdf/shims/NAME (`# asdf-plugin:` lines, `exec asdf exec`),
#          installs/nodejs/V/bin, ~/.tool-versions, ws/.tool-versions,
#          ASDF_NODEJS_VERSION; the old bash form and the 0.16+ form
#   mise   ~/.local/share/mise/shims/NAME -> mise, installs/node/V/bin
#          (and the `20` link mise makes), installs/npm-PKG/V,
#          ~/.config/mise/config.toml, ws/mise.toml, MISE_NODE_VERSION, and
#          `mise activate`'s PATH entry
#   volta  ~/.volta/bin/NAME -> volta-shim, tools/image/node/V,
#          tools/image/yarn/V, tools/image/pnpm/V, tools/user/platform.json,
#          ws/package.json's "volta" key (and `extends`),
#          tools/user/bins/NAME.json, tools/image/packages/PKG
#
# For each: the version picked follows the manager's precedence, a
# package's script finds node through the PATH the manager would give it,
# children find node and npm, the install tree and the shim directory are
# not writable inside (the control: writable without cagerun), and what
# cannot be resolved is 125 naming the file and what to add.
# CAGE_TEST_MISE=PATH-TO-A-REAL-MISE adds: the real mise picks the same
# version from the same fixture.
cagerun=$1
. "$(dirname "$0")/check.sh"
H=$tmp/home
ws=$H/ws
mkdir -p "$H" "$ws/.git" "$tmp/xdg"
export HOME="$H" XDG_CONFIG_HOME="$tmp/xdg"
unset CAGE_STDLIB ASDF_DATA_DIR ASDF_NODEJS_VERSION MISE_DATA_DIR MISE_NODE_VERSION VOLTA_HOME \
	XDG_DATA_HOME MISE_GLOBAL_CONFIG_FILE MISE_CONFIG_DIR MISE_INSTALLS_DIR ASDF_CONFIG_FILE \
	ASDF_DEFAULT_TOOL_VERSIONS_FILENAME
SYS=/usr/local/bin:/usr/bin:/bin

# fake_node DIR VERSION: DIR/node, and npm beside it as npm lays it out.
fake_node() {
	mkdir -p "$1" "$1/../lib/node_modules/npm/bin"
	cat >"$1/node" <<NODE
#!/bin/sh
case \$1 in
--version) echo "v$2" ;;
-e) shift; exec sh -c "\$1" ;;
*) sed -n 's|^// say: ||p' "\$1" ;;
esac
NODE
	printf '#!/usr/bin/env node\n// say: npm-of-%s\n' "$2" >"$1/../lib/node_modules/npm/bin/npm-cli.js"
	chmod 755 "$1/node" "$1/../lib/node_modules/npm/bin/npm-cli.js"
	ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/npm"
}
# js_pkg PREFIX NAME MARKER: a global npm package under PREFIX with its bin.
js_pkg() {
	d=$1/lib/node_modules/@anthropic-ai/claude-code
	mkdir -p "$d" "$1/bin"
	echo '{"name":"@anthropic-ai/claude-code"}' >"$d/package.json"
	printf '#!/usr/bin/env node\n// say: %s\n' "$3" >"$d/cli.js"
	chmod 755 "$d/cli.js"
	ln -s ../lib/node_modules/@anthropic-ai/claude-code/cli.js "$1/bin/$2"
}
# stand_in PATH NAME: a manager's program that says it ran.
stand_in() {
	mkdir -p "$(dirname "$1")"
	printf '#!/bin/sh\necho %s-ran\nexit 3\n' "$2" >"$1"
	chmod 755 "$1"
}
# run DIR PATH ARGS...: cagerun in DIR with that PATH.
run() {
	d=$1 p=$2
	shift 2
	(cd "$d" && PATH="$p" timeout 60 "$cagerun" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null)
	rc=$?
}
# runs LABEL WANT DIR PATH ARGS...: status 0 and WANT as the output's last line.
runs() {
	label=$1 want=$2
	shift 2
	run "$@"
	if [ "$rc" -eq 0 ] && [ "$(tail -n 1 "$tmp/out")" = "$want" ] && ! grep -q -- '-ran$' "$tmp/out"; then
		ok "$label"
	else
		bad "$label: status $rc, want $want"
	fi
}
# sealed LABEL DIR PATH TREE...: each TREE is writable without cagerun (the
# control) and not inside, through the shim's program.
sealed() {
	label=$1 d=$2 p=$3
	shift 3
	for t in "$@"; do
		if ! (: >"$t/cage-probe" && rm "$t/cage-probe"); then
			bad "$label: control, $t is not writable without cagerun"
			return
		fi
		run "$d" "$p" -q -- node -e "if (: >'$t/cage-probe') 2>/dev/null; then echo written; else echo refused; fi"
		if [ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = refused ] && [ ! -e "$t/cage-probe" ]; then
			:
		else
			rm -f "$t/cage-probe"
			bad "$label: $t written inside, status $rc"
			return
		fi
	done
	ok "$label: $* writable without cagerun, not inside"
}

# ---------------------------------------------------------------- asdf
A=$H/.asdf
for v in 18.19.0 20.11.0; do
	fake_node "$A/installs/nodejs/$v/bin" "$v"
done
js_pkg "$A/installs/nodejs/20.11.0" claude asdf-claude-ok
mkdir -p "$A/plugins/nodejs/bin" "$A/shims"
stand_in "$A/plugins/nodejs/bin/install" asdf-plugin
stand_in "$A/bin/asdf" asdf
# the 0.16+ form (asdf on PATH) for node and npm; the bash form for claude
for n in node npm; do
	printf '#!/usr/bin/env bash\n# asdf-plugin: nodejs 18.19.0\n# asdf-plugin: nodejs 20.11.0\nexec asdf exec "%s" "$@" # asdf_allow: '"' asdf '"'\n' \
		"$n" >"$A/shims/$n"
done
printf '#!/usr/bin/env bash\n# asdf-plugin: nodejs 20.11.0\nexec %s/bin/asdf exec "claude" "$@" # asdf_allow: '"' asdf '"'\n' \
	"$A" >"$A/shims/claude"
chmod 755 "$A/shims/"*
AP=$A/shims:$A/bin:$SYS
echo 'nodejs 18.19.0' >"$H/.tool-versions"
echo 'nodejs 20.11.0 18.19.0 # the project pins 20' >"$ws/.tool-versions"
mkdir -p "$tmp/elsewhere/.git"
if (cd "$ws" && PATH=$AP node --version 2>&1) | grep -qx asdf-ran; then
	ok "asdf: control, the shim runs asdf (the stand-in) without cagerun"
else
	bad "asdf: control"
fi
runs "asdf: the project's .tool-versions over ~/.tool-versions" v20.11.0 "$ws" "$AP" -q -- node --version
runs "asdf: ~/.tool-versions outside a project" v18.19.0 "$tmp/elsewhere" "$AP" -q -- node --version
ASDF_NODEJS_VERSION=18.19.0 runs "asdf: ASDF_NODEJS_VERSION over both" v18.19.0 "$ws" "$AP" -q -- node --version
runs "asdf: the bash form; claude's #!/usr/bin/env node finds the install's node" asdf-claude-ok "$ws" "$AP" -q -- claude
runs "asdf: the program's children find node first on PATH" v20.11.0 "$ws" "$AP" -q -- node -e 'node --version'
runs "asdf: and npm" npm-of-20.11.0 "$ws" "$AP" -q -- node -e 'npm'
sealed "asdf: install and shims sealed" "$ws" "$AP" "$A/installs/nodejs/20.11.0/bin" "$A/shims"
run "$ws" "$AP" --show -- node
if [ "$rc" -eq 0 ] && grep -Fqx "  $A/shims/node: an asdf shim: nodejs 20.11.0 from $ws/.tool-versions:1" "$tmp/out" &&
	grep -Fqx "  grant $A/installs/nodejs/20.11.0/**   (its asdf install)" "$tmp/out" &&
	grep -Fqx "  runs $A/installs/nodejs/20.11.0/bin/node in place of the shim, PATH starting with $A/installs/nodejs/20.11.0/bin" "$tmp/out"; then
	ok "asdf: --show names the version, the file it came from, the grant and what runs"
else
	bad "asdf: --show"
fi
echo 'nodejs 22.0.0' >"$ws/.tool-versions"
run "$ws" "$AP" -- node --version
refused "asdf: a version not installed is 125 naming the file and the line" \
	"asdf: nodejs 22.0.0 (from $ws/.tool-versions:1) is not installed" \
	"add the line \`nodejs 18.19.0\` to $ws/.tool-versions"
printf 'nodejs\n' >"$ws/.tool-versions"
run "$ws" "$AP" -- node --version
refused "asdf: a malformed .tool-versions is 125 with its file:line" "$ws/.tool-versions:1: nodejs has no version"
rm "$ws/.tool-versions" "$H/.tool-versions"
run "$ws" "$AP" -- node --version
refused "asdf: no version set is 125 naming what to add" "asdf: no version of nodejs is set for $ws; add the line \`nodejs 18.19.0\`"
echo 'nodejs 20.11.0' >"$ws/.tool-versions"
stand_in "$A/plugins/nodejs/bin/list-bin-paths" asdf-plugin
run "$ws" "$AP" -- node --version
rm "$A/plugins/nodejs/bin/list-bin-paths"
refused "asdf: a plugin's list-bin-paths is not run: 125" "list-bin-paths, a script asdf runs to find the program"
rm "$ws/.tool-versions"

# ---------------------------------------------------------------- mise
M=$H/.local/share/mise
for v in 18.19.0 20.11.0; do
	fake_node "$M/installs/node/$v/bin" "$v"
done
ln -s ./20.11.0 "$M/installs/node/20"
js_pkg "$M/installs/npm-anthropic-ai-claude-code/1.0.0" claude mise-claude-ok
stand_in "$tmp/mise-bin/mise" mise
mise=${CAGE_TEST_MISE:-$tmp/mise-bin/mise}
mkdir -p "$M/shims" "$tmp/xdg/mise"
for n in node npm claude; do
	ln -s "$mise" "$M/shims/$n"
done
MP=$M/shims:$SYS
printf '[settings]\nexperimental = true\n\n[tools]\nnode = "18"\n' >"$tmp/xdg/mise/config.toml"
cat >"$ws/mise.toml" <<'TOML'
# the project's tools
[env]
NOTE = """
[tools]
node = "10"
"""

[tools]
node = { version = "20", os = "linux" } # mise links 20 to 20.11.0
"npm:@anthropic-ai/claude-code" = ["1.0.0"]
TOML
runs "mise: the project's mise.toml over the global config (a fuzzy 20)" v20.11.0 "$ws" "$MP" -q -- node --version
runs "mise: the global config.toml outside a project (18: the newest 18.x)" v18.19.0 "$tmp/elsewhere" "$MP" -q -- node --version
MISE_NODE_VERSION=18.19.0 runs "mise: MISE_NODE_VERSION over both" v18.19.0 "$ws" "$MP" -q -- node --version
runs "mise: an npm: tool; its #!/usr/bin/env node finds the mise shim, followed to node 20" \
	mise-claude-ok "$ws" "$MP" -q -- claude
run "$ws" "$MP" --show -- claude
if [ "$rc" -eq 0 ] && grep -Fqx "  $M/shims/claude: a mise shim: npm:@anthropic-ai/claude-code 1.0.0 from $ws/mise.toml:10" "$tmp/out" &&
	grep -Fq ": a mise shim: node 20 from $ws/mise.toml:9" "$tmp/out" &&
	grep -Fqx "  grant $M/installs/node/20.11.0/**   (its mise install)" "$tmp/out"; then
	ok "mise: --show names both tools and where their versions came from"
else
	bad "mise: --show"
fi
runs "mise: children find node" v20.11.0 "$ws" "$MP" -q -- node -e 'node --version'
runs "mise: \`mise activate\`'s PATH entry (no shim) runs as it is" v20.11.0 "$ws" "$M/installs/node/20.11.0/bin:$SYS" -q -- node --version
sealed "mise: install and shims sealed" "$ws" "$MP" "$M/installs/node/20.11.0/bin" "$M/shims"
if [ -n "${CAGE_TEST_MISE:-}" ]; then
	# mise_agrees DIR NAME [VAR=VALUE]: `mise which NAME` is what cagerun runs
	mise_agrees() {
		got=$(cd "$1" && env ${3:-} PATH=$MP MISE_YES=1 "$CAGE_TEST_MISE" which "$2" 2>/dev/null)
		(cd "$1" && env ${3:-} PATH="$MP" timeout 60 "$cagerun" --show -- "$2" >"$tmp/out" 2>"$tmp/err" </dev/null)
		if [ -n "$got" ] && grep -Fq "  runs $got in place of the shim" "$tmp/out"; then
			ok "mise: the real mise runs the same $2 in $1 ${3:-} ($got)"
		else
			bad "mise: the real mise runs '$got' for $2 in $1 ${3:-}"
		fi
	}
	mise_agrees "$ws" node
	mise_agrees "$tmp/elsewhere" node
	mise_agrees "$ws" node MISE_NODE_VERSION=18.19.0
	mise_agrees "$ws" claude
fi
sed -i 's/version = "20"/version = "22"/' "$ws/mise.toml"
run "$ws" "$MP" -- node --version
refused "mise: a version not installed is 125 naming the file and what to run" \
	"mise: node 22 (from $ws/mise.toml:9) is not installed: no $M/installs/node/22; run \`mise install\`"
printf '[tools]\nnode = 20\n' >"$ws/mise.toml"
run "$ws" "$MP" -- node --version
refused "mise: a malformed mise.toml is 125 with its file:line" "$ws/mise.toml:2: node: a version must be a string"
rm "$ws/mise.toml" "$tmp/xdg/mise/config.toml"
run "$ws" "$MP" -- node --version
refused "mise: nothing configured is 125 naming the line to add" \
	"mise: no configured tool has bin/node" "add a line \`TOOL = \"VERSION\"\` under [tools] in $ws/mise.toml"

# ---------------------------------------------------------------- volta
V=$H/.volta
for v in 18.19.0 20.11.0; do
	fake_node "$V/tools/image/node/$v/bin" "$v"
done
img=$V/tools/image/packages/@anthropic-ai/claude-code
js_pkg "$img" claude volta-claude-ok
mkdir -p "$V/tools/user/bins" "$V/tools/user/packages/@anthropic-ai"
stand_in "$V/bin/volta-shim" volta-shim
stand_in "$V/bin/volta" volta
for n in node npm claude yarn pnpm; do
	ln -s volta-shim "$V/bin/$n"
done
# yarn and pnpm images: their entry points run on the platform's node
for t in yarn:1.22.19 pnpm:8.15.0; do
	mkdir -p "$V/tools/image/${t%%:*}/${t#*:}/bin"
	printf '#!/usr/bin/env node\n// say: %s-%s\n' "${t%%:*}" "${t#*:}" >"$V/tools/image/${t%%:*}/${t#*:}/bin/${t%%:*}"
	chmod 755 "$V/tools/image/${t%%:*}/${t#*:}/bin/${t%%:*}"
done
echo '{"node":{"runtime":"18.19.0","npm":null},"pnpm":"8.15.0","yarn":null}' >"$V/tools/user/platform.json"
platform='"platform":{"node":"20.11.0","npm":null,"pnpm":null,"yarn":null}'
echo '{"name":"claude","package":"@anthropic-ai/claude-code","version":"1.0.0",'"$platform"',"manager":"Npm"}' >"$V/tools/user/bins/claude.json"
echo '{"name":"@anthropic-ai/claude-code","version":"1.0.0",'"$platform"',"bins":["claude"],"manager":"Npm"}' >"$V/tools/user/packages/@anthropic-ai/claude-code.json"
VP=$V/bin:$SYS
cat >"$ws/package.json" <<'JSON'
{
  "name": "ws",
  "dependencies": { "left-pad": "1.3.0" },
  "volta": { "node": "20.11.0", "yarn": "1.22.19" }
}
JSON
mkdir -p "$ws/sub"
echo '{"name":"sub","volta":{"extends":"../package.json"}}' >"$ws/sub/package.json"
echo '{"name":"plain"}' >"$tmp/elsewhere/package.json"
runs "volta: the project's \"volta\" key over the default platform" v20.11.0 "$ws" "$VP" -q -- node --version
runs "volta: \"extends\" followed to the parent project" v20.11.0 "$ws/sub" "$VP" -q -- node --version
runs "volta: the default platform in a project without a \"volta\" key" v18.19.0 "$tmp/elsewhere" "$VP" -q -- node --version
runs "volta: npm from the same node image" npm-of-20.11.0 "$ws" "$VP" -q -- npm
runs "volta: yarn pinned by the project" yarn-1.22.19 "$ws" "$VP" -q -- yarn
runs "volta: pnpm from the default platform, merged into the project's" pnpm-8.15.0 "$ws" "$VP" -q -- pnpm
run "$tmp/elsewhere" "$VP" -- yarn
refused "volta: no yarn anywhere is 125 naming the key to add" \
	"volta: no yarn version for $tmp/elsewhere; add \"yarn\": \"VERSION\" to the \"volta\" key of $tmp/elsewhere/package.json"
runs "volta: a package's binary with its pinned platform" volta-claude-ok "$tmp/elsewhere" "$VP" -q -- claude
runs "volta: children find node" v20.11.0 "$ws" "$VP" -q -- node -e 'node --version'
sealed "volta: image and shims sealed" "$ws" "$VP" "$V/tools/image/node/20.11.0/bin" "$V/bin"
run "$ws/sub" "$VP" --show -- node
if [ "$rc" -eq 0 ] && grep -Fqx "  $V/bin/node: a volta shim: node 20.11.0 from $ws/package.json" "$tmp/out" &&
	grep -Fqx "  grant $V/tools/image/node/20.11.0/**   (its volta node image)" "$tmp/out"; then
	ok "volta: --show names the version and the package.json it came from"
else
	bad "volta: --show"
fi
run "$ws" "$VP" --show -- claude
if [ "$rc" -eq 0 ] && grep -Fqx "  grant $img/**   (its volta package image)" "$tmp/out" &&
	grep -Fqx "  grant $V/tools/image/node/20.11.0/**   (its volta node image)" "$tmp/out"; then
	ok "volta: a package's image and its platform's node image are granted"
else
	bad "volta: --show of a package"
fi
sed -i 's/"left-pad": "1.3.0"/"left-pad": "1.3.0", "@anthropic-ai\/claude-code": "1.0.0"/' "$ws/package.json"
run "$ws" "$VP" -- claude
refused "volta: a project depending on the package is 125 (volta would run the project's copy)" \
	"volta: $ws/package.json lists @anthropic-ai/claude-code in \"dependencies\""
echo '{"node":{"runtime":"16.0.0","npm":null}}' >"$V/tools/user/platform.json"
run "$tmp/elsewhere" "$VP" -- node --version
refused "volta: a default not installed is 125 naming what to run" \
	"volta: node 16.0.0 (from $V/tools/user/platform.json) is not installed: no $V/tools/image/node/16.0.0; run \`volta fetch node@16.0.0\`"
printf '{"name":"ws",\n  "volta": {"node": 20}}\n' >"$ws/package.json"
run "$ws" "$VP" -- node --version
refused "volta: a malformed \"volta\" key is 125 with its file:line" "$ws/package.json:2: a number where a string was expected"
rm "$V/tools/user/platform.json" "$tmp/elsewhere/package.json"
run "$tmp/elsewhere" "$VP" -- node --version
refused "volta: no version is 125 naming the key to add" \
	"volta: no node version for $tmp/elsewhere" "add \"volta\": { \"node\": \"VERSION\" } to package.json"
finish
