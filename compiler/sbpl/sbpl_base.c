/*
 * sbpl_base.c - the vetted base rules of every SBPL profile cage emits.
 *
 * These are written right after the default rule and before the policy's
 * own rules, so a policy rule on the same operation always overrides them
 * (Seatbelt: last match wins per operation). Each group says why it is
 * here; docs/sbpl.md compares them, family by family, with the base
 * profiles of Codex, Gemini CLI and Anthropic's sandbox runtime, and lists
 * what those allow that we do not (IOKit, fonts, LaunchServices, the
 * keychain's securityd, ...) together with the reason.
 *
 * Rules here name only operations listed in the operation table
 * (../shared/sbpl-operations.tsv), so an evaluator that knows the table
 * knows every operation we use. Exec is not here: what may be executed is
 * the policy's decision (std/base grants the system roots).
 */
#include "sbpl.h"

/* Read by libc (uname, sysconf, getpagesize, gethostname), by language
 * runtimes sizing thread pools and probing CPU features (Go, Rust std,
 * Node/V8, Python os.cpu_count), and by ps-like process queries. */
const struct sbpl_sysctl sbpl_base_sysctls[] = {
	{ "hw.activecpu", false },
	{ "hw.byteorder", false },
	{ "hw.cachelinesize", false },
	{ "hw.cachelinesize_compat", false },
	{ "hw.cpufamily", false },
	{ "hw.cpufrequency", false },
	{ "hw.cpufrequency_compat", false },
	{ "hw.cputype", false },
	{ "hw.l1dcachesize", false },
	{ "hw.l1dcachesize_compat", false },
	{ "hw.l1icachesize", false },
	{ "hw.l1icachesize_compat", false },
	{ "hw.l2cachesize", false },
	{ "hw.l2cachesize_compat", false },
	{ "hw.l3cachesize", false },
	{ "hw.l3cachesize_compat", false },
	{ "hw.logicalcpu", false },
	{ "hw.logicalcpu_max", false },
	{ "hw.machine", false },
	{ "hw.memsize", false },
	{ "hw.model", false },
	{ "hw.ncpu", false },
	{ "hw.nperflevels", false },
	{ "hw.optional.", true },
	{ "hw.packages", false },
	{ "hw.pagesize", false },
	{ "hw.pagesize_compat", false },
	{ "hw.perflevel", true },
	{ "hw.physicalcpu", false },
	{ "hw.physicalcpu_max", false },
	{ "hw.tbfrequency", false },
	{ "hw.tbfrequency_compat", false },
	{ "hw.vectorunit", false },
	{ "kern.argmax", false },
	{ "kern.hostname", false },
	{ "kern.maxfiles", false },
	{ "kern.maxfilesperproc", false },
	{ "kern.maxproc", false },
	{ "kern.ngroups", false },
	{ "kern.osproductversion", false },
	{ "kern.osrelease", false },
	{ "kern.ostype", false },
	{ "kern.osvariant_status", false },
	{ "kern.osversion", false },
	{ "kern.proc.pgrp.", true },
	{ "kern.proc.pid.", true },
	{ "kern.secure_kernel", false },
	{ "kern.usrstack64", false },
	{ "kern.version", false },
	{ "machdep.cpu.", true },
	{ "sysctl.proc_cputype", false },
	{ "sysctl.proc_translated", false },
	{ "vm.loadavg", false },
};
const size_t sbpl_base_nsysctls = sizeof(sbpl_base_sysctls) / sizeof(sbpl_base_sysctls[0]);

/* Services libSystem itself talks to in ordinary command-line work. The
 * keychain (com.apple.SecurityServer, securityd), trustd, LaunchServices,
 * fonts and the window server are not here: a policy names them. */
const char *const sbpl_base_mach_services[] = {
	"com.apple.bsd.dirhelper",                    /* confstr(_CS_DARWIN_USER_TEMP_DIR): per-user TMPDIR */
	"com.apple.cfprefsd.agent",                   /* CFPreferences reads (user domain) */
	"com.apple.cfprefsd.daemon",                  /* CFPreferences reads (system domain) */
	"com.apple.logd",                             /* os_log from Apple libraries */
	"com.apple.system.logger",                    /* asl / syslog(3) */
	"com.apple.system.notification_center",      /* notify(3): time zone and other libc notifications */
	"com.apple.system.opendirectoryd.libinfo",    /* getpwuid/getgrnam: whoami, ~ expansion, git */
	"com.apple.system.opendirectoryd.membership", /* group membership checks (getgrouplist) */
};
const size_t sbpl_base_nmach_services =
	sizeof(sbpl_base_mach_services) / sizeof(sbpl_base_mach_services[0]);

static const char base_process[] =
	"; processes: fork freely; children inherit this profile. Signals and\n"
	"; process information only inside this sandbox. (What may be executed\n"
	"; is the policy's decision: process-exec* rules below.)\n"
	"(allow process-fork)\n"
	"(allow signal (target same-sandbox))\n"
	"(allow process-info* (target same-sandbox))\n"
	"\n";

static const char base_ipc[] =
	"; POSIX semaphores: Python multiprocessing's SemLock, OpenMP runtimes\n"
	"(allow ipc-posix-sem*)\n"
	"; libomp (numpy, PyTorch) registers itself in a named shared memory segment\n"
	"(allow ipc-posix-shm-read-data ipc-posix-shm-write-create ipc-posix-shm-write-unlink\n"
	"  (ipc-posix-name-regex \"^/__KMP_REGISTERED_LIB_[0-9]+$\"))\n"
	"; preferences: read-only, through cfprefsd and its shared memory\n"
	"(allow user-preference-read)\n"
	"(allow ipc-posix-shm-read-data (ipc-posix-name-prefix \"apple.cfprefs.\"))\n"
	"\n";

static const char base_devices[] =
	"; devices every shell and build needs; /dev/tty is the caller's own terminal\n"
	"(allow file-read-data file-read-metadata file-test-existence file-write-data file-ioctl\n"
	"  (literal \"/dev/null\")\n"
	"  (literal \"/dev/zero\")\n"
	"  (literal \"/dev/tty\")\n"
	"  (literal \"/dev/ptmx\")\n"
	"  (literal \"/dev/dtracehelper\")\n"
	")\n"
	"; other terminals: ioctl only (isatty, window size on inherited ones); read\n"
	"; and write only on ptys opened inside this sandbox, which carry the pty\n"
	"; extension - never another terminal's keystrokes\n"
	"(allow file-ioctl (regex \"^/dev/ttys[0-9]+$\"))\n"
	"(allow file-read-data file-read-metadata file-write-data\n"
	"  (require-all (regex \"^/dev/ttys[0-9]+$\") (extension \"com.apple.sandbox.pty\")))\n"
	"(allow file-read-data file-read-metadata file-test-existence\n"
	"  (literal \"/dev/random\")\n"
	"  (literal \"/dev/urandom\")\n"
	")\n"
	"; /dev/fd/N and /dev/std{in,out,err}: redirections and <(...) in shells\n"
	"(allow file-read-data file-read-metadata file-test-existence file-write-data\n"
	"  (subpath \"/dev/fd\")\n"
	"  (literal \"/dev/stdin\")\n"
	"  (literal \"/dev/stdout\")\n"
	"  (literal \"/dev/stderr\")\n"
	")\n"
	"; openpty(3): script, expect, terminal emulators inside agents\n"
	"(allow pseudo-tty)\n"
	"\n";

static const char base_links[] =
	"; Seatbelt sees resolved paths: rules below name /private/tmp, /private/var\n"
	"; and /private/etc. The links themselves (and the root) may be stat'ed so\n"
	"; that path resolution and realpath(3) work; their targets follow the policy.\n"
	"(allow file-read-metadata file-test-existence\n"
	"  (literal \"/tmp\")\n"
	"  (literal \"/var\")\n"
	"  (literal \"/etc\")\n"
	"  (literal \"/private\")\n"
	"  (literal \"/dev\")\n"
	")\n"
	"(allow file-read-data file-read-metadata file-test-existence (literal \"/\"))\n"
	"\n";

/* enforce and monitor: no egress but through the proxy (written after the
 * policy's rules); local servers for tests may listen on loopback. */
static const char base_net_caged[] =
	"; network: no egress except the rules below. Listening on loopback is\n"
	"; not egress (test servers); reaching it needs an allow connect \"localhost:PORT\".\n"
	"(allow network-bind (local ip \"localhost:*\"))\n"
	"(allow network-inbound (local ip \"localhost:*\"))\n"
	"\n";

/* enforce-fs: the network is open, so programs resolve names and check
 * certificates themselves. Unix sockets stay under the policy. */
static const char base_net_open[] =
	"; network open (mode enforce-fs): IP traffic in and out; unix sockets\n"
	"; still follow the policy. DNS, network configuration and TLS trust\n"
	"; evaluation go through these services.\n"
	"(allow network-outbound (remote ip \"*:*\"))\n"
	"(allow network-inbound (local ip \"*:*\"))\n"
	"(allow network-bind (local ip \"*:*\"))\n"
	"(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))\n"
	"(allow sysctl-read (sysctl-name-prefix \"net.routetable.\"))\n"
	"(allow mach-lookup\n"
	"  (global-name \"com.apple.SystemConfiguration.DNSConfiguration\")\n"
	"  (global-name \"com.apple.SystemConfiguration.configd\")\n"
	"  (global-name \"com.apple.mDNSResponder\")\n"
	"  (global-name \"com.apple.networkd\")\n"
	"  (global-name \"com.apple.trustd.agent\")\n"
	")\n"
	"\n";

void sbpl_put_base(struct sbpl_buf *b, enum ir_mode mode)
{
	sbpl_buf_puts(b, ";; ---- base rules (every profile; see docs/sbpl.md) ----\n\n");
	sbpl_buf_puts(b, base_process);

	sbpl_buf_puts(b, "; system information read by libc and language runtimes (vetted list)\n"
			 "(allow sysctl-read\n");
	for (size_t i = 0; i < sbpl_base_nsysctls; i++) {
		const struct sbpl_sysctl *s = &sbpl_base_sysctls[i];
		sbpl_buf_printf(b, "  (%s \"%s\")\n",
				s->prefix ? "sysctl-name-prefix" : "sysctl-name", s->name);
	}
	sbpl_buf_puts(b, ")\n\n");

	sbpl_buf_puts(b, "; Mach services libSystem uses (vetted list); any other only when the\n"
			 "; policy names it with `allow mach`\n"
			 "(allow mach-lookup\n");
	for (size_t i = 0; i < sbpl_base_nmach_services; i++)
		sbpl_buf_printf(b, "  (global-name \"%s\")\n", sbpl_base_mach_services[i]);
	sbpl_buf_puts(b, ")\n\n");

	sbpl_buf_puts(b, base_ipc);
	sbpl_buf_puts(b, base_devices);
	sbpl_buf_puts(b, base_links);
	sbpl_buf_puts(b, mode == IR_MODE_ENFORCE_FS ? base_net_open : base_net_caged);
}
