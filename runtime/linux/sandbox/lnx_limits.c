/*
 * lnx_limits.c - the policy's resource limits on Linux (see lnx_limits.h):
 * finding a cgroup this user may create children in, the rlimits the
 * command gets, and what the cgroup's events say at exit.
 */
#include "lnx_limits.h"
#include "runcommon.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The word `w` in the comma-separated list `list`. */
static bool has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !memcmp(p, w, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* The next line of `*p` into `line` (without its newline, cut to fit),
 * or false at the end. */
static bool next_line(const char **p, char *line, size_t n)
{
	if (!**p)
		return false;
	size_t len = strcspn(*p, "\n");
	size_t keep = len < n - 1 ? len : n - 1;
	memcpy(line, *p, keep);
	line[keep] = '\0';
	*p += len + ((*p)[len] == '\n');
	return true;
}

/* A /proc file's whole text (bounded), or NULL. Read once per launch:
 * the kernel builds mountinfo anew on every read. */
static char *slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 16384, len = 0;
	char *buf = malloc(cap);
	ssize_t n = 0;
	while (buf && (n = read(fd, buf + len, cap - 1 - len)) > 0) {
		len += (size_t)n;
		if (len == cap - 1) {
			char *bigger = cap < (1u << 22) ? realloc(buf, cap * 2) : NULL;
			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	close(fd);
	if (buf && n < 0) {
		free(buf);
		return NULL;
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

/* Field k (from 0) of the space-separated `s` into out (cut off at the
 * first space or the end): false when there is no such field or it does
 * not fit. sscanf cost 2,000 instructions a line here, and every launch
 * with a limit reads mountinfo for each controller. */
static bool field(const char *s, int k, char *out, size_t n)
{
	for (; k > 0 && *s; k--) {
		s += strcspn(s, " ");
		s += strspn(s, " ");
	}
	size_t len = strcspn(s, " ");
	if (!len || len >= n)
		return false;
	memcpy(out, s, len);
	out[len] = '\0';
	return true;
}

/* Where the hierarchy of `ctl` is mounted (v2: ctl NULL, the unified
 * one) and the root of that mount, from mountinfo's text: per line, the
 * root and the mount point are fields 3 and 4, and after " - " come the
 * type, the source and the super options. */
static bool find_mount(const char *mountinfo, const char *ctl, char *mnt, size_t mlen,
		       char *root, size_t rlen)
{
	char line[4096];
	bool found = false;
	const char *p = mountinfo;
	while (!found && next_line(&p, line, sizeof line)) {
		char *sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		/* A type and a source, or not a mount line; the options may be
		 * missing. */
		char fstype[64], src[1024], opts[1024];
		if (!field(sep + 3, 0, fstype, sizeof fstype) || !field(sep + 3, 1, src, sizeof src))
			continue;
		if (!field(sep + 3, 2, opts, sizeof opts))
			opts[0] = '\0';
		if (ctl ? strcmp(fstype, "cgroup") || !has_word(opts, ctl) : strcmp(fstype, "cgroup2"))
			continue;
		char r[1024], m[1024];
		if (!field(line, 3, r, sizeof r) || !field(line, 4, m, sizeof m) || strchr(m, '\\') ||
		    strchr(r, '\\'))
			continue; /* an escaped name: not a cgroup mount cagerun would use */
		found = strlen(m) < mlen && strlen(r) < rlen;
		if (found) {
			snprintf(mnt, mlen, "%s", m);
			snprintf(root, rlen, "%s", r);
		}
	}
	return found;
}

/* lnx_cgroup_dir on the files' text. */
static bool cgroup_dir_of(const char *mountinfo, const char *cgroup, const char *ctl, char *dir,
			  size_t len)
{
	char mnt[1024], root[1024];
	if (!find_mount(mountinfo, ctl, mnt, sizeof mnt, root, sizeof root))
		return false;
	char line[4096];
	bool found = false;
	const char *p = cgroup;
	while (!found && next_line(&p, line, sizeof line)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = *c2 = '\0';
		const char *ctls = c1 + 1, *path = c2 + 1;
		if (ctl ? !has_word(ctls, ctl) : (strcmp(line, "0") || *ctls))
			continue;
		/* Below the mount's root: a container's view starts there. */
		size_t rl = strcmp(root, "/") ? strlen(root) : 0;
		if (rl && (strncmp(path, root, rl) || (path[rl] && path[rl] != '/')))
			break;
		const char *rest = strcmp(path + rl, "/") ? path + rl : "";
		int n = snprintf(dir, len, "%s%s", mnt, rest);
		found = n > 0 && (size_t)n < len;
	}
	return found;
}

bool lnx_cgroup_dir(const char *mountinfo, const char *cgroup, const char *ctl, char *dir,
		    size_t len)
{
	char *mi = slurp(mountinfo), *cg = mi ? slurp(cgroup) : NULL;
	bool found = cg && cgroup_dir_of(mi, cg, ctl, dir, len);
	free(mi);
	free(cg);
	return found;
}

static bool file_exists(const char *dir, const char *name)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static bool write_value(const char *dir, const char *name, uint64_t v, char *err, size_t errlen)
{
	char p[4200], text[32];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	int n = snprintf(text, sizeof text, "%" PRIu64 "\n", v);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	bool ok = fd >= 0 && write(fd, text, (size_t)n) == n;
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (!ok)
		snprintf(err, errlen, "cannot write %s: %s", p, strerror(e));
	return ok;
}

/* The run's cgroup `dir`, made. One left by a cagerun that was killed,
 * whose pid we now have, goes first if it is empty (a cgroup with
 * processes cannot be removed). */
static bool make_dir(const char *dir)
{
	return mkdir(dir, 0755) == 0 || (errno == EEXIST && rmdir(dir) == 0 && mkdir(dir, 0755) == 0);
}

/* `base`/cage-run.PID, this run's cgroup under base (malloc'd), or NULL. */
static char *child_path(const char *base)
{
	size_t n = strlen(base) + 64;
	char *child = malloc(n);
	if (child)
		snprintf(child, n, "%s/cage-run.%d", base, (int)getpid());
	return child;
}

/* A child cgroup for this run under `base`, or NULL when we may not
 * create one there. */
static char *make_child(const char *base)
{
	char *child = child_path(base);
	if (child && !make_dir(child)) {
		free(child);
		return NULL;
	}
	return child;
}

/* lnx_limits_sweep in the parent of `dir` (this run's cgroup there). */
static int sweep_beside(const char *dir)
{
	char parent[4096];
	int n = snprintf(parent, sizeof parent, "%s", dir);
	char *slash = strrchr(parent, '/');
	if (n <= 0 || (size_t)n >= sizeof parent || !slash || slash == parent)
		return 0;
	*slash = '\0';
	DIR *d = opendir(parent);
	if (!d)
		return 0;
	const time_t now = time(NULL);
	int removed = 0;
	for (struct dirent *e; removed < 32 && (e = readdir(d));) {
		if (strncmp(e->d_name, "cage-run.", 9))
			continue;
		char *end;
		long pid = strtol(e->d_name + 9, &end, 10);
		if (end == e->d_name + 9 || *end || pid <= 0 || pid > INT_MAX || pid == getpid())
			continue;
		struct stat st;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(st.st_mode) || st.st_ctime > now - LNX_LIMITS_SWEEP_AGE)
			continue;
		if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

int lnx_limits_sweep(const struct lnx_limits *l)
{
	return (l->cg_dir ? sweep_beside(l->cg_dir) : 0) + (l->mem_dir ? sweep_beside(l->mem_dir) : 0);
}

static void remove_child(char *dir)
{
	/* The last processes may still be leaving: a few tries, 10 ms apart. */
	for (int i = 0; i < 50 && rmdir(dir) != 0 && errno == EBUSY; i++)
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	free(dir);
}

/* Whether a v2 child of `base` would have a wanted controller: `base`
 * enables it for its children in cgroup.subtree_control. Read first, so
 * that a hierarchy without them (the unified mount of a host whose
 * controllers sit in v1) costs a read, not a mkdir and an rmdir. */
static bool v2_enables(const char *base, bool want_pids, bool want_mem)
{
	char p[4200], line[512] = "";
	snprintf(p, sizeof p, "%s/cgroup.subtree_control", base);
	FILE *f = fopen(p, "re");
	if (!f)
		return false;
	bool got = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	for (char *w = strtok(line, " "); got && w; w = strtok(NULL, " "))
		if ((want_pids && !strcmp(w, "pids")) || (want_mem && !strcmp(w, "memory")))
			return true;
	return false;
}

/* A child under `base` that bounds what is asked for (pids, memory; what
 * it has is set in *pids, *memory), or NULL. */
static char *child_with(const char *base, bool want_pids, bool want_mem, bool *pids, bool *memory)
{
	char *c = make_child(base);
	if (!c)
		return NULL;
	*pids = want_pids && file_exists(c, "pids.max");
	*memory = want_mem && file_exists(c, "memory.max");
	if (*pids || *memory)
		return c;
	remove_child(c);
	return NULL;
}

/* A v1 hierarchy's cgroup of ours, `own`, under which this run's is to
 * be made after the clone (lnx_limits_make): its path in *dir and own
 * open O_PATH in *parent. False, with neither set, when this user may not
 * make one there (only root may, where nothing was delegated) or own
 * cannot be opened. */
static bool v1_later(struct lnx_limits *l, const char *own, char **dir, int *parent)
{
	if (access(own, W_OK | X_OK) != 0)
		return false;
	char *d = child_path(own);
	int fd = d ? open(own, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	if (fd < 0) {
		free(d);
		return false;
	}
	snprintf(l->child, sizeof l->child, "%s", strrchr(d, '/') + 1);
	*dir = d;
	*parent = fd;
	return true;
}

bool lnx_limits_prepare(struct lnx_limits *l, const struct ir_profile *p,
			const struct rlimit *nofile_start, char *err, size_t errlen)
{
	memset(l, 0, sizeof *l);
	l->prof = p;
	l->cg_join = -1;
	l->cg_into = -1;
	l->cg_parent = -1;
	l->mem_parent = -1;
	const struct ir_limit *procs = &p->limits[IR_LIM_PROCESSES], *mem = &p->limits[IR_LIM_MEMORY];
	run_nofile_for(p, nofile_start, &l->nofile);
	if (p->limits[IR_LIM_TMP].set) {
		l->tmp_bytes = p->limits[IR_LIM_TMP].value;
		ir_limit_display(&p->limits[IR_LIM_TMP], false, l->tmp_text, sizeof l->tmp_text);
	}
	char own[4096], top[4096], rootdir[1024];
	char *mi = NULL, *cg = NULL;
	if (procs->set || mem->set) {
		mi = slurp("/proc/self/mountinfo");
		cg = mi ? slurp("/proc/self/cgroup") : NULL;
	}
	if (cg && cgroup_dir_of(mi, cg, NULL, own, sizeof own)) {
		/* cgroup v2 first: the memory controller lives only there. Our
		 * own cgroup when it delegates the controllers; for root, else
		 * the hierarchy's root cgroup, which (exempt from the rule that
		 * a cgroup with processes has no controllers for its children)
		 * usually has them enabled. */
		if (v2_enables(own, procs->set, mem->set))
			l->cg_dir = child_with(own, procs->set, mem->set, &l->cg_pids, &l->cg_memory);
		if (!l->cg_dir && getuid() == 0 &&
		    find_mount(mi, NULL, top, sizeof top, rootdir, sizeof rootdir) &&
		    strcmp(top, own) != 0 && v2_enables(top, procs->set, mem->set))
			l->cg_dir = child_with(top, procs->set, mem->set, &l->cg_pids, &l->cg_memory);
	}
	/* v1: the sandbox's init writes "0" to `tasks` itself, which moves
	 * its one thread and skips the global lock a move by pid takes (see
	 * lnx_limits.h). In practice only root may make cgroups there. */
	if (!l->cg_dir && procs->set && cg && cgroup_dir_of(mi, cg, "pids", own, sizeof own))
		l->cg_pids = v1_later(l, own, &l->cg_dir, &l->cg_parent);
	if (mem->set && !l->cg_memory && cg && cgroup_dir_of(mi, cg, "memory", own, sizeof own))
		(void)v1_later(l, own, &l->mem_dir, &l->mem_parent);
	free(mi);
	free(cg);
	if (l->cg_dir && l->cg_parent < 0) {
		/* v2 has no such door into a domain cgroup (a thread move there
		 * must stay in its domain): init is cloned into it, and where
		 * that is refused the parent writes init's pid to
		 * cgroup.procs. */
		char join_path[4200];
		snprintf(join_path, sizeof join_path, "%s/cgroup.procs", l->cg_dir);
		if ((l->cg_pids && !write_value(l->cg_dir, "pids.max", procs->value, err, errlen)) ||
		    (l->cg_memory && !write_value(l->cg_dir, "memory.max", mem->value, err, errlen)))
			return false;
		l->cg_join = open(join_path, O_WRONLY | O_CLOEXEC);
		if (l->cg_join < 0) {
			snprintf(err, errlen, "cannot open %s: %s", join_path, strerror(errno));
			return false;
		}
		if ((l->cg_into = open(l->cg_dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
			snprintf(err, errlen, "cannot open %s: %s", l->cg_dir, strerror(errno));
			return false;
		}
	}
	if (procs->set && !l->cg_pids) {
		/* The kernel exempts the global root user from RLIMIT_NPROC,
		 * whatever the namespace (kernel/fork.c, copy_process). */
		if (getuid() == 0)
			l->why[IR_LIM_PROCESSES] = "root is exempt from RLIMIT_NPROC and no pids cgroup "
						   "can be created";
		else
			l->nproc = (rlim_t)procs->value;
	}
	if (mem->set && !l->cg_memory && !l->mem_dir)
		l->why[IR_LIM_MEMORY] = "cgroup v2's memory controller is not delegated to this "
					"user and cgroup v1's needs root";
	return true;
}

/* The v1 cgroup *dirp made, with `file` in it (what shows it bounds what
 * it should), and `file` (and `also`, where the kernel has it) set to v. */
static bool make_v1(char **dirp, const char *file, const char *also, uint64_t v, char *err,
		    size_t errlen)
{
	const char *dir = *dirp;
	if (!make_dir(dir)) {
		snprintf(err, errlen, "cannot create the cgroup %s: %s", dir, strerror(errno));
		free(*dirp); /* not ours to remove */
		*dirp = NULL;
		return false;
	}
	if (!file_exists(dir, file)) {
		snprintf(err, errlen, "the cgroup %s has no %s", dir, file);
		return false;
	}
	/* The plain memory limit first: the kernel refuses a memsw limit
	 * below it. */
	return write_value(dir, file, v, err, errlen) &&
	       (!also || !file_exists(dir, also) || write_value(dir, also, v, err, errlen));
}

bool lnx_limits_make(struct lnx_limits *l, char *err, size_t errlen)
{
	if (!lnx_limits_later(l) || l->made)
		return true;
	/* Removed at the end from here on, whatever is made of them. */
	l->made = true;
	const struct ir_limit *lim = l->prof->limits;
	/* Where the kernel accounts swap (memory.memsw.*), RAM plus swap is
	 * bounded by the same value, so that swapping does not extend it. */
	return (l->cg_parent < 0 ||
		make_v1(&l->cg_dir, "pids.max", NULL, lim[IR_LIM_PROCESSES].value, err, errlen)) &&
	       (l->mem_parent < 0 || make_v1(&l->mem_dir, "memory.limit_in_bytes",
					     "memory.memsw.limit_in_bytes", lim[IR_LIM_MEMORY].value,
					     err, errlen));
}

/* "KEY N" from a cgroup's events file, 0 when absent. */
static uint64_t event_count(const char *dir, const char *file, const char *key)
{
	char p[4200], line[256];
	snprintf(p, sizeof p, "%s/%s", dir, file);
	FILE *f = fopen(p, "re");
	uint64_t n = 0;
	size_t kl = strlen(key);
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, kl) && line[kl] == ' ')
			n = strtoull(line + kl + 1, NULL, 10);
	if (f)
		fclose(f);
	return n;
}

void lnx_limits_joins(const struct lnx_limits *l, struct lnx_cgroup_joins *j)
{
	*j = (struct lnx_cgroup_joins){ 0 };
	if (l->cg_parent >= 0)
		j->later[j->nlater++] = l->cg_parent;
	if (l->mem_parent >= 0)
		j->later[j->nlater++] = l->mem_parent;
	if (j->nlater > 0)
		j->child = l->child;
	if (l->cg_join >= 0)
		j->by_pid[j->nby_pid++] = l->cg_join;
	if (l->cg_into >= 0) {
		j->has_into = true;
		j->into = l->cg_into;
	}
	assert(j->nlater <= LNX_CGROUP_JOINS_MAX && j->nby_pid <= LNX_CGROUP_JOINS_MAX);
	assert(j->nlater == 0 || l->child[0]);
	/* Where clone3 is refused, the move by pid is what keeps init from
	 * running outside the cgroup. */
	assert(!j->has_into || j->nby_pid > 0);
}

/* The memory cgroup's OOM kills, from `file` in `dir`: v2's memory.events,
 * or v1's memory.oom_control (Linux 4.13 and later); both say "oom_kill N". */
static void report_memory(const struct lnx_limits *l, const char *dir, const char *file,
			  FILE *out)
{
	char v[64];
	uint64_t n = event_count(dir, file, "oom_kill");
	if (n == 0)
		return;
	ir_limit_display(&l->prof->limits[IR_LIM_MEMORY], false, v, sizeof v);
	fprintf(out, "cagerun: limit memory %s was reached: %" PRIu64 " process%s killed "
		     "for memory\n", v, n, n == 1 ? "" : "es");
}

void lnx_limits_report(const struct lnx_limits *l, FILE *out)
{
	if (l->mem_dir)
		report_memory(l, l->mem_dir, "memory.oom_control", out);
	if (!l->cg_dir)
		return;
	char v[64];
	uint64_t n;
	if (l->cg_pids && (n = event_count(l->cg_dir, "pids.events", "max")) > 0) {
		ir_limit_display(&l->prof->limits[IR_LIM_PROCESSES], false, v, sizeof v);
		fprintf(out, "cagerun: limit processes %s was reached: %" PRIu64 " fork%s failed "
			     "(EAGAIN)\n", v, n, n == 1 ? "" : "s");
	}
	if (l->cg_memory)
		report_memory(l, l->cg_dir, "memory.events", out);
}

/* dir removed, if this run made it, and forgotten; parent closed. */
static void drop_child(char **dir, int *parent, bool made)
{
	if (*parent >= 0)
		close(*parent);
	*parent = -1;
	if (*dir && made)
		remove_child(*dir);
	else
		free(*dir);
	*dir = NULL;
}

void lnx_limits_free(struct lnx_limits *l)
{
	if (l->cg_into >= 0)
		close(l->cg_into);
	l->cg_into = -1;
	if (l->cg_join >= 0)
		close(l->cg_join);
	l->cg_join = -1;
	/* A v1 cgroup is this run's once lnx_limits_make ran; a v2 one from
	 * the start. */
	bool v2 = l->cg_parent < 0;
	drop_child(&l->cg_dir, &l->cg_parent, v2 || l->made);
	drop_child(&l->mem_dir, &l->mem_parent, l->made);
}

bool lnx_limits_join_later(int parent, const char *child, char *err, size_t errlen)
{
	char p[64];
	snprintf(p, sizeof p, "%s/tasks", child);
	int fd = openat(parent, p, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	bool ok = fd >= 0 && write(fd, "0\n", 2) == 2;
	int e = errno;
	if (fd >= 0)
		close(fd);
	close(parent);
	if (!ok)
		snprintf(err, errlen, "cannot move the sandbox into its cgroup: %s", strerror(e));
	return ok;
}

bool lnx_limits_apply_rlimits(rlim_t nproc, const struct rlimit *nofile, char *err, size_t errlen)
{
	if (setrlimit(RLIMIT_NOFILE, nofile) != 0) {
		snprintf(err, errlen, "cannot set the open-file limit to %llu: %s",
			 (unsigned long long)nofile->rlim_cur, strerror(errno));
		return false;
	}
	if (nproc) {
		struct rlimit cur, rl = { nproc, nproc };
		/* Never above the hard limit the user has: it cannot be raised. */
		if (getrlimit(RLIMIT_NPROC, &cur) == 0 && cur.rlim_max != RLIM_INFINITY &&
		    cur.rlim_max < nproc)
			rl.rlim_cur = rl.rlim_max = cur.rlim_max;
		if (setrlimit(RLIMIT_NPROC, &rl) != 0) {
			snprintf(err, errlen, "cannot set the process limit to %llu: %s",
				 (unsigned long long)nproc, strerror(errno));
			return false;
		}
	}
	return true;
}
