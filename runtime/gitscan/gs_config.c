/*
 * gs_config.c - git configuration files, read as git reads them
 * (gs_config.h). The parser follows git's own grammar step by step: one
 * character at a time, CRLF folded to LF, end of file seen as a final
 * newline, so that the corners (a key right after `]`, a continuation
 * inside quotes, trailing blanks) come out as git has them.
 */
#include "gs_config.h"
#include "lookup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* git's ctype (not the locale's): ASCII letters and digits; space is
 * " \t\n\r" only. */
static bool g_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool g_alnum(int c) { return g_alpha(c) || (c >= '0' && c <= '9'); }
static bool g_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool g_keychar(int c) { return g_alnum(c) || c == '-'; }
static int g_lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static void seterr(struct gs_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void seterr(struct gs_err *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
}

/* A growable byte string; `ok` false once an allocation failed. */
struct buf {
	char *s;
	size_t n, cap;
	bool ok;
};

static void b_add(struct buf *b, char c)
{
	if (b->n + 2 > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		char *s = realloc(b->s, cap);
		if (!s) {
			b->ok = false;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	b->s[b->n++] = c;
	b->s[b->n] = '\0';
}

static void b_trunc(struct buf *b, size_t n)
{
	b->n = n;
	if (b->s)
		b->s[n] = '\0';
}

/* The source, read as git's get_next_char does. */
struct src {
	const char *t;
	size_t len, i;
	unsigned line; /* of the character returned last */
	bool eof, nul;
	bool nl; /* the last character returned was a newline */
};

static int next(struct src *s)
{
	s->nl = true;
	if (s->i >= s->len) {
		if (!s->eof)
			s->line++;
		s->eof = true;
		return '\n';
	}
	int c = (unsigned char)s->t[s->i++];
	if (c == '\r' && s->i < s->len && s->t[s->i] == '\n')
		c = (unsigned char)s->t[s->i++];
	if (c == '\0')
		s->nul = true;
	s->nl = c == '\n';
	if (c == '\n')
		s->line++;
	return c;
}

/* `[name]`, `[name.sub]` (lowercased whole) or `[name "sub"]`, after '['. */
static bool section(struct src *s, struct buf *var)
{
	for (;;) {
		int c = next(s);
		if (s->eof)
			return false;
		if (c == ']')
			return var->n > 0;
		if (g_space(c)) {
			do {
				if (c == '\n')
					return false;
				c = next(s);
			} while (g_space(c));
			if (c != '"')
				return false;
			b_add(var, '.');
			for (;;) {
				c = next(s);
				if (c == '\n')
					return false;
				if (c == '"')
					break;
				if (c == '\\') {
					c = next(s);
					if (c == '\n')
						return false;
				}
				b_add(var, (char)c);
			}
			return next(s) == ']' && var->n > 1;
		}
		if (!g_keychar(c) && c != '.')
			return false;
		b_add(var, (char)g_lower(c));
	}
}

/* The value after '=', to the end of its (continued) line. Blanks
 * outside quotes become single spaces each, as git (2.39) writes them,
 * leading and trailing ones dropped. */
static bool value(struct src *s, struct buf *v)
{
	bool quote = false, comment = false;
	size_t space = 0;
	b_trunc(v, 0);
	b_add(v, '\0'); /* an empty value is "", not NULL */
	b_trunc(v, 0);
	for (;;) {
		int c = next(s);
		if (c == '\n') {
			if (quote)
				return false;
			return true;
		}
		if (comment)
			continue;
		if (g_space(c) && !quote) {
			if (v->n)
				space++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		for (; space; space--)
			b_add(v, ' ');
		if (c == '\\') {
			c = next(s);
			switch (c) {
			case '\n': continue;
			case 't': c = '\t'; break;
			case 'b': c = '\b'; break;
			case 'n': c = '\n'; break;
			case '\\': case '"': break;
			default: return false; /* git refuses unknown escapes */
			}
			b_add(v, (char)c);
			continue;
		}
		if (c == '"') {
			quote = !quote;
			continue;
		}
		b_add(v, (char)c);
	}
}

/* Room for one more entry. */
static bool reserve(struct gs_cfg *c)
{
	if (c->n >= GS_CFG_MAX_ENTRIES)
		return false;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct gs_cfg_entry *v = realloc(c->v, cap * sizeof *v);
		if (!v)
			return false;
		c->v = v;
		c->cap = cap;
	}
	return true;
}

static bool push_entry(struct gs_cfg *c, const char *key, const char *val, const char *origin,
		       unsigned line)
{
	if (!reserve(c))
		return false;
	struct gs_cfg_entry *e = &c->v[c->n];
	e->key = strdup(key);
	e->value = val ? strdup(val) : NULL;
	e->origin = origin;
	e->line = line;
	if (!e->key || (val && !e->value)) {
		free(e->key);
		free(e->value);
		return false;
	}
	c->n++;
	return true;
}

bool gs_cfg_parse(struct gs_cfg *c, const char *text, size_t len, const char *origin,
		  struct gs_err *e)
{
	struct src s = { .t = text, .len = len, .line = 1 };
	struct buf var = { .ok = true }, val = { .ok = true };
	size_t base = 0;
	bool comment = false, ok = false;
	/* A UTF-8 byte order mark, whole, at the very start. */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		s.i = 3;
	b_add(&var, '\0');
	b_trunc(&var, 0);
	for (;;) {
		unsigned line = s.line;
		int ch = next(&s);
		if (ch == '\n') {
			if (s.eof) {
				ok = true;
				break;
			}
			comment = false;
			continue;
		}
		if (comment || g_space(ch))
			continue;
		if (ch == '#' || ch == ';') {
			comment = true;
			continue;
		}
		if (ch == '[') {
			b_trunc(&var, 0);
			if (!section(&s, &var))
				break;
			b_add(&var, '.');
			base = var.n;
			continue;
		}
		if (!g_alpha(ch))
			break;
		b_trunc(&var, base);
		b_add(&var, (char)g_lower(ch));
		for (;;) {
			ch = next(&s);
			if (s.eof || !g_keychar(ch))
				break;
			b_add(&var, (char)g_lower(ch));
		}
		while (ch == ' ' || ch == '\t')
			ch = next(&s);
		bool has_value = ch != '\n';
		if (has_value && (ch != '=' || !value(&s, &val)))
			break;
		if (s.nul || !var.ok || !val.ok)
			break;
		if (!push_entry(c, var.s, has_value ? val.s : NULL, origin, line)) {
			free(var.s);
			free(val.s);
			seterr(e, "%s:%u: too many entries, or out of memory", origin, line);
			return false;
		}
	}
	if (!ok) {
		unsigned at = s.nl && s.line > 1 ? s.line - 1 : s.line;
		seterr(e, "%s:%u: %s", origin, at,
		       s.nul ? "a NUL byte (cagerun does not read such a file)"
		       : !var.ok || !val.ok ? "out of memory"
					    : "bad config line (git refuses it too)");
	} else if (s.nul) {
		ok = false;
		seterr(e, "%s: a NUL byte (cagerun does not read such a file)", origin);
	}
	free(var.s);
	free(val.s);
	return ok;
}

char *gs_cfg_expand_path(const struct gs_cfg *c, const char *v, const char *from,
			 struct gs_err *e)
{
	char *out = NULL;
	if (!strncmp(v, "%(prefix)/", 10)) {
		seterr(e, "%s: an include path starting with %%(prefix)/ names git's install "
			  "prefix, which cagerun does not know", from);
		return NULL;
	}
	if (v[0] == '~') {
		const char *slash = strchr(v, '/');
		size_t ulen = slash ? (size_t)(slash - v - 1) : strlen(v + 1);
		const char *rest = slash ? slash : "";
		const char *dir = NULL;
		char home[LOOKUP_HOME_MAX];
		if (ulen == 0) {
			dir = c->home;
			if (!dir) {
				seterr(e, "%s: '%s' needs a home directory", from, v);
				return NULL;
			}
		} else {
			char user[256];
			if (ulen >= sizeof user) {
				seterr(e, "%s: '%s': user name too long", from, v);
				return NULL;
			}
			memcpy(user, v + 1, ulen);
			user[ulen] = '\0';
			/* Rare (a config naming another user's home): one helper
			 * for this one question (lookup.h). */
			struct lookup l;
			lookup_init(&l);
			int le = lookup_home(&l, user, home, sizeof home);
			if (le) {
				if (le == ENOENT)
					seterr(e, "%s: '%s': no such user", from, v);
				else
					seterr(e, "%s: '%s': cannot look the user up: %s", from, v,
					       l.why[0] ? l.why : strerror(le));
				lookup_close(&l);
				return NULL;
			}
			lookup_close(&l);
			dir = home;
		}
		if (asprintf(&out, "%s%s", dir, rest) < 0)
			out = NULL;
	} else if (v[0] == '/') {
		out = strdup(v);
	} else {
		/* Relative to the including file, joined to its name as given. */
		const char *sl = strrchr(from, '/');
		int dl = sl ? (int)(sl - from + 1) : 0;
		if (asprintf(&out, "%.*s%s", dl, from, v) < 0)
			out = NULL;
	}
	if (!out)
		seterr(e, "%s: out of memory", from);
	return out;
}

static const char *add_file(struct gs_cfg *c, char *path, bool missing, bool is_include)
{
	if (c->nfiles == c->fcap) {
		size_t cap = c->fcap ? 2 * c->fcap : 8;
		struct gs_cfg_file *f = realloc(c->files, cap * sizeof *f);
		if (!f) {
			free(path);
			return NULL;
		}
		c->files = f;
		c->fcap = cap;
	}
	c->files[c->nfiles] = (struct gs_cfg_file){ path, missing, is_include };
	return c->files[c->nfiles++].path;
}

/* Reads a whole regular file of at most GS_CFG_MAX_BYTES. 1: read;
 * 0: missing (ENOENT, ENOTDIR, as git skips it); -1: error in *e. */
static int slurp(const char *path, char **text, size_t *len, struct gs_err *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		seterr(e, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st = { 0 };
	if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode)) {
		/* `include.path = /dev/null`: read as empty, as git reads it. */
		close(fd);
		*text = strdup("");
		*len = 0;
		if (!*text) {
			seterr(e, "%s: out of memory", path);
			return -1;
		}
		return 1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > GS_CFG_MAX_BYTES) {
		seterr(e, "%s: %s", path, S_ISDIR(st.st_mode) ? "a directory, not a file"
			  : !S_ISREG(st.st_mode) ? "not a regular file" : "larger than 1 MiB");
		close(fd);
		return -1;
	}
	char *t = malloc((size_t)st.st_size + 1);
	size_t n = 0;
	while (t && n < (size_t)st.st_size) {
		ssize_t r = read(fd, t + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!t || n != (size_t)st.st_size) {
		free(t);
		seterr(e, "%s: cannot read it", path);
		return -1;
	}
	t[n] = '\0';
	*text = t;
	*len = n;
	return 1;
}

/* Whether `key` is an include directive: include.path, includeif.C.path
 * with a condition. */
static bool is_include_key(const char *key)
{
	if (!strcmp(key, "include.path"))
		return true;
	size_t n = strlen(key);
	return !strncmp(key, "includeif.", 10) && n > 15 && !strcmp(key + n - 5, ".path");
}

static bool load(struct gs_cfg *c, const char *path, int depth, bool is_include,
		 struct gs_err *e)
{
	if (c->nfiles >= GS_CFG_MAX_FILES) {
		seterr(e, "%s: more than %d configuration files to read", path, GS_CFG_MAX_FILES);
		return false;
	}
	char *text = NULL;
	size_t len = 0;
	int r = slurp(path, &text, &len, e);
	if (r < 0)
		return false;
	char *own = strdup(path);
	const char *origin = own ? add_file(c, own, r == 0, is_include) : NULL;
	if (!origin) {
		free(text);
		seterr(e, "%s: out of memory", path);
		return false;
	}
	if (r == 0)
		return true;
	size_t first = c->n;
	bool ok = gs_cfg_parse(c, text, len, origin, e);
	free(text);
	if (!ok)
		return false;
	/* Included entries go right after their directive: parse first,
	 * then splice each include's entries in. */
	size_t end = c->n;
	struct gs_cfg_entry *mine = malloc((end - first + 1) * sizeof *mine);
	if (!mine) {
		seterr(e, "%s: out of memory", path);
		return false;
	}
	memcpy(mine, c->v + first, (end - first) * sizeof *mine);
	c->n = first;
	for (size_t i = 0; i < end - first; i++) {
		struct gs_cfg_entry *m = &mine[i];
		/* the slots freed above, unless an include took them */
		if (!reserve(c)) {
			seterr(e, "%s: too many entries, or out of memory", path);
			for (size_t j = i; j < end - first; j++) {
				free(mine[j].key);
				free(mine[j].value);
			}
			ok = false;
			break;
		}
		c->v[c->n++] = *m;
		if (!is_include_key(m->key))
			continue;
		if (!m->value) {
			seterr(e, "%s:%u: %s has no value (git refuses it too)", origin, m->line, m->key);
			ok = false;
		} else if (depth + 1 > GS_CFG_MAX_DEPTH) {
			seterr(e, "%s:%u: includes nested more than %d deep (git refuses it too)", origin,
			       m->line, GS_CFG_MAX_DEPTH);
			ok = false;
		} else {
			char *p = gs_cfg_expand_path(c, m->value, origin, e);
			ok = p && load(c, p, depth + 1, true, e);
			free(p);
		}
		if (!ok) {
			for (size_t j = i + 1; j < end - first; j++) {
				free(mine[j].key);
				free(mine[j].value);
			}
			break;
		}
	}
	free(mine);
	return ok;
}

bool gs_cfg_load(struct gs_cfg *c, const char *path, struct gs_err *e)
{
	return load(c, path, 0, false, e);
}

const char *gs_cfg_get(const struct gs_cfg *c, const char *key, bool *found)
{
	*found = false;
	const char *v = NULL;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].key, key)) {
			*found = true;
			v = c->v[i].value;
		}
	return v;
}

void gs_cfg_free(struct gs_cfg *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].key);
		free(c->v[i].value);
	}
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i].path);
	free(c->v);
	free(c->files);
	memset(c, 0, sizeof *c);
}
