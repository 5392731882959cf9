/*
 * lint_fs.c - the checks that ask a real filesystem (with --resolve, or
 * --root DIR for another machine's tree copied or mounted here):
 *
 *   symlink-escape  a granted path whose resolved form leaves the tree the
 *                   rule names, or lands in a protected path or a known
 *                   secret; also symlinks inside a granted tree that lead
 *                   into protected paths or secrets.
 *   hardlink-alias  a file in a granted tree whose inode (link count > 1)
 *                   is also a protected file or a known secret: the grant
 *                   reaches the secret under another name.
 *
 * Symlinks are resolved by hand, one component at a time, so that an
 * absolute link target inside --root means root + target (as it would on
 * the machine the tree came from), not this machine's file. Walks never
 * follow symlinks and are bounded in entries and depth.
 */
#include "lint_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"

enum { FS_MAX_LINKS = 40, FS_MAX_DEPTH = 64, FS_DEFAULT_ENTRIES = 200000 };

struct fsctx {
	struct lint_ctx *c;
	const char *root; /* "" for / */
	size_t entries, max_entries;
};

static void full_path(const struct fsctx *f, const char *path, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", f->root, path);
}

/* Resolves symlinks in `path` (absolute, normalised) under the root. A
 * missing component ends resolution; the rest is kept as written. */
static bool fs_resolve(const struct fsctx *f, const char *path, char *out, size_t size)
{
	char rest[2 * PATH_MAX], cur[PATH_MAX] = "", full[2 * PATH_MAX], tgt[PATH_MAX];
	snprintf(rest, sizeof rest, "%s", path);
	size_t pos = 0;
	int links = 0;
	bool missing = false;
	for (;;) {
		while (rest[pos] == '/')
			pos++;
		if (!rest[pos])
			break;
		size_t s = pos;
		while (rest[pos] && rest[pos] != '/')
			pos++;
		size_t n = pos - s;
		if (n == 1 && rest[s] == '.')
			continue;
		if (n == 2 && rest[s] == '.' && rest[s + 1] == '.') {
			char *sl = strrchr(cur, '/');
			if (sl)
				*sl = '\0';
			continue;
		}
		size_t cl = strlen(cur);
		if (cl + 1 + n >= sizeof cur)
			return false;
		char cand[PATH_MAX];
		memcpy(cand, cur, cl);
		cand[cl] = '/';
		memcpy(cand + cl + 1, rest + s, n);
		cand[cl + 1 + n] = '\0';
		struct stat st;
		full_path(f, cand, full, sizeof full);
		if (!missing && lstat(full, &st) == 0 && S_ISLNK(st.st_mode)) {
			if (++links > FS_MAX_LINKS)
				return false;
			ssize_t k = readlink(full, tgt, sizeof tgt - 1);
			if (k < 0)
				return false;
			tgt[k] = '\0';
			char nrest[2 * PATH_MAX];
			int w = snprintf(nrest, sizeof nrest, "%s/%s", tgt, rest + pos);
			if (w < 0 || (size_t)w >= sizeof nrest)
				return false;
			memcpy(rest, nrest, (size_t)w + 1);
			pos = 0;
			if (tgt[0] == '/')
				cur[0] = '\0';
			continue;
		}
		if (!missing && lstat(full, &st) != 0)
			missing = true; /* the rest cannot be resolved; keep it lexical */
		memcpy(cur, cand, cl + n + 2);
	}
	snprintf(out, size, "%s", cur[0] ? cur : "/");
	return true;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* A protect rule or built-in secret that `path` (or, with subtree, what is
 * below it) lands in. Writes a description into buf. */
static bool lands_protected(struct fsctx *f, const char *path, bool subtree,
			    const struct ir_rule **prot, char *buf, size_t size)
{
	struct lint_ctx *c = f->c;
	char text[PATH_MAX + 4];
	struct ir_path rp = { 0 };
	if (subtree)
		snprintf(text, sizeof text, "%s/**", strcmp(path, "/") ? path : "");
	else
		snprintf(text, sizeof text, "%s", path);
	rp.text = text;
	path_classify(&rp);
	*prot = NULL;
	const struct ir_profile *p = c->prof;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->effect != IR_PROTECT || r->tkind != IR_T_PATH)
			continue;
		if (lint_path_overlap(r, &rp, NULL, 0) != PAT_NO) {
			*prot = r;
			char t[900];
			lint_target_text(r, t, sizeof t);
			snprintf(buf, size, "protected %s", t);
			return true;
		}
	}
	for (size_t i = 0; i < c->nsecrets; i++) {
		const struct lint_builtin *sec = &c->secrets[i];
		if (pat_path_overlap(&sec->p, &rp, NULL, 0) != PAT_NO) {
			snprintf(buf, size, "%s (%s)", sec->what, sec->pattern);
			return true;
		}
	}
	return false;
}

static void display(const struct lint_ctx *c, const char *path, char *buf, size_t size)
{
	size_t h = c->ir->home ? strlen(c->ir->home) : 0;
	if (h && under(path, c->ir->home))
		snprintf(buf, size, "~%s", path + h);
	else
		snprintf(buf, size, "%s", path);
}

/* ---- walking ---- */

struct inode_rec {
	dev_t dev;
	ino_t ino;
	char *path;
};

struct inode_set {
	struct inode_rec *v;
	size_t n, cap;
};

static void iset_add(struct inode_set *s, dev_t dev, ino_t ino, const char *path)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct inode_rec *n = realloc(s->v, cap * sizeof *n);
		if (!n)
			return;
		s->v = n;
		s->cap = cap;
	}
	char *p = strdup(path);
	if (!p)
		return;
	s->v[s->n++] = (struct inode_rec){ dev, ino, p };
}

static void iset_free(struct inode_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].path);
	free(s->v);
	*s = (struct inode_set){ 0 };
}

typedef void (*visit_fn)(struct fsctx *f, const char *path, const struct stat *st, void *arg);

/* Depth-first below the open directory dfd, whose policy-side path is
 * path[0..plen). Never follows symlinks; stats only what readdir cannot
 * classify, relative to the directory (no path walks from the root). */
static void walk_fd(struct fsctx *f, int dfd, char *path, size_t plen, int depth, visit_fn fn,
		    void *arg)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL && f->entries < f->max_entries) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		size_t nl = strlen(e->d_name);
		if (plen + 1 + nl >= PATH_MAX)
			continue;
		path[plen] = '/';
		memcpy(path + plen + 1, e->d_name, nl + 1);
		struct stat st;
		memset(&st, 0, sizeof st);
		if (e->d_type == DT_DIR)
			st.st_mode = S_IFDIR;
		else if (e->d_type == DT_LNK)
			st.st_mode = S_IFLNK;
		else if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		f->entries++;
		fn(f, path, &st, arg);
		if (S_ISDIR(st.st_mode) && depth < FS_MAX_DEPTH) {
			int cfd = openat(dirfd(d), e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0)
				walk_fd(f, cfd, path, plen + 1 + nl, depth + 1, fn, arg);
		}
	}
	path[plen] = '\0';
	closedir(d);
}

static void walk(struct fsctx *f, const char *dir, int depth, visit_fn fn, void *arg)
{
	char full[2 * PATH_MAX];
	full_path(f, dir, full, sizeof full);
	int fd = open(full, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return; /* missing, unreadable or not a directory: nothing to check */
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s", strcmp(dir, "/") ? dir : "");
	walk_fd(f, fd, path, strlen(path), depth, fn, arg);
}

/* ---- symlink-escape ---- */

struct grant_walk {
	const struct ir_rule *G;
	struct inode_set *links; /* regular files with st_nlink > 1 */
	struct inode_set *symlinks; /* every symlink met (dev, ino unused) */
};

static void visit_grant(struct fsctx *f, const char *path, const struct stat *st, void *arg)
{
	(void)f;
	struct grant_walk *gw = arg;
	if (S_ISREG(st->st_mode) && st->st_nlink > 1 && ir_path_match(&gw->G->t.path, path))
		iset_add(gw->links, st->st_dev, st->st_ino, path);
	if (S_ISLNK(st->st_mode))
		iset_add(gw->symlinks, 0, 0, path);
}

static int rec_cmp(const void *a, const void *b)
{
	return strcmp(((const struct inode_rec *)a)->path, ((const struct inode_rec *)b)->path);
}

/* Every symlink of the grant that leads into a protected path or a known
 * secret, in path order (the walk's order is the filesystem's). */
static void report_symlinks(struct fsctx *f, const struct ir_rule *G, struct inode_set *links)
{
	if (links->n > 1)
		qsort(links->v, links->n, sizeof *links->v, rec_cmp);
	for (size_t i = 0; i < links->n; i++) {
		const char *path = links->v[i].path;
		char res[PATH_MAX], what[1024];
		const struct ir_rule *P;
		if (!fs_resolve(f, path, res, sizeof res) ||
		    !lands_protected(f, res, false, &P, what, sizeof what))
			continue;
		char gt[1024], pd[1024], rd[1024];
		lint_target_text(G, gt, sizeof gt);
		display(f->c, path, pd, sizeof pd);
		display(f->c, res, rd, sizeof rd);
		struct diag *d = lint_report_each(f->c, "symlink-escape", G, P, path,
						  "symlink %s inside the grant %s leads to %s, inside %s",
						  pd, gt, rd, what);
		if (P)
			lint_note_rule(f->c, d, P, "protected here");
	}
}

static void check_grant(struct fsctx *f, const struct ir_rule *G, struct inode_set *links)
{
	struct lint_ctx *c = f->c;
	const struct ir_path *gp = &G->t.path;
	char base[PATH_MAX], res[PATH_MAX], what[1024];
	size_t bl = gp->kind == IR_PAT_EXACT ? gp->len : gp->kind == IR_PAT_SUBTREE ? gp->len - 3
											: gp->lit_prefix;
	if (gp->kind == IR_PAT_GLOB)
		while (bl > 0 && gp->text[bl - 1] != '/')
			bl--;
	if (bl > 1 && gp->text[bl - 1] == '/')
		bl--;
	if (bl >= sizeof base)
		return;
	memcpy(base, gp->text, bl);
	base[bl] = '\0';
	if (bl == 0)
		strcpy(base, "/");
	if (!fs_resolve(f, base, res, sizeof res))
		return;
	char gt[1024], bd[1024], rd[1024];
	lint_target_text(G, gt, sizeof gt);
	display(c, base, bd, sizeof bd);
	display(c, res, rd, sizeof rd);
	bool subtree = gp->kind != IR_PAT_EXACT;
	if (strcmp(res, base) != 0) {
		const struct ir_rule *P;
		if (lands_protected(f, res, subtree, &P, what, sizeof what)) {
			struct diag *d = lint_report(c, "symlink-escape", G, P,
						     "%s resolves to %s, inside %s: the grant %s "
						     "follows the link there", bd, rd, what, gt);
			if (P)
				lint_note_rule(c, d, P, "protected here");
		} else if (!subtree || !under(res, base)) {
			lint_report(c, "symlink-escape", G, NULL,
				    "%s resolves to %s, outside the tree the rule names: the "
				    "sandbox decides on %s, so this grant %s",
				    bd, rd, rd, "does not mean what it says");
		}
	}
	if (subtree) {
		struct inode_set symlinks = { 0 };
		struct grant_walk gw = { G, links, &symlinks };
		walk(f, res, 0, visit_grant, &gw);
		report_symlinks(f, G, &symlinks);
		iset_free(&symlinks);
	}
}

/* ---- hardlink-alias ---- */

struct prot_walk {
	const struct ir_path *pat;
	struct inode_set *set;
};

static void visit_prot(struct fsctx *f, const char *path, const struct stat *st, void *arg)
{
	(void)f;
	struct prot_walk *pw = arg;
	if (S_ISREG(st->st_mode) && st->st_nlink > 1 && ir_path_match(pw->pat, path))
		iset_add(pw->set, st->st_dev, st->st_ino, path);
}

static void collect_protected(struct fsctx *f, const struct ir_path *pat, struct inode_set *set)
{
	char base[PATH_MAX];
	size_t bl = pat->kind == IR_PAT_EXACT ? pat->len : pat->lit_prefix;
	if (pat->kind != IR_PAT_EXACT)
		while (bl > 0 && pat->text[bl - 1] != '/')
			bl--;
	if (bl > 1 && pat->text[bl - 1] == '/')
		bl--;
	if (bl == 0 || bl >= sizeof base)
		return; /* a protect of the whole root is not a place to walk */
	memcpy(base, pat->text, bl);
	base[bl] = '\0';
	char full[2 * PATH_MAX];
	full_path(f, base, full, sizeof full);
	struct stat st;
	if (lstat(full, &st) != 0)
		return;
	struct prot_walk pw = { pat, set };
	if (S_ISREG(st.st_mode))
		visit_prot(f, base, &st, &pw);
	else if (S_ISDIR(st.st_mode))
		walk(f, base, 0, visit_prot, &pw);
}

void lint_check_fs(struct lint_ctx *c)
{
	struct fsctx f = { .c = c, .root = c->o->root ? c->o->root : "",
			   .max_entries = c->o->fs_max_entries ? c->o->fs_max_entries
							      : FS_DEFAULT_ENTRIES };
	char rootbuf[PATH_MAX];
	size_t rl = strlen(f.root);
	if (rl && f.root[rl - 1] == '/') {
		snprintf(rootbuf, sizeof rootbuf, "%.*s", (int)(rl - 1), f.root);
		f.root = rootbuf;
	}
	const struct ir_profile *p = c->prof;
	struct inode_set *granted = calloc(p->nrules + 1, sizeof *granted);
	if (!granted)
		return;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *G = &p->rules[i];
		if (G->effect != IR_ALLOW || G->tkind != IR_T_PATH || lint_is_std(G->loc.file) ||
		    !(G->access & (IR_A_READ | IR_A_WRITE | IR_A_CREATE | IR_A_DELETE | IR_A_EXEC)))
			continue;
		if (strncmp(G->t.path.text, "/<", 2) == 0)
			continue; /* a param placeholder: nothing on disk to ask */
		check_grant(&f, G, &granted[i]);
	}
	/* hard links: inodes of protected files and known secrets */
	struct inode_set prot = { 0 };
	size_t first_secret = 0;
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].effect == IR_PROTECT && p->rules[i].tkind == IR_T_PATH)
			collect_protected(&f, &p->rules[i].t.path, &prot);
	first_secret = prot.n;
	for (size_t i = 0; i < c->nsecrets; i++)
		collect_protected(&f, &c->secrets[i].p, &prot);
	for (size_t i = 0; i < p->nrules; i++) {
		if (granted[i].n > 1) /* path order, not the filesystem's */
			qsort(granted[i].v, granted[i].n, sizeof *granted[i].v, rec_cmp);
		for (size_t k = 0; k < granted[i].n; k++) {
			const struct inode_rec *g = &granted[i].v[k];
			for (size_t j = 0; j < prot.n; j++) {
				const struct inode_rec *q = &prot.v[j];
				if (q->dev != g->dev || q->ino != g->ino || strcmp(q->path, g->path) == 0)
					continue;
				char gd[1024], qd[1024], gt[1024];
				display(c, g->path, gd, sizeof gd);
				display(c, q->path, qd, sizeof qd);
				lint_target_text(&p->rules[i], gt, sizeof gt);
				lint_report_each(c, "hardlink-alias", &p->rules[i], NULL, g->path,
					    "%s, granted by %s, is a hard link to %s%s: the grant reaches "
					    "it under another name",
					    gd, gt, j < first_secret ? "protected " : "a known secret, ",
					    qd);
				break;
			}
		}
		iset_free(&granted[i]);
	}
	iset_free(&prot);
	free(granted);
}
