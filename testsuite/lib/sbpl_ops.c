/*
 * sbpl_ops.c - Seatbelt's operation fallback table, for the test-only SBPL
 * evaluator (sbpl_eval.h).
 *
 * When a profile has no rule on an operation that matches, Seatbelt decides
 * with the rules of the operation's fallback ("parent"), up to `default`.
 * The rows below are the operation and fallback columns of
 * /work/shared/sbpl-operations.tsv, itself derived from 0xbf00/simbple
 * src/platform_data/catalina/operations.c (macOS 10.15 libsandbox data as
 * extracted by simbple). Regenerate with:
 *   grep -v '^#' sbpl-operations.tsv |
 *     awk -F'\t' '{printf "\t{ \"%s\", \"%s\" },\n", $1, $2}'
 * Newer macOS releases add operations; the evaluator lets an operation that
 * is not listed fall back to `default` and records that it saw one, so a test
 * can refuse a profile that names an operation we have no data for.
 */
#include "sbpl_eval.h"

#include <string.h>

static const struct sbpl_eval_op ops[] = {
	{ "default", "default" },
	{ "appleevent-send", "default" },
	{ "authorization-right-obtain", "default" },
	{ "boot-arg-set", "default" },
	{ "device*", "default" },
	{ "device-camera", "device*" },
	{ "device-microphone", "device*" },
	{ "darwin-notification-post", "default" },
	{ "distributed-notification-post", "default" },
	{ "dynamic-code-generation", "default" },
	{ "file*", "default" },
	{ "file-chroot", "file*" },
	{ "file-clone", "default" },
	{ "file-ioctl", "file*" },
	{ "file-issue-extension", "file*" },
	{ "file-link", "default" },
	{ "file-map-executable", "default" },
	{ "file-mknod", "file*" },
	{ "file-mount", "file*" },
	{ "file-mount-update", "file-mount" },
	{ "file-read*", "file*" },
	{ "file-read-data", "file-read*" },
	{ "file-read-metadata", "file-read*" },
	{ "file-read-xattr", "file-read*" },
	{ "file-revoke", "file*" },
	{ "file-search", "file*" },
	{ "file-test-existence", "default" },
	{ "file-unmount", "file*" },
	{ "file-write*", "file*" },
	{ "file-write-acl", "file-write*" },
	{ "file-write-create", "file-write*" },
	{ "file-write-data", "file-write*" },
	{ "file-write-finderinfo", "file-write*" },
	{ "file-write-flags", "file-write*" },
	{ "file-write-mode", "file-write*" },
	{ "file-write-owner", "file-write*" },
	{ "file-write-setugid", "default" },
	{ "file-write-times", "file-write*" },
	{ "file-write-unlink", "file-write*" },
	{ "file-write-xattr", "file-write*" },
	{ "fs-rename", "default" },
	{ "fs-snapshot*", "default" },
	{ "fs-snapshot-create", "fs-snapshot*" },
	{ "fs-snapshot-delete", "fs-snapshot*" },
	{ "fs-snapshot-revert", "fs-snapshot*" },
	{ "generic-issue-extension", "default" },
	{ "qtn-user", "default" },
	{ "hid-control", "default" },
	{ "iokit*", "default" },
	{ "iokit-issue-extension", "iokit*" },
	{ "iokit-open", "iokit*" },
	{ "iokit-set-properties", "iokit*" },
	{ "iokit-get-properties", "default" },
	{ "ipc*", "default" },
	{ "ipc-posix*", "ipc*" },
	{ "ipc-posix-issue-extension", "ipc-posix*" },
	{ "ipc-posix-sem*", "ipc-posix*" },
	{ "ipc-posix-sem-create", "ipc-posix-sem*" },
	{ "ipc-posix-sem-open", "ipc-posix-sem*" },
	{ "ipc-posix-sem-post", "ipc-posix-sem*" },
	{ "ipc-posix-sem-unlink", "ipc-posix-sem*" },
	{ "ipc-posix-sem-wait", "ipc-posix-sem*" },
	{ "ipc-posix-shm*", "ipc-posix*" },
	{ "ipc-posix-shm-read-data", "ipc-posix-shm*" },
	{ "ipc-posix-shm-write*", "ipc-posix-shm*" },
	{ "ipc-posix-shm-write-create", "ipc-posix-shm-write*" },
	{ "ipc-posix-shm-write-data", "ipc-posix-shm-write*" },
	{ "ipc-posix-shm-write-unlink", "ipc-posix-shm-write*" },
	{ "ipc-sysv*", "ipc*" },
	{ "ipc-sysv-msg", "ipc-sysv*" },
	{ "ipc-sysv-sem", "ipc-sysv*" },
	{ "ipc-sysv-shm", "ipc-sysv*" },
	{ "job-creation", "default" },
	{ "load-unsigned-code", "default" },
	{ "lsopen", "default" },
	{ "mach*", "default" },
	{ "mach-cross-domain-lookup", "default" },
	{ "mach-host*", "mach*" },
	{ "mach-host-exception-port-set", "mach-host*" },
	{ "mach-host-special-port-set", "mach-host*" },
	{ "mach-issue-extension", "mach*" },
	{ "mach-lookup", "mach*" },
	{ "mach-priv*", "mach*" },
	{ "mach-priv-host-port", "mach-priv*" },
	{ "mach-priv-task-port", "mach-priv*" },
	{ "mach-register", "mach*" },
	{ "mach-task-name", "mach*" },
	{ "network*", "default" },
	{ "network-inbound", "network*" },
	{ "network-bind", "network-inbound" },
	{ "network-outbound", "network*" },
	{ "nvram*", "default" },
	{ "nvram-delete", "nvram*" },
	{ "nvram-get", "nvram*" },
	{ "nvram-set", "nvram*" },
	{ "opendirectory-user-modify", "default" },
	{ "process*", "default" },
	{ "process-codesigning-status*", "process*" },
	{ "process-codesigning-status-set", "process-codesigning-status*" },
	{ "process-codesigning-status-get", "process-codesigning-status*" },
	{ "process-exec*", "process*" },
	{ "process-exec-interpreter", "process-exec*" },
	{ "process-fork", "process*" },
	{ "process-info*", "default" },
	{ "process-info-codesignature", "default" },
	{ "process-info-dirtycontrol", "process-info*" },
	{ "process-info-listpids", "process-info*" },
	{ "process-info-rusage", "process-info*" },
	{ "process-info-pidinfo", "process-info*" },
	{ "process-info-pidfdinfo", "process-info*" },
	{ "process-info-pidfileportinfo", "process-info*" },
	{ "process-info-setcontrol", "process-info*" },
	{ "pseudo-tty", "default" },
	{ "signal", "default" },
	{ "socket-ioctl", "default" },
	{ "sysctl*", "default" },
	{ "sysctl-read", "sysctl*" },
	{ "sysctl-write", "sysctl*" },
	{ "system*", "default" },
	{ "system-acct", "system*" },
	{ "system-audit", "system*" },
	{ "system-automount", "system*" },
	{ "system-debug", "system*" },
	{ "system-fsctl", "system*" },
	{ "system-info", "system*" },
	{ "system-kext*", "system*" },
	{ "system-kext-load", "system-kext*" },
	{ "system-kext-unload", "system-kext*" },
	{ "system-kext-query", "system-kext*" },
	{ "system-mac-label", "system*" },
	{ "system-nfssvc", "system*" },
	{ "system-package-check", "system*" },
	{ "system-privilege", "default" },
	{ "system-reboot", "system*" },
	{ "system-sched", "system*" },
	{ "system-set-time", "system*" },
	{ "system-socket", "system*" },
	{ "system-suspend-resume", "system*" },
	{ "system-swap", "system*" },
	{ "user-preference*", "default" },
	{ "user-preference-read", "user-preference*" },
	{ "managed-preference-read", "user-preference-read" },
	{ "user-preference-write", "user-preference*" },
	{ "syscall-unix", "default" },
	{ "storage-class-map", "default" },
};

/* Names that libsandbox's SBPL prelude defines as aliases of operations
 * (0xbf00/simbple src/scm/sbpl_v1.scm, section ";;; Aliases"), limited to
 * the ones an emitter could plausibly write. */
static const struct {
	const char *alias, *op;
} aliases[] = {
	{ "process-exec", "process-exec*" },
	{ "file-unlink", "file-write-unlink" },
	{ "ipc-posix-sem", "ipc-posix-sem*" },
	{ "ipc-posix-shm", "ipc-posix-shm*" },
	{ "file-write-mount", "file-mount" },
	{ "file-write-unmount", "file-unmount" },
};

const struct sbpl_eval_op *sbpl_eval_op_table(size_t *n)
{
	*n = sizeof(ops) / sizeof(ops[0]);
	return ops;
}

const char *sbpl_eval_op_canonical(const char *name)
{
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(aliases[i].alias, name) == 0)
			return aliases[i].op;
	return name;
}

const struct sbpl_eval_op *sbpl_eval_op_find(const char *name)
{
	name = sbpl_eval_op_canonical(name);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(ops[i].name, name) == 0)
			return &ops[i];
	return NULL;
}
