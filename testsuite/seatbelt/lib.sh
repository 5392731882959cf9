# lib.sh - what the Seatbelt launcher's shell tests share: a scratch
# directory $T (removed at exit) with a workspace and a TMPDIR for the
# leases, the check helper and its failure count. Sourced with
# $stem, the scratch name's stem, set.
T=$(mktemp -d "/tmp/$stem.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fails=0
check() { # description, condition...
	cd_=$1; shift
	if "$@"; then echo "ok   $cd_"; else echo "FAIL $cd_"; fails=$((fails + 1)); fi
}
mkdir "$T/ws" "$T/tmp"
# No run's directory is left in $T/tmp, only the spare the next run takes
# (runtime/lease.c), and that empty.
leases_gone() {
	[ -z "$(ls -A "$T/tmp" | grep -v '^cage-spare\.[0-9]*$' | grep -v '^cage-swept\.[0-9]*$')" ] &&
		{ [ ! -e "$T/tmp/cage-spare.$(id -u)" ] || [ -z "$(ls -A "$T/tmp/cage-spare.$(id -u)")" ]; }
}
