/*
 * shimcfg.c - the version managers' files (shimcfg.h): three small
 * readers, each strict and bounded, errors as "FILE:LINE: what".
 *
 * Versions and names are kept to what a directory name can be: printable
 * ASCII without `/` in a version (a version names an install directory,
 * so `..` is refused too).
 */
#include "shimcfg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool fail(char *err, size_t errlen, const char *file, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static bool fail(char *err, size_t errlen, const char *file, unsigned line, const char *fmt, ...)
{
	int n = snprintf(err, errlen, "%s:%u: ", file, line);
	if (n < 0 || (size_t)n >= errlen)
		return false;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

int shc_read(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
	*text = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > SHC_MAX_FILE) {
		snprintf(err, errlen, "%s: %s", path,
			 !S_ISREG(st.st_mode) ? "not a regular file" : "larger than 1 MiB");
		close(fd);
		return -1;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (!buf || got != (size_t)st.st_size) {
		snprintf(err, errlen, "%s: %s", path, buf ? "changed while it was read" : "out of memory");
		free(buf);
		return -1;
	}
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 1;
}

const struct shc_tool *shc_find(const struct shc_tools *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->t[i].name, name))
			return &t->t[i];
	return NULL;
}

static bool plain_char(char ch)
{
	return ch > 0x20 && ch < 0x7f && !strchr("\"'\\#=[]{},", ch);
}

/* A version as a manager names an install directory with it. */
static bool version_ok(const char *v)
{
	if (!*v || !strcmp(v, ".") || !strcmp(v, ".."))
		return false;
	for (; *v; v++)
		if (!plain_char(*v) || *v == '/')
			return false;
	return true;
}

static bool add_tool(struct shc_tools *out, const char *file, unsigned line, const char *name,
		     size_t nlen, struct shc_tool **t, char *err, size_t errlen)
{
	if (nlen == 0 || nlen >= SHC_NAME)
		return fail(err, errlen, file, line, "a tool name of %zu bytes", nlen);
	for (size_t i = 0; i < out->n; i++)
		if (strlen(out->t[i].name) == nlen && !memcmp(out->t[i].name, name, nlen))
			return fail(err, errlen, file, line, "%.*s is named twice (first on line %u)",
				    (int)nlen, name, out->t[i].line);
	if (out->n >= SHC_MAX_TOOLS)
		return fail(err, errlen, file, line, "more than %d tools", SHC_MAX_TOOLS);
	*t = &out->t[out->n++];
	memset(*t, 0, sizeof **t);
	memcpy((*t)->name, name, nlen);
	(*t)->line = line;
	return true;
}

static bool add_version(struct shc_tool *t, const char *file, unsigned line, const char *v,
			size_t vlen, char *err, size_t errlen)
{
	if (t->nvers >= SHC_MAX_VERS)
		return fail(err, errlen, file, line, "more than %d versions of %s", SHC_MAX_VERS,
			    t->name);
	if (vlen == 0 || vlen >= SHC_NAME)
		return fail(err, errlen, file, line, "a version of %zu bytes", vlen);
	memcpy(t->vers[t->nvers], v, vlen);
	t->vers[t->nvers][vlen] = '\0';
	if (!version_ok(t->vers[t->nvers]))
		return fail(err, errlen, file, line, "%s: the version \"%s\" cannot name a directory",
			    t->name, t->vers[t->nvers]);
	t->nvers++;
	return true;
}

/* Splits text into lines, each bounded; calls `fn` with a NUL-terminated
 * copy. */
typedef bool (*line_fn)(void *st, const char *file, unsigned line, char *s, char *err,
			size_t errlen);
static bool each_line(const char *file, const char *text, size_t len, line_fn fn, void *st,
		      char *err, size_t errlen)
{
	if (memchr(text, '\0', len))
		return fail(err, errlen, file, 1, "a NUL byte: not a text file");
	char buf[SHC_MAX_LINE + 1];
	unsigned line = 0;
	for (size_t i = 0; i < len;) {
		line++;
		const char *nl = memchr(text + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - text - i) : len - i;
		if (n > SHC_MAX_LINE)
			return fail(err, errlen, file, line, "a line longer than %d bytes", SHC_MAX_LINE);
		memcpy(buf, text + i, n);
		buf[n] = '\0';
		if (n && buf[n - 1] == '\r')
			buf[n - 1] = '\0';
		if (!fn(st, file, line, buf, err, errlen))
			return false;
		i += n + 1;
	}
	return true;
}

static bool tv_line(void *st, const char *file, unsigned line, char *s, char *err, size_t errlen)
{
	struct shc_tools *out = st;
	char *hash = strchr(s, '#');
	if (hash)
		*hash = '\0';
	s += strspn(s, " \t");
	if (!*s)
		return true;
	size_t n = strcspn(s, " \t");
	struct shc_tool *t;
	if (!add_tool(out, file, line, s, n, &t, err, errlen))
		return false;
	for (s += n;;) {
		s += strspn(s, " \t");
		if (!*s)
			break;
		n = strcspn(s, " \t");
		if (!add_version(t, file, line, s, n, err, errlen))
			return false;
		s += n;
	}
	if (!t->nvers)
		return fail(err, errlen, file, line, "%s has no version", t->name);
	return true;
}

bool shc_tool_versions(const char *file, const char *text, size_t len, struct shc_tools *out,
		       char *err, size_t errlen)
{
	out->n = 0;
	return each_line(file, text, len, tv_line, out, err, errlen);
}

/* ---- mise.toml, the [tools] subset ---- */

struct toml_st {
	struct shc_tools *out;
	enum { T_OTHER, T_TOOLS, T_TOOL } sect;
	struct shc_tool *tool; /* [tools.NAME] */
	const char *ml;        /* inside a multi-line string: its delimiter */
};

/* A key: bare (A-Za-z0-9_-) or quoted ("..." without escapes, '...').
 * Returns the rest after it, or NULL. */
static char *toml_key(char *s, char **k, size_t *kn)
{
	if (*s == '"' || *s == '\'') {
		char q = *s;
		char *e = strchr(s + 1, q);
		if (!e || memchr(s + 1, '\\', (size_t)(e - s - 1)))
			return NULL;
		*k = s + 1;
		*kn = (size_t)(e - s - 1);
		return e + 1;
	}
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-");
	if (!n)
		return NULL;
	*k = s;
	*kn = n;
	return s + n;
}

/* A basic or literal string without escapes; returns the rest, or NULL. */
static char *toml_str(char *s, char **v, size_t *vn)
{
	if (*s != '"' && *s != '\'')
		return NULL;
	char q = *s;
	if (s[1] == q && s[2] == q)
		return NULL; /* a multi-line string as a value: not in the subset */
	char *e = strchr(s + 1, q);
	if (!e || (q == '"' && memchr(s + 1, '\\', (size_t)(e - s - 1))))
		return NULL;
	*v = s + 1;
	*vn = (size_t)(e - s - 1);
	return e + 1;
}

static bool toml_end(const char *s)
{
	s += strspn(s, " \t");
	return !*s || *s == '#';
}

/* The value of a tool: "V", ["V", ...], or { version = "V", ... } with
 * other keys' string values skipped. */
static bool toml_tool_value(struct shc_tool *t, const char *file, unsigned line, char *s,
			    char *err, size_t errlen)
{
	char *v;
	size_t vn;
	char *r;
	if ((r = toml_str(s, &v, &vn)))
		return (toml_end(r) || fail(err, errlen, file, line, "text after %s's version", t->name)) &&
		       add_version(t, file, line, v, vn, err, errlen);
	if (*s == '[' || *s == '{') {
		char close = *s == '[' ? ']' : '}';
		bool table = *s == '{';
		s++;
		for (;;) {
			s += strspn(s, " \t");
			if (*s == close)
				break;
			char *k = NULL;
			size_t kn = 0;
			if (table) {
				if (!(s = toml_key(s, &k, &kn)))
					return fail(err, errlen, file, line, "%s: a key expected in its table",
						    t->name);
				s += strspn(s, " \t");
				if (*s++ != '=')
					return fail(err, errlen, file, line, "%s: expected = in its table",
						    t->name);
				s += strspn(s, " \t");
			}
			if (!(r = toml_str(s, &v, &vn)))
				return fail(err, errlen, file, line,
					    "%s: only string values are read here (split the table over "
					    "[tools.%s] lines)", t->name, t->name);
			if ((!table || (kn == 7 && !memcmp(k, "version", 7))) &&
			    !add_version(t, file, line, v, vn, err, errlen))
				return false;
			s = r + strspn(r, " \t");
			if (*s == ',')
				s++;
			else if (*s != close)
				return fail(err, errlen, file, line, "%s: expected , or %c", t->name, close);
		}
		if (*s != close || !toml_end(s + 1))
			return fail(err, errlen, file, line, "%s: a %s that does not end on its line",
				    t->name, table ? "table" : "list");
		if (!t->nvers)
			return fail(err, errlen, file, line, "%s has no version", t->name);
		return true;
	}
	return fail(err, errlen, file, line, "%s: a version must be a string", t->name);
}

static bool toml_line(void *vst, const char *file, unsigned line, char *s, char *err,
		      size_t errlen)
{
	struct toml_st *st = vst;
	if (st->ml) {
		char *e = strstr(s, st->ml);
		if (!e)
			return true;
		s = e + 3;
		st->ml = NULL;
		return true; /* what follows the closing delimiter belongs to a skipped key */
	}
	s += strspn(s, " \t");
	if (!*s || *s == '#')
		return true;
	if (*s == '[') {
		bool arr = s[1] == '[';
		char *name = s + (arr ? 2 : 1), *k;
		size_t kn;
		st->sect = T_OTHER;
		st->tool = NULL;
		if (arr)
			return true;
		name += strspn(name, " \t");
		char *r = toml_key(name, &k, &kn);
		if (r && kn == 5 && !memcmp(k, "tools", 5)) {
			r += strspn(r, " \t");
			if (*r == ']' && toml_end(r + 1)) {
				st->sect = T_TOOLS;
			} else if (*r == '.') {
				r++;
				r += strspn(r, " \t");
				if (!(r = toml_key(r, &k, &kn)))
					return fail(err, errlen, file, line, "a [tools.NAME] header without a name");
				r += strspn(r, " \t");
				if (*r != ']' || !toml_end(r + 1))
					return fail(err, errlen, file, line, "a [tools.NAME] header not read here");
				if (!add_tool(st->out, file, line, k, kn, &st->tool, err, errlen))
					return false;
				st->sect = T_TOOL;
			} else {
				return fail(err, errlen, file, line, "a [tools] header not read here");
			}
		}
		return true;
	}
	if (st->sect == T_OTHER) {
		/* skipped, but a multi-line string opened here runs on */
		for (const char *d = s; (d = strpbrk(d, "\"'"));) {
			if ((d[0] == '"' || d[0] == '\'') && d[1] == d[0] && d[2] == d[0]) {
				const char *delim = d[0] == '"' ? "\"\"\"" : "'''";
				const char *e = strstr(d + 3, delim);
				if (!e) {
					st->ml = delim;
					return true;
				}
				d = e + 3;
			} else {
				const char *e = strchr(d + 1, d[0]);
				if (!e)
					return true;
				d = e + 1;
			}
		}
		return true;
	}
	char *k, *v;
	size_t kn, vn;
	char *r = toml_key(s, &k, &kn);
	if (!r)
		return fail(err, errlen, file, line, "a key not read here");
	r += strspn(r, " \t");
	if (*r != '=')
		return fail(err, errlen, file, line, "expected = after %.*s", (int)kn, k);
	r++;
	r += strspn(r, " \t");
	if (st->sect == T_TOOL) {
		if (kn != 7 || memcmp(k, "version", 7)) {
			if (!toml_str(r, &v, &vn))
				return fail(err, errlen, file, line, "[tools.%s]: only string values are read "
								    "here", st->tool->name);
			return true; /* another option of the tool */
		}
		return toml_tool_value(st->tool, file, line, r, err, errlen);
	}
	struct shc_tool *t;
	return add_tool(st->out, file, line, k, kn, &t, err, errlen) &&
	       toml_tool_value(t, file, line, r, err, errlen);
}

bool shc_mise_toml(const char *file, const char *text, size_t len, struct shc_tools *out,
		   char *err, size_t errlen)
{
	out->n = 0;
	struct toml_st st = { out, T_OTHER, NULL, NULL };
	if (!each_line(file, text, len, toml_line, &st, err, errlen))
		return false;
	for (size_t i = 0; i < out->n; i++)
		if (!out->t[i].nvers)
			return fail(err, errlen, file, out->t[i].line, "[tools.%s] has no version",
				    out->t[i].name);
	return true;
}

/* ---- JSON ---- */

struct js {
	const char *file, *p, *end;
	unsigned line;
	char *err;
	size_t errlen;
	const char *const *path;
	size_t npath;
	char *out;
	size_t outlen;
	bool *found;
};

static bool js_fail(struct js *j, const char *what)
{
	return fail(j->err, j->errlen, j->file, j->line, "%s", what);
}

static void js_ws(struct js *j)
{
	while (j->p < j->end && strchr(" \t\r\n", *j->p) && *j->p) {
		if (*j->p == '\n')
			j->line++;
		j->p++;
	}
}

/* A string; decoded into buf when buf is not NULL (ASCII escapes only). */
static bool js_string(struct js *j, char *buf, size_t buflen, size_t *n)
{
	size_t k = 0;
	j->p++; /* the quote */
	while (j->p < j->end && *j->p != '"') {
		unsigned char ch = (unsigned char)*j->p++;
		if (ch < 0x20)
			return js_fail(j, "a control character in a string");
		if (ch == '\\') {
			if (j->p >= j->end)
				break;
			char e = *j->p++;
			switch (e) {
			case '"': case '\\': case '/': ch = (unsigned char)e; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'n': ch = '\n'; break;
			case 'r': ch = '\r'; break;
			case 't': ch = '\t'; break;
			case 'u': {
				if (j->end - j->p < 4)
					return js_fail(j, "a short \\u escape");
				unsigned cp = 0;
				for (int i = 0; i < 4; i++) {
					char h = *j->p++;
					int d = h >= '0' && h <= '9' ? h - '0'
						: h >= 'a' && h <= 'f' ? h - 'a' + 10
						: h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
					if (d < 0)
						return js_fail(j, "a bad \\u escape");
					cp = cp * 16 + (unsigned)d;
				}
				/* names and versions are ASCII; anything else stands out */
				ch = cp > 0 && cp < 0x80 ? (unsigned char)cp : '?';
				break;
			}
			default:
				return js_fail(j, "a bad escape in a string");
			}
		}
		if (buf) {
			if (k + 1 >= buflen)
				return js_fail(j, "a string too long to be read here");
			buf[k] = (char)ch;
		}
		k++;
	}
	if (j->p >= j->end)
		return js_fail(j, "a string that does not end");
	j->p++;
	if (buf)
		buf[k] = '\0';
	if (n)
		*n = k;
	return true;
}

/* A value; `at` is how many keys of the path lead here (SIZE_MAX: off
 * the path). */
static bool js_value(struct js *j, size_t at, int depth)
{
	if (depth > SHC_MAX_DEPTH)
		return js_fail(j, "nested deeper than 32");
	js_ws(j);
	if (j->p >= j->end)
		return js_fail(j, "a value expected");
	bool target = at == j->npath;
	char c = *j->p;
	if (c == '"') {
		if (!target)
			return js_string(j, NULL, 0, NULL);
		if (*j->found)
			return js_fail(j, "the key is named twice");
		if (!js_string(j, j->out, j->outlen, NULL))
			return false;
		*j->found = true;
		return true;
	}
	if (c == '{' || c == '[') {
		if (target)
			return js_fail(j, c == '{' ? "an object where a string was expected"
						   : "a list where a string was expected");
		j->p++;
		js_ws(j);
		char close = c == '{' ? '}' : ']';
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return true;
		}
		for (;;) {
			size_t next = SIZE_MAX;
			if (c == '{') {
				js_ws(j);
				if (j->p >= j->end || *j->p != '"')
					return js_fail(j, "a key expected");
				char key[SHC_NAME];
				size_t kn;
				if (!js_string(j, at < j->npath ? key : NULL, sizeof key, &kn))
					return false;
				if (at < j->npath && !strcmp(key, j->path[at]))
					next = at + 1;
				js_ws(j);
				if (j->p >= j->end || *j->p++ != ':')
					return js_fail(j, "a : expected after a key");
			}
			if (!js_value(j, next, depth + 1))
				return false;
			js_ws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->end && *j->p == close) {
				j->p++;
				return true;
			}
			return js_fail(j, c == '{' ? "a , or } expected" : "a , or ] expected");
		}
	}
	static const char *const words[] = { "true", "false", "null" };
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(words[i]);
		if ((size_t)(j->end - j->p) >= n && !memcmp(j->p, words[i], n)) {
			if (target && i < 2)
				return js_fail(j, "a boolean where a string was expected");
			j->p += n;
			return true;
		}
	}
	if (c == '-' || (c >= '0' && c <= '9')) {
		if (target)
			return js_fail(j, "a number where a string was expected");
		j->p++;
		while (j->p < j->end && strchr("0123456789.eE+-", *j->p) && *j->p)
			j->p++;
		return true;
	}
	return js_fail(j, "not a JSON value");
}

bool shc_json_str(const char *file, const char *text, size_t len, const char *const *path,
		  size_t npath, char *out, size_t outlen, bool *found, char *err, size_t errlen)
{
	*found = false;
	if (outlen)
		out[0] = '\0';
	struct js j = { file, text, text + len, 1, err, errlen, path, npath, out, outlen, found };
	if (len > SHC_MAX_FILE)
		return js_fail(&j, "larger than 1 MiB");
	if (!js_value(&j, 0, 0))
		return false;
	js_ws(&j);
	if (j.p != j.end)
		return js_fail(&j, "text after the JSON value");
	return true;
}
