/*
 * gs_find.c - git directories and configured paths (gs_find.h).
 *
 *   workspace and each writable root: DIR/.git (a directory, or a file
 *   that points elsewhere), or DIR itself a bare repository; else the
 *   repository the workspace lies in (the nearest .git above it)
 *   -> the workspace, breadth first, GS_SCAN_DEPTH levels and at most
 *   GS_SCAN_ENTRIES entries, symlinks never followed, .git never entered:
 *   nested repositories (a `.git` entry, or a bare repository's layout)
 *   -> for each repository: its common directory (`commondir`), its
 *   linked worktrees (`worktrees/NAME/gitdir` names the worktree's .git
 *   file), its submodules' git directories under `modules/` at any depth
 *   -> the configuration git reads for each (system, global, the
 *   repository's config and config.worktree, includes), and every path a
 *   setting there names (gs_cfg_paths below).
 *
 * Breadth first so that a huge tree deep down (node_modules) uses up the
 * budget only after every shallower directory was looked at; nothing is
 * skipped by name.
 */
#include "gs_find.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gs_cmd.h"
#include "gs_config.h"
#include "gs_keep.h"
#include "path.h"

struct repo {
	const char *gitdir, *common, *top;
};

struct find {
	const struct gs_find_in *in;
	struct gs_result *res;
	size_t cap;
	struct repo repos[GS_MAX_REPOS];
	size_t nrepos;
	bool repos_full;
	char *err;
	size_t errlen;
};

static const char *norm(struct find *f, const char *p)
{
	char *out;
	const char *perr;
	if (!path_normalize(f->in->a, p, strlen(p), &out, &perr))
		return NULL;
	return out;
}

static const char *join(struct find *f, const char *dir, const char *rel)
{
	if (rel[0] == '/')
		return norm(f, rel);
	return norm(f, arena_printf(f->in->a, "%s/%s", dir, rel));
}

static void add_item(struct find *f, enum gs_kind k, const char *path, bool subtree,
		     const char *why)
{
	struct gs_result *r = f->res;
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].kind == k && r->v[i].subtree == subtree && !strcmp(r->v[i].path, path))
			return;
	if (r->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 32;
		struct gs_item *v = realloc(r->v, cap * sizeof *v);
		if (!v)
			abort(); /* as the arena does on exhaustion */
		r->v = v;
		f->cap = cap;
	}
	r->v[r->n++] = (struct gs_item){ k, (char *)path, subtree,
					 arena_strdup(f->in->a, why) };
}

static bool is_dir(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

/* A small file's first line (to 4095 bytes), trailing CR/LF cut; NULL
 * when it cannot be read. */
static char *first_line(struct find *f, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	size_t l = strlen(buf);
	while (l && (buf[l - 1] == '\r' || buf[l - 1] == ' ' || buf[l - 1] == '\t'))
		buf[--l] = '\0';
	return arena_strdup(f->in->a, buf);
}

/* As git's is_git_directory: HEAD, and objects/ and refs/ or a commondir. */
static bool is_gitdir(struct find *f, const char *d)
{
	struct arena *a = f->in->a;
	if (!exists(arena_printf(a, "%s/HEAD", d)))
		return false;
	if (exists(arena_printf(a, "%s/commondir", d)))
		return true;
	return is_dir(arena_printf(a, "%s/objects", d)) && is_dir(arena_printf(a, "%s/refs", d));
}

static void add_repo(struct find *f, const char *gitdir, const char *top, const char *why)
{
	for (size_t i = 0; i < f->nrepos; i++)
		if (!strcmp(f->repos[i].gitdir, gitdir))
			return;
	if (f->nrepos == GS_MAX_REPOS) {
		f->repos_full = true;
		return;
	}
	const char *common = gitdir;
	char *cd = first_line(f, arena_printf(f->in->a, "%s/commondir", gitdir));
	if (cd && *cd) {
		const char *c = join(f, gitdir, cd);
		if (c)
			common = c;
	}
	f->repos[f->nrepos++] = (struct repo){ gitdir, common, top };
	add_item(f, GS_GITDIR, gitdir, false, why);
	if (strcmp(common, gitdir))
		add_item(f, GS_GITDIR, common, false,
			 arena_printf(f->in->a, "the common directory of %s", gitdir));
}

/* DIR/.git, or DIR a bare repository. */
static void probe(struct find *f, const char *dir, const char *what)
{
	struct arena *a = f->in->a;
	const char *dg = join(f, dir, ".git");
	struct stat st;
	if (dg && lstat(dg, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			if (is_gitdir(f, dg))
				add_repo(f, dg, dir, arena_printf(a, "%s %s", what, dir));
			return;
		}
		/* A file (or link) that points git elsewhere: the pointer itself
		 * is protected, and what it points at is a git directory. */
		add_item(f, GS_GITFILE, dg, false, arena_printf(a, "the .git file of %s", dir));
		char *line = S_ISREG(st.st_mode) ? first_line(f, dg) : NULL;
		const char *g = NULL;
		if (line && !strncmp(line, "gitdir: ", 8))
			g = join(f, dir, line + 8);
		else if (S_ISLNK(st.st_mode) && stat(dg, &st) == 0 && S_ISDIR(st.st_mode))
			g = dg;
		if (g && is_gitdir(f, g))
			add_repo(f, g, dir, arena_printf(a, "the git directory %s/.git points at", dir));
		return;
	}
	if (is_gitdir(f, dir))
		add_repo(f, norm(f, dir), dir, arena_printf(a, "%s %s (a bare repository)", what, dir));
}

static long long now_ms(void)
{
	struct timespec t;
	if (clock_gettime(CLOCK_MONOTONIC, &t) != 0)
		return 0;
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static const char *walk_note(struct arena *a, const char *what, size_t ndirs)
{
	return arena_printf(a, "%s (%zu director%s listed)", what, ndirs, ndirs == 1 ? "y" : "ies");
}

static int relevant_cmp(const void *x, const void *y)
{
	const char *const *a = x, *const *b = y;
	return strcmp(*a + 1, *b + 1);
}

/* Whether dir still holds the relevant entries `was` recorded
 * (gs_walk_relevant; pf_list_read sorts by name, as the record is); its
 * count of entries now in *count. False when it cannot be read, holds
 * more than the walk's bound or does not say an entry's type. */
static bool same_relevant(struct arena *a, const char *dir, const struct gs_entries *was,
			  size_t *count)
{
	struct pf_listing l;
	if (pf_list_read(a, dir, &l) != 1 || l.n > GS_SCAN_ENTRIES)
		return false;
	size_t k = 0;
	for (size_t i = 0; i < l.n; i++) {
		if (l.types[i] == DT_UNKNOWN)
			return false;
		bool is_dir = l.types[i] == DT_DIR;
		if (!gs_walk_relevant(l.names[i], is_dir))
			continue;
		if (k == was->n || was->is_dir[k] != is_dir || strcmp(was->names[k], l.names[i]))
			return false;
		k++;
	}
	*count = l.n;
	return k == was->n;
}

/* The kept walk of ws, when every directory it listed is as it was: its
 * probes are made again (they read what may have changed inside a
 * repository), its counts taken over. */
static bool scan_reuse(struct find *f, const char *ws, char name[48])
{
	struct arena *a = f->in->a;
	const uint8_t *b;
	size_t n;
	struct gs_walk w;
	if (!f->in->keep->load(f->in->keep->ctx, a, name, &b, &n)) {
		f->res->walk_note = "none kept";
		return false;
	}
	if (!gs_keep_read(a, b, n, &w) || strcmp(w.workspace, ws)) {
		f->res->walk_note = "the kept record is not a walk of this workspace";
		return false;
	}
	size_t scanned = w.scanned;
	for (size_t i = 0; i < w.ndirs; i++) {
		struct pf_dep now;
		pf_observe(a, PF_DEP_LIST, w.dirs[i].path, &now, NULL);
		if (pf_dep_same(&w.dirs[i], &now))
			continue;
		size_t count;
		if (now.err || w.dirs[i].err || now.dev != w.dirs[i].dev || now.ino != w.dirs[i].ino ||
		    now.mode != w.dirs[i].mode || !same_relevant(a, w.dirs[i].path, &w.ents[i], &count) ||
		    (count != w.ents[i].count && w.truncated)) {
			f->res->walk_note = arena_printf(a, "%s changed", w.dirs[i].path);
			return false;
		}
		/* Only files came or went: the walk is the same but for its
		 * count, which must stay within the bound it was kept under. */
		scanned = scanned - w.ents[i].count + count;
		if (scanned > GS_SCAN_ENTRIES) {
			f->res->walk_note = arena_printf(a, "%s grew past the bound", w.dirs[i].path);
			return false;
		}
	}
	for (size_t i = 0; i < w.nhits; i++)
		probe(f, w.hits[i], "a repository nested in the workspace at");
	f->res->scanned = scanned;
	f->res->truncated |= w.truncated;
	f->res->walk_note = walk_note(a, "reused", w.ndirs);
	return true;
}

/* Breadth-first scan of the workspace for nested repositories; it also
 * stops after GS_SCAN_MS (a slow network filesystem). With a keep, each
 * directory is observed before it is read, and the walk is kept when
 * nothing makes its record unreliable (gs_keep.h). */
static void scan(struct find *f, const char *ws)
{
	const struct gs_keep *keep = f->in->keep;
	char name[48];
	if (keep) {
		gs_keep_name(ws, name);
		if (scan_reuse(f, ws, name))
			return;
	}
	struct gs_walk rec = { .workspace = ws };
	size_t dcap = 0, hcap = 0;
	const char *unkept = NULL;
	long long deadline = now_ms() + GS_SCAN_MS;
	struct q {
		const char *path;
		unsigned depth;
	};
	size_t qcap = 256, qh = 0, qt = 0;
	struct q *q = malloc(qcap * sizeof *q);
	if (!q)
		abort();
	q[qt++] = (struct q){ ws, 0 };
	while (qh < qt) {
		struct q cur = q[qh++];
		struct pf_dep *dep = NULL;
		struct gs_entries *ents = NULL;
		struct stat seen;
		if (keep) {
			/* Observed first: whatever changes in it after this moves
			 * its times past the record. */
			if (rec.ndirs == dcap) {
				dcap = dcap ? dcap * 2 : 64;
				rec.dirs = arena_grow(f->in->a, rec.dirs, rec.ndirs, dcap, sizeof *rec.dirs);
				rec.ents = arena_grow(f->in->a, rec.ents, rec.ndirs, dcap, sizeof *rec.ents);
			}
			dep = &rec.dirs[rec.ndirs];
			ents = &rec.ents[rec.ndirs++];
			memset(ents, 0, sizeof *ents);
			pf_observe(f->in->a, PF_DEP_LIST, cur.path, dep, &seen);
			dep->path = cur.path;
		}
		DIR *d = opendir(cur.path);
		if (!d)
			continue;
		struct dirent *e;
		bool head = false, objects = false, refs = false, dotgit = false;
		size_t nrel = 0, relcap = 0;
		char **rel = NULL;
		while ((e = readdir(d))) {
			const char *n = e->d_name;
			if (!strcmp(n, ".") || !strcmp(n, ".."))
				continue;
			if (ents) {
				ents->count++;
				if (gs_walk_relevant(n, e->d_type == DT_DIR)) {
					if (nrel == relcap) {
						relcap = relcap ? relcap * 2 : 16;
						char **nr = realloc(rel, relcap * sizeof *rel);
						if (!nr)
							abort();
						rel = nr;
					}
					rel[nrel++] = arena_printf(f->in->a, "%c%s",
								   e->d_type == DT_DIR ? 'D' : 'F', n);
				}
			}
			if (++f->res->scanned > GS_SCAN_ENTRIES) {
				f->res->truncated = true;
				break;
			}
			if ((f->res->scanned & 255) == 0 && now_ms() > deadline) {
				f->res->truncated = true;
				unkept = "the time bound stopped it";
				break;
			}
			if (!strcmp(n, ".git")) {
				dotgit = true;
				continue; /* never entered */
			}
			head |= !strcmp(n, "HEAD");
			objects |= !strcmp(n, "objects");
			refs |= !strcmp(n, "refs");
			/* Most entries are files: their names are never joined. */
			if ((e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) ||
			    cur.depth + 1 > GS_SCAN_DEPTH)
				continue;
			const char *p = arena_printf(f->in->a, "%s/%s", cur.path, n);
			if (e->d_type == DT_UNKNOWN) {
				unkept = "the filesystem does not say which entries are directories";
				if (!is_dir(p))
					continue;
			}
			if (qt == qcap) {
				/* Consumed slots first, then grow. */
				if (qh > 0) {
					memmove(q, q + qh, (qt - qh) * sizeof *q);
					qt -= qh;
					qh = 0;
				} else {
					qcap *= 2;
					struct q *nq = realloc(q, qcap * sizeof *nq);
					if (!nq)
						abort();
					q = nq;
				}
			}
			q[qt++] = (struct q){ p, cur.depth + 1 };
		}
		closedir(d);
		if (ents) {
			if (nrel > 1)
				qsort(rel, nrel, sizeof *rel, relevant_cmp);
			ents->names = arena_alloc(f->in->a, (nrel ? nrel : 1) * sizeof *ents->names);
			ents->is_dir = arena_alloc(f->in->a, nrel ? nrel : 1);
			for (size_t i = 0; i < nrel; i++) {
				ents->is_dir[i] = rel[i][0] == 'D';
				ents->names[i] = rel[i] + 1;
			}
			ents->n = nrel;
			free(rel);
			/* Times a later change could leave as they are (within the
			 * same tick of the filesystem's clock: the directory changed
			 * just now, or while it was read) are not recorded: its
			 * entries are read again on every launch. */
			if (!dep->err && pf_listing_racy(cur.path, &seen))
				dep->mtime_s = dep->mtime_ns = dep->ctime_s = dep->ctime_ns = 0;
		}
		if (cur.depth > 0 && (dotgit || (head && objects && refs))) {
			if (keep) {
				if (rec.nhits == hcap) {
					hcap = hcap ? hcap * 2 : 16;
					rec.hits = arena_grow(f->in->a, rec.hits, rec.nhits, hcap,
							      sizeof *rec.hits);
				}
				rec.hits[rec.nhits++] = cur.path;
			}
			probe(f, cur.path, "a repository nested in the workspace at");
		}
		if (f->res->truncated)
			break;
	}
	free(q);
	if (!keep)
		return;
	if (unkept) {
		f->res->walk_note = arena_printf(f->in->a, "not kept: %s", unkept);
		return;
	}
	rec.scanned = f->res->scanned;
	rec.truncated = f->res->truncated;
	uint8_t *bytes;
	size_t len;
	gs_keep_write(f->in->a, &rec, &bytes, &len);
	keep->store(keep->ctx, name, bytes, len);
	f->res->walk_note = walk_note(f->in->a, "kept", rec.ndirs);
}

/* Submodules' git directories: below modules/, at any depth (a name may
 * hold '/'), each one's own modules/ too. */
static void modules(struct find *f, const char *dir, unsigned depth, size_t *visited)
{
	if (depth > 16)
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (++*visited > GS_MAX_MODULES) {
			f->res->truncated = true;
			break;
		}
		const char *p = arena_printf(f->in->a, "%s/%s", dir, e->d_name);
		if (!is_dir(p))
			continue;
		if (is_gitdir(f, p)) {
			/* Its work tree is where core.worktree says; until read,
			 * relative settings resolve against the git directory. */
			add_repo(f, p, p, "a submodule's git directory");
			modules(f, arena_printf(f->in->a, "%s/modules", p), depth + 1, visited);
		} else {
			modules(f, p, depth + 1, visited);
		}
	}
	closedir(d);
}

/* Each linked worktree's .git file, as the worktree's gitdir file names it. */
static void worktrees(struct find *f, const struct repo *r)
{
	const char *wd = arena_printf(f->in->a, "%s/worktrees", r->common);
	DIR *d = opendir(wd);
	if (!d)
		return;
	struct dirent *e;
	size_t k = 0;
	while ((e = readdir(d)) && k < GS_MAX_WORKTREES) {
		if (e->d_name[0] == '.')
			continue;
		k++;
		const char *admin = arena_printf(f->in->a, "%s/%s", wd, e->d_name);
		char *gf = first_line(f, arena_printf(f->in->a, "%s/gitdir", admin));
		const char *p = gf && *gf ? join(f, admin, gf) : NULL;
		if (p)
			add_item(f, GS_GITFILE, p, false,
				 arena_printf(f->in->a, "the .git file of a linked worktree of %s",
					      r->common));
	}
	if (k == GS_MAX_WORKTREES)
		f->res->truncated = true;
	closedir(d);
}

/* ---- what the configuration names ---- */

enum key_class { K_NONE, K_INCLUDE, K_HOOKS, K_FSMONITOR, K_CMD, K_BANG, K_WORKTREE };

/* Settings whose value git runs as a command (or execs as a program).
 * "*" in the middle: any subsection, or none. */
static const struct {
	const char *section, *name;
	bool sub; /* a subsection is expected (any) */
	enum key_class k;
} keys[] = {
	{ "include", "path", false, K_INCLUDE },
	{ "includeif", "path", true, K_INCLUDE },
	{ "core", "hookspath", false, K_HOOKS },
	{ "core", "fsmonitor", false, K_FSMONITOR },
	{ "core", "worktree", false, K_WORKTREE },
	{ "core", "sshcommand", false, K_CMD },
	{ "core", "pager", false, K_CMD },
	{ "core", "editor", false, K_CMD },
	{ "core", "askpass", false, K_CMD },
	{ "core", "gitproxy", false, K_CMD },
	{ "sequence", "editor", false, K_CMD },
	{ "gpg", "program", false, K_CMD },
	{ "gpg", "program", true, K_CMD },
	{ "gpg", "defaultkeycommand", true, K_CMD },
	{ "credential", "helper", false, K_CMD },
	{ "credential", "helper", true, K_CMD },
	{ "diff", "external", false, K_CMD },
	{ "diff", "textconv", true, K_CMD },
	{ "diff", "command", true, K_CMD },
	{ "merge", "driver", true, K_CMD },
	{ "filter", "clean", true, K_CMD },
	{ "filter", "smudge", true, K_CMD },
	{ "filter", "process", true, K_CMD },
	{ "difftool", "cmd", true, K_CMD },
	{ "difftool", "path", true, K_CMD },
	{ "mergetool", "cmd", true, K_CMD },
	{ "mergetool", "path", true, K_CMD },
	{ "interactive", "difffilter", false, K_CMD },
	{ "sendemail", "sendmailcmd", false, K_CMD },
	{ "sendemail", "smtpserver", false, K_CMD },
	{ "sendemail", "tocmd", false, K_CMD },
	{ "sendemail", "cccmd", false, K_CMD },
	{ "browser", "cmd", true, K_CMD },
	{ "browser", "path", true, K_CMD },
	{ "man", "cmd", true, K_CMD },
	{ "man", "path", true, K_CMD },
	{ "remote", "uploadpack", true, K_CMD },
	{ "remote", "receivepack", true, K_CMD },
	{ "uploadpack", "packobjectshook", false, K_CMD },
	{ "hook", "command", true, K_CMD },
	{ "alias", "*", false, K_BANG },
	{ "submodule", "update", true, K_BANG },
};

static enum key_class classify(const char *key)
{
	const char *dot = strchr(key, '.');
	const char *last = strrchr(key, '.');
	if (!dot)
		return K_NONE;
	size_t slen = (size_t)(dot - key);
	bool has_sub = last != dot;
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		if (strlen(keys[i].section) != slen || strncmp(key, keys[i].section, slen))
			continue;
		if (!strcmp(keys[i].name, "*")) {
			/* alias.NAME: two levels only */
			if (!has_sub)
				return keys[i].k;
			continue;
		}
		if (has_sub != keys[i].sub || strcmp(last + 1, keys[i].name))
			continue;
		return keys[i].k;
	}
	/* pager.CMD: a per-command pager */
	if (slen == 5 && !strncmp(key, "pager", 5) && !has_sub)
		return K_CMD;
	return K_NONE;
}

static bool is_bool(const char *v)
{
	static const char *const b[] = { "true", "yes", "on", "1", "false", "no", "off", "0", "" };
	for (size_t i = 0; i < sizeof b / sizeof *b; i++)
		if (!strcasecmp(v, b[i]))
			return true;
	return false;
}

static bool under_dir(const char *p, const char *d)
{
	size_t n = strlen(d);
	return !strncmp(p, d, n) && (p[n] == '/' || p[n] == '\0');
}

/* A configured path, unless it is a device or socket, or under /dev or
 * /proc (`core.hooksPath = /dev/null`, `ssh -F /dev/null`): those hold no
 * code, and protecting them would break the command's own use. */
static void add_config(struct find *f, const char *n, bool subtree, const char *why)
{
	struct stat st;
	if (under_dir(n, "/dev") || under_dir(n, "/proc") ||
	    (lstat(n, &st) == 0 &&
	     (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode))))
		return;
	add_item(f, GS_CONFIG, n, subtree, why);
}

static bool cfg_error(struct find *f, const struct gs_cfg_entry *e, const char *why)
{
	snprintf(f->err, f->errlen,
		 "%s:%u: %s: %s; cagerun cannot tell what it runs and refuses rather than leave "
		 "it unprotected (docs/security-model.md, \"git discovered at launch\")",
		 e->origin, e->line, e->key, why);
	return false;
}

/* What one setting names, for a repository whose commands run in `top`. */
static bool entry_paths(struct find *f, const struct gs_cfg *c, const struct gs_cfg_entry *e,
			const char *top)
{
	enum key_class k = classify(e->key);
	if (k == K_NONE || k == K_WORKTREE || !e->value)
		return true; /* valueless: a boolean, no program */
	struct arena *a = f->in->a;
	const char *why = arena_printf(a, "%s:%u: %s", e->origin, e->line, e->key);
	if (k == K_INCLUDE) {
		struct gs_err ge;
		char *p = gs_cfg_expand_path(c, e->value, e->origin, &ge);
		if (!p)
			return cfg_error(f, e, ge.msg);
		const char *n = norm(f, p);
		free(p);
		if (!n)
			return cfg_error(f, e, "a path that cannot be named in a policy");
		add_config(f, n, false, why);
		return true;
	}
	if (k == K_HOOKS) {
		struct gs_err ge;
		char *p = e->value[0] == '~' ? gs_cfg_expand_path(c, e->value, e->origin, &ge)
					     : strdup(e->value);
		if (!p)
			return cfg_error(f, e, e->value[0] == '~' ? ge.msg : "out of memory");
		const char *n = join(f, top, p);
		free(p);
		if (!n)
			return cfg_error(f, e, "a path that cannot be named in a policy");
		add_config(f, n, true, why);
		/* husky: the hooks in .husky/_ run the scripts in .husky/. */
		const char *base = strrchr(n, '/');
		if (base && !strcmp(base, "/_") && base != n)
			add_config(f, arena_strndup(a, n, (size_t)(base - n)), true,
				 arena_printf(a, "%s (husky: its hooks run the scripts above _)", why));
		return true;
	}
	if (k == K_FSMONITOR && is_bool(e->value))
		return true;
	const char *cmd = e->value;
	if (k == K_BANG) {
		if (cmd[0] != '!')
			return true; /* a git subcommand, no program */
		cmd++;
	} else if (cmd[0] == '!') {
		cmd++;
	}
	struct gs_words w = { 0 };
	char wwhy[256];
	if (!gs_cmd_paths(cmd, f->in->home, &w, wwhy, sizeof wwhy))
		return cfg_error(f, e, wwhy);
	bool ok = true;
	for (size_t i = 0; i < w.n && ok; i++) {
		const char *n = join(f, top, w.v[i]);
		if (!n) {
			ok = cfg_error(f, e, "a path that cannot be named in a policy");
			continue;
		}
		add_config(f, n, false, why);
	}
	gs_words_free(&w);
	return ok;
}

static bool load_cfg(struct find *f, struct gs_cfg *c, const char *path)
{
	struct gs_err ge;
	if (gs_cfg_load(c, path, &ge))
		return true;
	snprintf(f->err, f->errlen,
		 "%s; cagerun reads git's configuration to protect what it runs and refuses "
		 "a file git itself would refuse or it cannot read",
		 ge.msg);
	return false;
}

/* The files git reads before the repository's own: system, then global. */
static bool load_outer(struct find *f, struct gs_cfg *c)
{
	const char *home = f->in->home;
	const char *sys = getenv("GIT_CONFIG_SYSTEM");
	const char *glob = getenv("GIT_CONFIG_GLOBAL");
	const char *xdg = getenv("XDG_CONFIG_HOME");
	struct arena *a = f->in->a;
	/* Both the default files and the ones the environment names: the
	 * git run later, outside, may see either. */
	const char *files[6];
	size_t n = 0;
	files[n++] = "/etc/gitconfig";
	if (sys && *sys && sys[0] == '/')
		files[n++] = sys;
	if (xdg && xdg[0] == '/')
		files[n++] = arena_printf(a, "%s/git/config", xdg);
	if (home) {
		files[n++] = arena_printf(a, "%s/.config/git/config", home);
		files[n++] = arena_printf(a, "%s/.gitconfig", home);
	}
	if (glob && glob[0] == '/')
		files[n++] = glob;
	for (size_t i = 0; i < n; i++)
		if (!load_cfg(f, c, files[i]))
			return false;
	return true;
}

bool gs_find(const struct gs_find_in *in, struct gs_result *res, char *err, size_t errlen)
{
	struct find f = { .in = in, .res = res, .err = err, .errlen = errlen };
	err[0] = '\0';
	probe(&f, in->workspace, "the workspace");
	/* A workspace inside a repository: git run there reads that
	 * repository's configuration, whose settings may point into the
	 * workspace. The nearest directory above with a .git, as git finds it. */
	if (f.nrepos == 0) {
		char *up = arena_strdup(in->a, in->workspace);
		for (int d = 0; d < 64; d++) {
			char *sl = strrchr(up, '/');
			if (!sl || sl == up)
				break;
			*sl = '\0';
			if (exists(arena_printf(in->a, "%s/.git", up))) {
				probe(&f, up, "the repository the workspace lies in, at");
				break;
			}
		}
	}
	for (size_t i = 0; i < in->nroots; i++)
		if (strcmp(in->roots[i], "/") && is_dir(in->roots[i]))
			probe(&f, in->roots[i], "a writable tree at");
	scan(&f, in->workspace);
	for (size_t i = 0; i < f.nrepos; i++) {
		size_t visited = 0;
		modules(&f, arena_printf(in->a, "%s/modules", f.repos[i].common), 0, &visited);
	}
	for (size_t i = 0; i < f.nrepos; i++)
		worktrees(&f, &f.repos[i]);
	if (f.repos_full)
		res->truncated = true;
	struct gs_cfg outer = { .home = in->home };
	bool ok = load_outer(&f, &outer);
	for (size_t i = 0; ok && i < f.nrepos; i++) {
		const struct repo *r = &f.repos[i];
		struct gs_cfg own = { .home = in->home };
		ok = load_cfg(&f, &own, arena_printf(in->a, "%s/config", r->common)) &&
		     load_cfg(&f, &own, arena_printf(in->a, "%s/config.worktree", r->common));
		if (ok && strcmp(r->gitdir, r->common))
			ok = load_cfg(&f, &own, arena_printf(in->a, "%s/config.worktree", r->gitdir));
		/* Where its commands run: core.worktree when set, else the
		 * directory found with it. */
		const char *top = r->top;
		bool set;
		const char *wt = ok ? gs_cfg_get(&own, "core.worktree", &set) : NULL;
		if (wt && *wt) {
			const char *t = join(&f, r->gitdir, wt);
			if (t)
				top = t;
		}
		for (size_t k = 0; ok && k < outer.n; k++)
			ok = entry_paths(&f, &outer, &outer.v[k], top);
		for (size_t k = 0; ok && k < own.n; k++)
			ok = entry_paths(&f, &own, &own.v[k], top);
		gs_cfg_free(&own);
	}
	/* No repository: the outer files still name programs any git run
	 * from the workspace would start. */
	for (size_t k = 0; ok && f.nrepos == 0 && k < outer.n; k++)
		ok = entry_paths(&f, &outer, &outer.v[k], in->workspace);
	gs_cfg_free(&outer);
	return ok;
}
