/*
 * agentstate.c - the agents' own copies of mixed config files (see
 * agentstate.h).
 *
 * One row per agent. Claude Code: CLAUDE_CONFIG_DIR names its config
 * folder, and with it set Claude Code keeps its config file inside that
 * folder (`$CLAUDE_CONFIG_DIR/.claude.json`) instead of in the home
 * directory. cagerun sets it to the folder Claude Code uses anyway
 * (~/.claude), so settings, sessions, the login and everything else stay
 * where they are and only the config file moves: the caged copy
 * ~/.claude/.claude.json, which the agent's module lets it rewrite (temp
 * file and rename in a writable folder), while ~/.claude.json, the file
 * Claude Code reads outside the cage, is protected by std/guard.
 * CLAUDE_SECURESTORAGE_CONFIG_DIR="" keeps the login where it is: set to
 * empty, Claude Code names its keychain entry (macOS) and credentials
 * folder as if CLAUDE_CONFIG_DIR were not set.
 *
 * Gemini CLI: it rewrites ~/.gemini/settings.json to migrate deprecated
 * keys (and when a setting is changed), which std/guard protects: it names
 * MCP servers and hooks. GEMINI_CLI_HOME names the folder Gemini CLI takes
 * for home, and it keeps its folder in it (`$GEMINI_CLI_HOME/.gemini`).
 * cagerun sets it to ~/.gemini/.cage-home, whose .gemini holds the caged
 * copy of settings.json and, for every other entry of ~/.gemini, a link to
 * it: the login, history, commands and the rest are the user's own (and
 * what std/guard protects stays protected through the link), only the
 * settings are the cage's.
 *
 * Codex: it rewrites ~/.codex/config.toml (MCP servers, the `notify`
 * command, model providers, shell environment) when a project is trusted,
 * a notice acknowledged, a model chosen or a server added. CODEX_HOME names
 * its whole folder; cagerun sets it to ~/.codex/.cage-home, laid out as
 * Gemini CLI's: the caged copy of config.toml, and a link for every other
 * entry of ~/.codex, judged by the sandbox (std/guard protects ~/.codex by
 * allowlist). But for two folders, which are the cage's own: tmp (the
 * per-process folders of helper links that each Codex puts first on its
 * PATH; one of an outside session's, written, would run there) and .tmp
 * (the plugin marketplace's staging, which Codex installs from); and its
 * memories database is never linked either (the memories later sessions
 * are given): the caged runs make their own.
 *
 * The copy is made only when it is missing, from the user's file as it is
 * then; later the caged copy and the user's file go their own ways
 * (deleting the copy takes a fresh one on the next run).
 */
#include "agentstate.h"
#include "runcommon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct agent_row {
	const char *module;  /* the module that asks for the copy, as imported */
	const char *env_dir; /* under home: the folder env names */
	const char *dir;     /* under home: the folder that holds the copy */
	const char *file;    /* the copy's name in dir */
	const char *seed;    /* under home: the user's file */
	const char *env;     /* set to env_dir's full path */
	const char *const *also; /* further NAME=VALUE entries */
	/* under home: a folder each of whose entries (but the copy's name and
	 * the first component of dir) gets a link in dir, or NULL */
	const char *link_from;
	/* names of link_from never linked (fnmatch patterns): what the agent
	 * writes there would run or be obeyed outside later, so the caged runs
	 * keep their own (the agent makes it, or own_dirs); NULL for none */
	const char *const *unlinked;
	/* folders made in dir before the links, the copy's own; NULL for none */
	const char *const *own_dirs;
};

static const char *const claude_also[] = { "CLAUDE_SECURESTORAGE_CONFIG_DIR=", NULL };

/* Codex's folders of helpers and staging and its memories database, the
 * cage's own (see the top). */
static const char *const codex_unlinked[] = { "tmp", ".tmp", "memories_*.sqlite*", NULL };
static const char *const codex_own[] = { "tmp", ".tmp", NULL };

static const struct agent_row rows[] = {
	{ "std/agents/claude", ".claude", ".claude", ".claude.json", ".claude.json",
	  "CLAUDE_CONFIG_DIR", claude_also, NULL, NULL, NULL },
	{ "std/agents/gemini", ".gemini/.cage-home", ".gemini/.cage-home/.gemini", "settings.json",
	  ".gemini/settings.json", "GEMINI_CLI_HOME", NULL, ".gemini", NULL, NULL },
	{ "std/agents/codex", ".codex/.cage-home", ".codex/.cage-home", "config.toml",
	  ".codex/config.toml", "CODEX_HOME", NULL, ".codex", codex_unlinked, codex_own },
};

/* The entries of a folder linked into the copy's: more is not a config
 * folder. */
#define LINKS_MAX 4096

/* The copy is read whole: a config file larger than this is not one. */
#define SEED_MAX (64u << 20)

static bool errf(char *err, size_t len, const char *fmt, const char *a, int e)
{
	snprintf(err, len, fmt, a, strerror(e));
	return false;
}

/* Whether `ir` loaded `module` (the standard library's file, or an -I
 * copy of it under the same name). */
static bool imports(const struct ir_policy *ir, const char *module)
{
	char want[128];
	snprintf(want, sizeof want, "%s.cage", module);
	size_t wl = strlen(want);
	for (size_t i = 0; i < ir->nfiles; i++) {
		const char *n = ir->files[i]->realpath ? ir->files[i]->realpath : ir->files[i]->name;
		size_t nl = n ? strlen(n) : 0;
		if (nl >= wl && strcmp(n + nl - wl, want) == 0 && (nl == wl || n[nl - wl - 1] == '/'))
			return true;
	}
	return false;
}

static bool put(struct agentstate *st, const char *name, const char *value)
{
	if (st->n >= AGENTSTATE_ENV_MAX)
		return false;
	int k = snprintf(st->buf[st->n], sizeof st->buf[st->n], "%s%s", name, value);
	if (k < 0 || (size_t)k >= sizeof st->buf[st->n])
		return false;
	st->env[st->n] = st->buf[st->n];
	st->env[++st->n] = NULL;
	return true;
}

/* Reads the user's file whole; *buf NULL (and true) when there is none. */
static bool read_seed(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	*buf = NULL;
	*len = 0;
	/* The user's own file, which the agent cannot change: a link there
	 * (a dotfile manager's) is followed. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? true : errf(err, errlen, "cannot read %s: %s", path, errno);
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > SEED_MAX) {
		close(fd);
		snprintf(err, errlen, "%s is not a regular file of at most %u MiB", path,
			 SEED_MAX >> 20);
		return false;
	}
	char *b = malloc((size_t)st.st_size + 1);
	if (!b) {
		close(fd);
		return errf(err, errlen, "reading %s: %s", path, ENOMEM);
	}
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t k = read(fd, b + got, (size_t)st.st_size - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int e = k < 0 ? errno : EIO;
			free(b);
			close(fd);
			return errf(err, errlen, "reading %s: %s", path, e);
		}
		got += (size_t)k;
	}
	close(fd);
	*buf = b;
	*len = got;
	return true;
}

/* Writes the copy into the pinned folder `dfd`: a new file (O_EXCL, never
 * through a link) renamed into place, so a run that stops half-way leaves
 * no half copy. */
static bool write_copy(int dfd, const char *name, const char *path, const char *b, size_t len,
		       char *err, size_t errlen)
{
	char tmp[96];
	snprintf(tmp, sizeof tmp, "%s.cage-seed.%ld", name, (long)getpid());
	enum run_replace_step step;
	if (run_replace_at(dfd, name, tmp, b, len, &step))
		return true;
	static const char *const what[] = {
		[RUN_REPLACE_CREATE] = "cannot create the copy beside %s: %s",
		[RUN_REPLACE_WRITE] = "writing %s: %s",
		[RUN_REPLACE_RENAME] = "cannot put the copy in place as %s: %s",
	};
	return errf(err, errlen, what[step], path, errno);
}

/* Opens home/rel as a folder, making each missing component (0700), never
 * through a link: the agent may have replaced one with a link since the
 * last run, and cagerun then writes nothing through it. -1 with err set. */
static int open_chain(const char *home, const char *rel, char *err, size_t errlen)
{
	int fd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		errf(err, errlen, "cannot open %s: %s", home, errno);
		return -1;
	}
	char part[PATH_MAX];
	snprintf(part, sizeof part, "%s", rel);
	for (char *c = part, *next; c && *c; c = next) {
		next = strchr(c, '/');
		if (next)
			*next++ = '\0';
		if (mkdirat(fd, c, 0700) != 0 && errno != EEXIST) {
			int e = errno;
			close(fd);
			errf(err, errlen, "cannot create a folder of the agent's copy, %s: %s", c, e);
			return -1;
		}
		int sub = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		if (sub < 0) {
			snprintf(err, errlen, "cannot open %s/%s as a folder: %s", home, rel, strerror(e));
			return -1;
		}
		fd = sub;
	}
	return fd;
}

static bool matches_any(const char *const *pats, const char *name)
{
	for (; pats && *pats; pats++)
		if (fnmatch(*pats, name, FNM_PERIOD) == 0)
			return true;
	return false;
}

/* A link in dfd to home/from/NAME for each entry NAME of home/from that
 * dfd lacks (but `skip` and `own`); entries already there are left alone. */
static bool link_entries(int dfd, const char *home, const char *from, const char *skip,
			 const char *own, const char *const *unlinked, char *err, size_t errlen)
{
	char src[PATH_MAX];
	if ((size_t)snprintf(src, sizeof src, "%s/%s", home, from) >= sizeof src)
		return errf(err, errlen, "%s: %s", home, ENAMETOOLONG);
	int sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return errf(err, errlen, "cannot open %s: %s", src, errno);
	DIR *d = fdopendir(sfd);
	if (!d) {
		close(sfd);
		return errf(err, errlen, "cannot list %s: %s", src, errno);
	}
	bool ok = true;
	size_t n = 0;
	struct dirent *e;
	while (ok && (e = readdir(d))) {
		const char *nm = e->d_name;
		if (!strcmp(nm, ".") || !strcmp(nm, "..") || !strcmp(nm, skip) || !strcmp(nm, own) ||
		    matches_any(unlinked, nm))
			continue;
		if (++n > LINKS_MAX) {
			snprintf(err, errlen, "%s holds more than %u entries", src, LINKS_MAX);
			ok = false;
			break;
		}
		struct stat sb;
		if (fstatat(dfd, nm, &sb, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			continue;
		char target[PATH_MAX];
		if ((size_t)snprintf(target, sizeof target, "%s/%s", src, nm) >= sizeof target)
			continue;
		if (symlinkat(target, dfd, nm) != 0 && errno != EEXIST)
			ok = errf(err, errlen, "cannot link the agent's copy to %s: %s", target, errno);
	}
	closedir(d);
	return ok;
}

static bool prepare_row(const struct agent_row *r, const char *home, struct agentstate *st,
			char *err, size_t errlen)
{
	char seed[PATH_MAX], envdir[PATH_MAX];
	if ((size_t)snprintf(envdir, sizeof envdir, "%s/%s", home, r->env_dir) >= sizeof envdir ||
	    (size_t)snprintf(st->copy, sizeof st->copy, "%s/%s/%s", home, r->dir, r->file) >=
		    sizeof st->copy ||
	    (size_t)snprintf(seed, sizeof seed, "%s/%s", home, r->seed) >= sizeof seed) {
		snprintf(err, errlen, "the home directory's path is too long for %s", r->module);
		return false;
	}
	int dfd = open_chain(home, r->dir, err, errlen);
	if (dfd < 0)
		return false;
	struct stat sb;
	bool ok = true;
	if (fstatat(dfd, r->file, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		/* Kept from the last run, whatever it is: the sandbox decides what
		 * the agent may do with it (a link to the user's file is written
		 * through only where the policy allows that file). */
	} else if (errno != ENOENT) {
		ok = errf(err, errlen, "cannot look at %s: %s", st->copy, errno);
	} else {
		char *b;
		size_t len;
		ok = read_seed(seed, &b, &len, err, errlen);
		/* No file of the user's: the agent makes its own inside. */
		if (ok && b) {
			ok = write_copy(dfd, r->file, st->copy, b, len, err, errlen);
			st->seeded = ok;
		}
		free(b);
	}
	/* Made before the links, so that they are never linked. */
	for (const char *const *o = r->own_dirs; ok && o && *o; o++)
		if (mkdirat(dfd, *o, 0700) != 0 && errno != EEXIST)
			ok = errf(err, errlen, "cannot create %s in the agent's copy: %s", *o, errno);
	if (ok && r->link_from) {
		/* The first component of dir below link_from: the copy's own
		 * folder, never linked into itself. */
		const char *own = r->dir + strlen(r->link_from);
		char first[NAME_MAX + 1];
		own += *own == '/';
		snprintf(first, sizeof first, "%.*s", (int)strcspn(own, "/"), own);
		ok = link_entries(dfd, home, r->link_from, r->file, first, r->unlinked, err,
				  errlen);
	}
	close(dfd);
	if (!ok)
		return false;
	char kv[PATH_MAX + 64];
	snprintf(kv, sizeof kv, "%s=", r->env);
	if (!put(st, kv, envdir)) {
		snprintf(err, errlen, "too many variables for %s", r->module);
		return false;
	}
	for (const char *const *a = r->also; a && *a; a++)
		if (!put(st, *a, "")) {
			snprintf(err, errlen, "too many variables for %s", r->module);
			return false;
		}
	return true;
}

bool agentstate_prepare(const struct ir_policy *ir, struct agentstate *st, char *err,
			size_t errlen)
{
	/* What readers look at, set one by one: the buffers, 37 KB, are
	 * written only as far as they are used. */
	st->env[0] = NULL;
	st->n = 0;
	st->copy[0] = '\0';
	st->nown = 0;
	st->seeded = false;
	if (!ir->home || ir->home[0] != '/')
		return true;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct agent_row *r = &rows[i];
		if (!imports(ir, r->module))
			continue;
		if (!prepare_row(r, ir->home, st, err, errlen))
			return false;
		/* A copy folder the rest is linked into is the cage's alone;
		 * Claude Code's copy sits in its own ~/.claude, read outside. */
		if (r->link_from && st->nown < AGENTSTATE_ENV_MAX)
			snprintf(st->own[st->nown++], sizeof st->own[0], "%s/%s", ir->home, r->dir);
	}
	return true;
}

void agentstate_show(const struct ir_policy *ir, FILE *out)
{
	if (!ir->home || ir->home[0] != '/')
		return;
	bool any = false;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct agent_row *r = &rows[i];
		if (!imports(ir, r->module))
			continue;
		if (!any)
			fputs("\nagent state (the agents' own copies, docs/security-model.md):\n", out);
		any = true;
		fprintf(out, "  %s: %s=%s/%s; the caged copy %s/%s/%s, copied from %s/%s when missing",
			r->module, r->env, ir->home, r->env_dir, ir->home, r->dir, r->file, ir->home,
			r->seed);
		if (r->link_from)
			fprintf(out, "; the rest of %s/%s linked in", ir->home, r->link_from);
		fputc('\n', out);
	}
}
