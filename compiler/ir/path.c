/*
 * path.c - path pattern normalisation and matching (see path.h).
 *
 * Matching works on components: a `**` component matches any run of zero or
 * more components, every other component matches exactly one, with `*` and
 * `?` never crossing a '/'. Both levels use the greedy wildcard algorithm
 * with one backtrack point, which is exact when only one kind of star
 * exists at each level, and runs in time linear in practice, so a hostile
 * pattern cannot make evaluation explode.
 */
#include "path.h"

#include <string.h>

bool path_has_glob(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == '*' || s[i] == '?')
			return true;
	return false;
}

/* The end of the component starting at in[s], checking its bytes on the
 * way: 0 and *err set on a NUL or a `**` inside a name. Every special
 * byte ('\0', '*', '/', '?') is at most '?', so letters cost one test. */
static size_t component_end(const char *in, size_t len, size_t s, bool *glob, const char **err)
{
	size_t i = s;
	for (; i < len; i++) {
		char c = in[i];
		if ((unsigned char)c > '?')
			continue;
		if (c == '/')
			break;
		if (c == '\0') {
			*err = "NUL byte in path";
			return 0;
		}
		if (c != '*' && c != '?')
			continue;
		*glob = true;
		/* a `**` that is not the whole component */
		if (c == '*' && i + 1 < len && in[i + 1] == '*' &&
		    !(i == s && (i + 2 == len || in[i + 2] == '/'))) {
			*err = "'**' must be a whole path component (use '*' within a name)";
			return 0;
		}
	}
	return i;
}

/* Whether in[0..len) is its own normal form, which is what policies
 * write almost always (and what a kept compile must hold): one '/'
 * before each component, none empty, "." or "..", no trailing '/', and
 * nothing the full walk would refuse (a NUL, a `**` inside a name, too
 * many components) - anything unusual answers false and is left to that
 * walk. Only bytes up to '/' need a
 * look: '\0', '*', '.' and '/' are all below it. */
bool path_is_normal(const char *in, size_t len)
{
	if (len == 0 || in[0] != '/' || (len > 1 && in[len - 1] == '/'))
		return false;
	const unsigned char *c = (const unsigned char *)in, *e = c + len;
	size_t depth = 0;
	while (c + 1 < e) {
		const unsigned char *n = c + 1; /* the component after the '/' at c */
		size_t left = (size_t)(e - n);
		size_t dots = n[0] == '.' ? (left > 1 && n[1] == '.' ? 2 : 1) : 0;
		if (n[0] == '/' || (dots && (dots == left || n[dots] == '/')) || ++depth > 1024)
			return false;
		for (c = n; c < e; c++) {
			if (*c > '/')
				continue;
			if (*c == '/')
				break;
			if (*c == '\0')
				return false;
			/* a `**` is a whole component or the walk's error */
			if (*c == '*' && c + 1 < e && c[1] == '*' &&
			    !(c[-1] == '/' && (c + 2 == e || c[2] == '/')))
				return false;
		}
	}
	return true;
}

bool path_normalize(struct arena *a, const char *in, size_t len, char **out, const char **err)
{
	if (path_is_normal(in, len)) {
		*out = arena_strndup(a, in, len);
		return true;
	}
	if (len == 0 || in[0] != '/') {
		*err = "path is not absolute";
		return false;
	}
	/* Start offsets of the components written so far, for "..". */
	enum { MAX_DEPTH = 1024 };
	size_t starts[MAX_DEPTH], depth = 0;
	char *buf = arena_alloc_raw(a, len + 2);
	size_t n = 0;
	bool glob_seen = false;
	size_t i = 0;
	while (i < len) {
		while (i < len && in[i] == '/')
			i++;
		size_t s = i;
		if (s == len)
			break;
		if (in[s] == '.' && (s + 1 == len || in[s + 1] == '/')) {
			i = s + 1;
			continue;
		}
		if (in[s] == '.' && s + 1 < len && in[s + 1] == '.' && (s + 2 == len || in[s + 2] == '/')) {
			i = s + 2;
			if (glob_seen) {
				*err = "'..' after a wildcard is ambiguous";
				return false;
			}
			if (depth == 0) {
				*err = "'..' climbs above /";
				return false;
			}
			n = starts[--depth];
			continue;
		}
		bool glob = false;
		i = component_end(in, len, s, &glob, err);
		if (i == 0)
			return false;
		glob_seen |= glob;
		if (depth == MAX_DEPTH) {
			*err = "path has more than 1024 components";
			return false;
		}
		starts[depth++] = n;
		buf[n++] = '/';
		memcpy(buf + n, in + s, i - s);
		n += i - s;
	}
	if (n == 0)
		buf[n++] = '/';
	buf[n] = '\0';
	*out = buf;
	return true;
}

bool path_query(struct arena *a, const char *home, const char *in, char **out,
		const char **err)
{
	const char *abs = in;
	if (in[0] == '~' && (in[1] == '/' || in[1] == '\0')) {
		if (!home) {
			*err = "'~' needs a home directory (set HOME or pass --home)";
			return false;
		}
		abs = arena_concat(a, home, in + 1);
	}
	if (!path_normalize(a, abs, strlen(abs), out, err))
		return false;
	if (path_has_glob(*out, strlen(*out))) {
		*err = "a query names one path, without wildcards";
		return false;
	}
	return true;
}

void path_classify(struct ir_path *p)
{
	const char *t = p->text;
	size_t first = strcspn(t, "*?");
	size_t len = first + strlen(t + first);
	p->len = (uint32_t)len;
	p->lit_prefix = (uint32_t)first;
	if (first == len)
		p->kind = IR_PAT_EXACT;
	else if (len >= 3 && first == len - 2 && t[len - 3] == '/' && t[len - 2] == '*' &&
		 t[len - 1] == '*')
		p->kind = IR_PAT_SUBTREE;
	else
		p->kind = IR_PAT_GLOB;
}

size_t path_char_len(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	unsigned char c = (unsigned char)s[0];
	/* a lead byte takes the continuation bytes after it (at most 3); any
	 * other byte (ASCII, a stray continuation byte) stands alone */
	size_t want = c >= 0xF0 && c < 0xF8 ? 4 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xC0 && c < 0xE0 ? 2 : 1;
	size_t k = 1;
	while (k < want && k < n && ((unsigned char)s[k] & 0xC0) == 0x80)
		k++;
	return k;
}

/* One component: `*` any run (no '/'), `?` one character. Characters are
 * UTF-8 sequences, so `?` matches the two bytes of 'ü' as one, and the
 * backtracking point after `*` moves a character at a time. */
bool path_component_match(const char *p, size_t pn, const char *s, size_t sn)
{
	size_t pi = 0, si = 0, star = (size_t)-1, mark = 0;
	while (si < sn) {
		if (pi < pn && p[pi] == '?') {
			pi++;
			si += path_char_len(s + si, sn - si);
		} else if (pi < pn && p[pi] == s[si]) {
			pi++;
			si++;
		} else if (pi < pn && p[pi] == '*') {
			star = pi++;
			mark = si;
		} else if (star != (size_t)-1) {
			pi = star + 1;
			mark += path_char_len(s + mark, sn - mark);
			si = mark;
		} else {
			return false;
		}
	}
	while (pi < pn && p[pi] == '*')
		pi++;
	return pi == pn;
}

size_t path_split(const char *t, struct path_comp *out, size_t max)
{
	size_t k = 0;
	while (*t) {
		while (*t == '/')
			t++;
		if (!*t)
			break;
		const char *s = t;
		while (*t && *t != '/')
			t++;
		if (k == max)
			return (size_t)-1;
		out[k].s = s;
		out[k].n = (size_t)(t - s);
		k++;
	}
	return k;
}

enum { PATH_MAX_COMPONENTS = 512 };

static bool glob_match(const char *pat, const char *path)
{
	struct path_comp pc[PATH_MAX_COMPONENTS], sc[PATH_MAX_COMPONENTS];
	size_t pn = path_split(pat, pc, PATH_MAX_COMPONENTS);
	size_t sn = path_split(path, sc, PATH_MAX_COMPONENTS);
	if (pn == (size_t)-1 || sn == (size_t)-1)
		return false;
	size_t pi = 0, si = 0, star = (size_t)-1, mark = 0;
	while (si < sn) {
		bool dstar = pi < pn && pc[pi].n == 2 && pc[pi].s[0] == '*' && pc[pi].s[1] == '*';
		if (pi < pn && !dstar && path_component_match(pc[pi].s, pc[pi].n, sc[si].s, sc[si].n)) {
			pi++;
			si++;
		} else if (dstar) {
			star = pi++;
			mark = si;
		} else if (star != (size_t)-1) {
			pi = star + 1;
			si = ++mark;
		} else {
			return false;
		}
	}
	while (pi < pn && pc[pi].n == 2 && pc[pi].s[0] == '*' && pc[pi].s[1] == '*')
		pi++;
	return pi == pn;
}

bool path_match(const struct ir_path *pat, const char *path)
{
	switch (pat->kind) {
	case IR_PAT_EXACT:
		return strcmp(pat->text, path) == 0;
	case IR_PAT_SUBTREE: {
		size_t plen = pat->len - 3; /* without the final slash and "**" */
		if (plen == 0)
			return path[0] == '/';
		return strncmp(pat->text, path, plen) == 0 &&
		       (path[plen] == '\0' || path[plen] == '/');
	}
	default:
		return glob_match(pat->text, path);
	}
}
