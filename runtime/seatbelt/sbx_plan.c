/*
 * sbx_plan.c - the Seatbelt launch plan (see sbx_plan.h): which -D
 * parameters the profile declares, their values canonicalised and
 * validated, and the argv for execve.
 */
#include "sbx_plan.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Skips a string literal starting at text[i] == '"'; returns the index
 * after its closing quote (len if unterminated). Decodes it into buf when
 * buf is given (truncating at bufsz - 1). */
static size_t scan_string(const char *text, size_t len, size_t i, char *buf, size_t bufsz)
{
	size_t o = 0;
	for (i++; i < len && text[i] != '"'; i++) {
		if (text[i] == '\\' && i + 1 < len)
			i++;
		if (buf && o + 1 < bufsz)
			buf[o++] = text[i];
	}
	if (buf && bufsz)
		buf[o] = '\0';
	return i < len ? i + 1 : len;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int sbx_profile_params(const char *text, size_t len, char **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		char c = text[i];
		if (c == ';') {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		if (c == '"') {
			i = scan_string(text, len, i, NULL, 0);
			continue;
		}
		if (c != '(') {
			i++;
			continue;
		}
		size_t j = i + 1;
		while (j < len && is_space(text[j]))
			j++;
		if (len - j < 6 || memcmp(text + j, "param", 5) != 0 || !is_space(text[j + 5])) {
			i++;
			continue;
		}
		j += 5;
		while (j < len && is_space(text[j]))
			j++;
		if (j >= len || text[j] != '"') {
			i = j;
			continue;
		}
		char name[128];
		i = scan_string(text, len, j, name, sizeof name);
		bool seen = false;
		for (size_t k = 0; k < n; k++)
			seen |= strcmp(out[k], name) == 0;
		if (seen)
			continue;
		if (n == max)
			goto fail;
		if (!(out[n] = strdup(name)))
			goto fail;
		n++;
	}
	return (int)n;
fail:
	while (n)
		free(out[--n]);
	return -1;
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* /tmp, /var, /etc (exactly that component) as /private/... */
static char *map_private(char *p)
{
	static const char *const links[] = { "/tmp", "/var", "/etc" };
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(links[i]);
		if (strncmp(p, links[i], n) == 0 && (p[n] == '\0' || p[n] == '/')) {
			size_t len = strlen(p) + sizeof "/private";
			char *q = malloc(len);
			if (q)
				snprintf(q, len, "/private%s", p);
			free(p);
			return q;
		}
	}
	return p;
}

char *sbx_canonical_path(const char *path, const struct sbx_canon *c, char *err, size_t errlen)
{
	if (path[0] != '/') {
		snprintf(err, errlen, "%s: not an absolute path", path);
		return NULL;
	}
	if (has_control(path)) {
		snprintf(err, errlen, "a path holds a newline or another control character");
		return NULL;
	}
	const char *root = c && c->root && *c->root ? c->root : NULL;
	char joined[PATH_MAX], real[PATH_MAX], rootreal[PATH_MAX] = "";
	if (root) {
		if (!realpath(root, rootreal)) {
			snprintf(err, errlen, "%s: %s", root, strerror(errno));
			return NULL;
		}
		if ((size_t)snprintf(joined, sizeof joined, "%s%s", rootreal, path) >= sizeof joined) {
			snprintf(err, errlen, "%s: path too long", path);
			return NULL;
		}
	} else if ((size_t)snprintf(joined, sizeof joined, "%s", path) >= sizeof joined) {
		snprintf(err, errlen, "%s: path too long", path);
		return NULL;
	}
	if (!realpath(joined, real)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	const char *rel = real;
	if (root) {
		size_t rn = strlen(rootreal);
		if (strncmp(real, rootreal, rn) != 0 || (real[rn] != '/' && real[rn] != '\0')) {
			snprintf(err, errlen, "%s: resolves outside the test root", path);
			return NULL;
		}
		rel = real[rn] ? real + rn : "/";
	}
	char *out = strdup(rel);
#ifdef __APPLE__
	bool map = !c || c->map_private;
#else
	bool map = c && c->map_private;
#endif
	if (out && map)
		out = map_private(out);
	if (!out)
		snprintf(err, errlen, "out of memory");
	else if (has_control(out)) { /* a link may point at such a name */
		snprintf(err, errlen, "%s resolves to a path with a control character", path);
		free(out);
		out = NULL;
	}
	return out;
}

static bool valid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static bool valid_port(const char *s)
{
	char *e;
	errno = 0;
	long v = strtol(s, &e, 10);
	return *s >= '0' && *s <= '9' && !*e && !errno && v >= 1 && v <= 65535;
}

/* "NAME=VALUE" for one declared parameter, malloc'd; NULL with err set. */
static char *define_of(const struct sbx_plan_in *in, const char *name, char *err, size_t errlen)
{
	const struct sbx_value *v = NULL;
	for (size_t i = 0; i < in->nvalues; i++)
		if (!strcmp(in->values[i].name, name))
			v = &in->values[i];
	if (!valid_name(name)) {
		snprintf(err, errlen, "the profile declares a parameter with an unusable name");
		return NULL;
	}
	if (!v || !v->value) {
		snprintf(err, errlen, "the profile needs -D %s, and cagerun has no value for it", name);
		return NULL;
	}
	char *val = NULL;
	if (v->kind == SBX_PORT) {
		if (!valid_port(v->value)) {
			snprintf(err, errlen, "parameter %s: not a port number", name);
			return NULL;
		}
		val = strdup(v->value);
	} else {
		char why[PATH_MAX + 64];
		val = sbx_canonical_path(v->value, in->canon, why, sizeof why);
		if (!val) {
			snprintf(err, errlen, "parameter %s: %s", name, why);
			return NULL;
		}
	}
	size_t len = val ? strlen(name) + strlen(val) + 2 : 0;
	char *d = val ? malloc(len) : NULL;
	if (d)
		snprintf(d, len, "%s=%s", name, val);
	else
		snprintf(err, errlen, "out of memory");
	free(val);
	return d;
}

bool sbx_plan_build(const struct sbx_plan_in *in, struct sbx_plan *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (!in->argv || !in->argv[0] || !in->argv[0][0]) {
		snprintf(err, errlen, "no command to run");
		return false;
	}
	char *names[SBX_MAX_PARAMS];
	int nn = sbx_profile_params(in->profile_text, in->profile_len, names, SBX_MAX_PARAMS);
	if (nn < 0) {
		snprintf(err, errlen, "the profile declares more than %d parameters", SBX_MAX_PARAMS);
		return false;
	}
	size_t nargs = 0;
	while (in->argv[nargs])
		nargs++;
	/* sandbox-exec -f P, 2 per param, --, the command, NULL */
	size_t cap = 3 + 2 * (size_t)nn + 1 + nargs + 1;
	char **v = calloc(cap, sizeof *v);
	bool ok = v != NULL;
	size_t n = 0;
	if (!ok)
		snprintf(err, errlen, "out of memory");
	char why[PATH_MAX + 64];
	if (ok) {
		v[n++] = strdup(SBX_SANDBOX_EXEC);
		v[n++] = strdup("-f");
		v[n] = sbx_canonical_path(in->profile_path, in->canon, why, sizeof why);
		if (!v[n++]) {
			snprintf(err, errlen, "profile: %s", why);
			ok = false;
		}
	}
	for (int i = 0; ok && i < nn; i++) {
		v[n++] = strdup("-D");
		if (!(v[n++] = define_of(in, names[i], err, errlen)))
			ok = false;
	}
	if (ok) {
		v[n++] = strdup("--");
		for (size_t i = 0; i < nargs; i++)
			v[n++] = strdup(in->argv[i]);
		for (size_t i = 0; i < n; i++)
			if (!v[i]) {
				snprintf(err, errlen, "out of memory");
				ok = false;
				break;
			}
	}
	for (int i = 0; i < nn; i++)
		free(names[i]);
	out->argv = v;
	out->argc = n;
	out->envp = in->envp;
	if (!ok)
		sbx_plan_free(out);
	return ok;
}

void sbx_plan_free(struct sbx_plan *p)
{
	for (size_t i = 0; p->argv && i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
	memset(p, 0, sizeof *p);
}

bool sbx_check_exec(const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return false;
	}
	if (access(path, X_OK) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return false;
	}
	return true;
}
