#!/bin/sh
# agents.sh - the real agent command-line programs, installed from npm, run
# `--version` under their shipped example policies (examples/NAME.cage)
# while a fake SSH key in the same fake home stays unreadable.
#
#   agents.sh install WORKDIR
#       installs the pinned agents once into WORKDIR/agents (reused while
#       the pins and node's version stay the same); npm's tarball cache is
#       WORKDIR/npm-cache, so a reinstall does not download again.
#   agents.sh run WORKDIR CAGEC CAGERUN SRCDIR AGENT
#       AGENT is claude, codex or gemini.
#   agents.sh run-user USER WORKDIR CAGEC CAGERUN SRCDIR AGENT
#       the same runs as the unprivileged USER (when run as root) with the
#       soft open-files limit of an ordinary login (ulimit -Sn 1024); the
#       installed tree stays root's, the fixture home is USER's.
#
# The agents are laid out as nvm lays out a user's global installs
# (~/.nvm/versions/node/vX/{bin,lib/node_modules}, node itself in that bin
# directory, first on the PATH), in a fixture home made
# per run under WORKDIR (hard links to the installed tree, so a run costs no
# copy). For each agent:
#   control   without cagerun: the version line, and the key IS readable
#             (what the agent creates in the home is then removed again);
#   first-run the policy's own mode (enforce: network namespace, proxy
#             only), a home where the agent never ran: the version line,
#             and the key is not (what the agent complains about on stderr
#             is shown as notes);
#   set-up    the agent's state directory exists, as after a first run
#             outside the cage: in enforce-fs and enforce, the version line,
#             the key not readable, and no permission error from the agent;
#   layered   `cagerun -- AGENT --version` with no -p: the command layer
#             finds what starting the agent needs; status 0, the version.
# Every run is bounded by `timeout`: a hang is a failure.
#
# A SKIP line and success only when the agents are not installed yet and npm
# cannot reach its registry (`npm ping`); every other problem fails.
set -u

# The pinned releases: bump them together with the expected version lines.
claude_pkg=@anthropic-ai/claude-code@2.1.332
claude_line='2.1.332 (Claude Code)'
codex_pkg=@openai/codex@0.171.0
codex_line='codex-cli 0.171.0'
gemini_pkg=@google/gemini-cli@0.61.0
gemini_line='0.61.0'
pins="$claude_pkg $codex_pkg $gemini_pkg"

# Bounds: npm's registry round trip, the install, one agent run.
ping_secs=60
install_secs=900
run_secs=120

cmd=${1:-}
# run-user: root lays out the fixture home (hard links into the installed
# tree, which an ordinary user may not make), then runs `run` as USER.
if [ "$cmd" = run-user ]; then
	user=${2:-}
	shift 2
	[ $# -eq 5 ] || { echo "usage: agents.sh run-user USER WORKDIR CAGEC CAGERUN SRCDIR AGENT" >&2; exit 2; }
	if [ "$(id -u)" -ne 0 ]; then
		exec sh "$0" run "$@"
	fi
	if ! id "$user" >/dev/null 2>&1; then
		echo "FAIL: user $user does not exist (.ci/deps creates it)"
		exit 1
	fi
	work=$(cd "$1" && pwd) || exit 1
	if [ ! -f "$work/agents/.cage-pins" ]; then
		exec sh "$0" run "$@" # reports the SKIP, or why the agents are missing
	fi
	pre=$(mktemp -d "$work/run-$5-$user.XXXXXX") || exit 1
	nv=$(node --version) || exit 1
	mkdir -p "$pre/home/.nvm/versions/node" && cp -al "$work/agents" "$pre/home/.nvm/versions/node/$nv" &&
		chown "$user:" "$pre" "$pre/home" && chmod 755 "$pre" || { rm -rf "$pre"; exit 1; }
	if [ "$(ulimit -Sn)" = unlimited ] || [ "$(ulimit -Sn)" -gt 1024 ]; then
		ulimit -Sn 1024 || exit 1
	fi
	setpriv --reuid="$user" --regid="$user" --init-groups env -i PATH=/usr/local/bin:/usr/bin:/bin \
		LANG=C.UTF-8 HOME=/nonexistent CAGE_AGENTS_TMP="$pre" sh "$0" run "$@"
	rc=$?
	rm -rf "$pre"
	exit $rc
fi
work=${2:-}
if [ -z "$cmd" ] || [ -z "$work" ]; then
	echo "usage: agents.sh install WORKDIR | run WORKDIR CAGEC CAGERUN SRCDIR AGENT" >&2
	exit 2
fi
[ -n "${CAGE_AGENTS_TMP:-}" ] || mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd) || exit 1
installed=$work/agents
# npm's cache and logs stay in the build directory, never in ~/.npm.
export npm_config_cache="$work/npm-cache"
export npm_config_update_notifier=false
export npm_config_fund=false
export npm_config_audit=false

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	echo "FAIL: node and npm are needed (the nodejs package)" >&2
	exit 1
fi
node_version=$(node --version) || exit 1
stamp="$pins node $node_version"

is_installed() {
	[ -f "$installed/.cage-pins" ] && [ "$(cat "$installed/.cage-pins")" = "$stamp" ] &&
		[ -x "$installed/bin/node" ]
}

# Exits 0 with a SKIP line when npm cannot reach its registry.
skip_if_offline() {
	# No retries: a refused connection is an answer, not worth a minute of backoff.
	if ! timeout -k 5 "$ping_secs" npm ping --fetch-retries=0 --fetch-timeout=$((ping_secs * 1000 / 2)) \
		>"$work/ping.log" 2>&1; then
		echo "SKIP: npm cannot reach its registry (npm ping failed or took over ${ping_secs}s):"
		sed 's/^/    /' "$work/ping.log"
		exit 0
	fi
}

do_install() {
	if is_installed; then
		echo "agents already installed in $installed ($stamp)"
		exit 0
	fi
	skip_if_offline
	# Into a fresh directory renamed into place once complete: a run killed
	# half-way leaves nothing that looks installed.
	tmp=$work/agents.new.$$
	rm -rf "$tmp"
	echo "npm install -g --prefix $tmp --no-audit --no-fund $pins"
	# shellcheck disable=SC2086 # one word per package
	if ! timeout -k 5 "$install_secs" npm install -g --prefix "$tmp" --no-audit --no-fund \
		$pins >"$work/install.log" 2>&1; then
		echo "FAIL: npm install failed:" >&2
		sed 's/^/    /' "$work/install.log" >&2
		rm -rf "$tmp"
		exit 1
	fi
	# nvm's bin directory holds node itself too, found first on the PATH by
	# the agents' `#!/usr/bin/env node`: a copy of this machine's.
	cp "$(command -v node)" "$tmp/bin/node" || exit 1
	printf '%s\n' "$stamp" >"$tmp/.cage-pins"
	rm -rf "$installed" && mv "$tmp" "$installed" || exit 1
	echo "installed: $stamp"
}

if [ "$cmd" = install ]; then
	do_install
	exit 0
fi
if [ "$cmd" != run ] || [ $# -ne 6 ]; then
	echo "usage: agents.sh install WORKDIR | run WORKDIR CAGEC CAGERUN SRCDIR AGENT" >&2
	exit 2
fi
cagec=$3
cagerun=$4
src=$5
agent=$6
case $agent in
claude) line=$claude_line policy=$src/examples/claude-code.cage ;;
codex) line=$codex_line policy=$src/examples/codex.cage ;;
gemini) line=$gemini_line policy=$src/examples/gemini.cage ;;
*) echo "agents.sh: unknown agent $agent" >&2; exit 2 ;;
esac

if ! is_installed; then
	skip_if_offline
	echo "FAIL: npm reaches its registry but the agents are not installed in $installed" \
		"(the agents/install test installs them; see its output)" >&2
	exit 1
fi

if [ -n "${CAGE_AGENTS_TMP:-}" ]; then
	# run-user: the home and its nvm tree were laid out by root.
	tmp=$CAGE_AGENTS_TMP
else
	tmp=$(mktemp -d "$work/run-$agent.XXXXXX") || exit 1
	trap 'rm -rf "$tmp"' EXIT
fi
home=$tmp/home
ws=$home/src/app
nvm_bin=$home/.nvm/versions/node/$node_version/bin
mkdir -p "$home/.ssh" "$home/.nvm/versions/node" "$ws" || exit 1
[ -d "$home/.nvm/versions/node/$node_version" ] ||
	cp -al "$installed" "$home/.nvm/versions/node/$node_version" || exit 1
key="cage-agents-test-key-$$-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$key" >"$home/.ssh/id_rsa" && chmod 700 "$home/.ssh" && chmod 600 "$home/.ssh/id_rsa" ||
	exit 1
# A real project: the examples deny writing .git/hooks (and .git/config),
# which must exist for Linux to enforce it.
git init -q "$ws" || exit 1

# The command inside the sandbox (expanded there, hence single quotes). The
# marker line splits the agent's stderr from cat's.
# shellcheck disable=SC2016
probe='"$1" --version </dev/null
echo "probe: agent status $?"
echo "probe: cat" >&2
if cat "$HOME/.ssh/id_rsa"; then echo "probe: key read"; else echo "probe: key not read"; fi'

passed=0
failed=0
fail() {
	echo "FAIL: $agent: $label: $*"
	echo "  stdout:"
	sed 's/^/    /' "$tmp/out"
	echo "  stderr:"
	sed 's/^/    /' "$tmp/err"
	# What the policy says about the agent's entry point, a usual culprit.
	entry=$(readlink -f "$nvm_bin/$agent")
	echo "  cagec explain read $entry:"
	HOME=$home "$cagec" explain --target linux -D workspace="$ws" "$policy" read "$entry" 2>&1 |
		sed 's/^/    /'
	failed=$((failed + 1))
}

# probe LABEL KEY(read|denied) STRICT(yes|no) [CAGERUN-ARGS...]: one run of
# the probe, outside the cage when no cagerun arguments are given.
probe() {
	label=$1 want_key=$2 strict=$3
	shift 3
	[ $# -gt 0 ] && set -- "$@" --
	# What a user with nvm has: its bin directory first on PATH.
	set -- env HOME="$home" PATH="$nvm_bin:/usr/local/bin:/usr/bin:/bin" USER="$(id -un)" \
		LANG=C.UTF-8 TERM=dumb "$@"
	start=$(date +%s)
	timeout -k 5 "$run_secs" "$@" /bin/sh -c "$probe" sh "$agent" >"$tmp/out" 2>"$tmp/err"
	status=$?
	secs=$(($(date +%s) - start))
	agent_err=$(sed '/^probe: cat$/,$d' "$tmp/err")
	if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
		fail "did not finish within ${run_secs}s"
		return
	fi
	if [ "$status" -ne 0 ]; then
		fail "exit status $status"
		return
	fi
	if ! grep -Fqx -- "$line" "$tmp/out"; then
		fail "no version line '$line' on stdout"
		return
	fi
	if ! grep -qx 'probe: agent status 0' "$tmp/out"; then
		fail "$agent --version did not exit 0"
		return
	fi
	if [ "$want_key" = read ]; then
		if ! grep -qx 'probe: key read' "$tmp/out" || ! grep -Fqx -- "$key" "$tmp/out"; then
			fail "control: the key was not readable without the sandbox"
			return
		fi
	else
		# Denied by the sandbox, not missing: cat says why.
		if grep -Fq -- "$key" "$tmp/out" || ! grep -qx 'probe: key not read' "$tmp/out" ||
			! grep -q 'id_rsa: Permission denied' "$tmp/err"; then
			fail "the key was readable, or not refused with EACCES"
			return
		fi
	fi
	if [ "$strict" = yes ] && printf '%s\n' "$agent_err" | grep -qi 'permission denied\|EACCES\|EPERM'; then
		fail "$agent reported a permission error"
		return
	fi
	echo "ok: $agent: $label (${secs}s)"
	if [ -n "$agent_err" ]; then
		printf '%s\n' "$agent_err" | sed "s/^/  note: $agent stderr: /"
	fi
	passed=$((passed + 1))
}

cd "$ws" || exit 1
probe "control, no sandbox" read no
# Back to a home where the agent never ran.
for f in "$home"/* "$home"/.[!.]*; do
	case ${f##*/} in
	'*' | '.[!.]*' | .ssh | .nvm | src) ;;
	*) echo "  note: $agent: the control run created ~/${f##*/}"; rm -rf "$f" ;;
	esac
done
probe "first run, policy's mode (enforce)" denied no \
	"$cagerun" --log "$tmp/proxy.log" -p "$policy" -D workspace="$ws"
# The state the agent creates on its first run (outside the cage: on Linux
# the cage cannot let it create a directory in the home directory).
case $agent in
claude) mkdir -p "$home/.claude" && printf '{}\n' >"$home/.claude.json" ;;
codex) mkdir -p "$home/.codex" ;;
gemini) mkdir -p "$home/.gemini" ;;
esac
probe "set up, enforce-fs" denied yes \
	"$cagerun" --mode enforce-fs -p "$policy" -D workspace="$ws"
probe "set up, enforce" denied yes \
	"$cagerun" --log "$tmp/proxy.log" -p "$policy" -D workspace="$ws"
# The layered form (no -p): the command layer follows nvm's symlink, the
# agent's #! line and node on PATH to what starting it needs.
label="layered, cagerun -- $agent --version"
(cd "$ws" && timeout -k 5 "$run_secs" env HOME="$home" PATH="$nvm_bin:/usr/local/bin:/usr/bin:/bin" \
	USER="$(id -un)" LANG=C.UTF-8 TERM=dumb "$cagerun" -- "$agent" --version) \
	>"$tmp/out" 2>"$tmp/err" </dev/null
status=$?
if [ "$status" -ne 0 ]; then
	fail "exit status $status"
elif ! grep -Fqx -- "$line" "$tmp/out"; then
	fail "no version line '$line' on stdout"
else
	echo "ok: $agent: $label"
	passed=$((passed + 1))
fi
if [ -s "$tmp/proxy.log" ]; then
	echo "  note: $agent: requests through the proxy at --version:"
	sed 's/^/    /' "$tmp/proxy.log"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
