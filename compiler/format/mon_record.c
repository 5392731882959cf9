/*
 * mon_record.c - the access kinds, the JSON-lines form of a record and its
 * parser (see mon_record.h). The parser reads only the flat objects the
 * writer makes: string, integer and null values, no nesting.
 */
#include "mon_record.h"

#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "ir.h"
#include "jsonl.h"

static const struct {
	uint32_t bit;
	const char *name;
} kinds[] = {
	{ IR_A_READ, "read" },     { IR_A_READ_META, "read-metadata" },
	{ IR_A_WRITE, "write" },   { IR_A_CREATE, "create" },
	{ IR_A_DELETE, "delete" }, { IR_A_EXEC, "exec" },
	{ IR_A_CONNECT, "connect" }, { IR_A_UNIX, "unix" },
	{ IR_A_MACH, "mach" }, /* macOS: a Mach service, carried as the host */
};

const char *mon_access_name(uint32_t access)
{
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		if (kinds[i].bit == access)
			return kinds[i].name;
	return "?";
}

bool mon_access_parse(const char *name, uint32_t *access)
{
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		if (!strcmp(kinds[i].name, name)) {
			*access = kinds[i].bit;
			return true;
		}
	return false;
}

static const char *const verdicts[] = { "covered", "would-block", "denied" };

const char *mon_verdict_name(enum mon_verdict v)
{
	return (unsigned)v < 3 ? verdicts[v] : "?";
}

bool mon_verdict_parse(const char *name, enum mon_verdict *v)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(verdicts[i], name)) {
			*v = (enum mon_verdict)i;
			return true;
		}
	return false;
}

bool mon_record_write(int fd, const struct mon_record *r)
{
	struct jl_buf b;
	jl_begin(&b, r->time_ms);
	if (r->pid)
		jl_fmt(&b, ",\"pid\":%ld", r->pid);
	else
		jl_put(&b, ",\"pid\":null", 11);
	jl_str(&b, "exe", r->exe);
	jl_str(&b, "syscall", r->syscall);
	jl_str(&b, "access", mon_access_name(r->access));
	if (r->path) {
		jl_str(&b, "path", r->path);
	} else {
		jl_str(&b, "host", r->host);
		jl_fmt(&b, ",\"port\":%u", r->port);
	}
	jl_str(&b, "verdict", mon_verdict_name(r->verdict));
	jl_str(&b, "rule", r->rule);
	jl_str(&b, "rule_text", r->rule_text);
	jl_fmt(&b, ",\"count\":%lu", r->count ? r->count : 1);
	return jl_end_write(&b, fd);
}

/* ---- parsing ---- */

/* Unescapes the string starting after its opening quote, in place.
 * Returns the position after the closing quote, or NULL. Only \u00XX
 * escapes (what the writer makes) and the short escapes are accepted. */
static char *parse_string(char *p, char **out)
{
	char *w = p;
	*out = p;
	while (*p && *p != '"') {
		if (*p != '\\') {
			*w++ = *p++;
			continue;
		}
		p++;
		switch (*p) {
		case '"': case '\\': case '/':
			*w++ = *p++;
			break;
		case 'n': *w++ = '\n'; p++; break;
		case 't': *w++ = '\t'; p++; break;
		case 'r': *w++ = '\r'; p++; break;
		case 'u': {
			/* Digit by digit: a line may end (NUL) inside the escape,
			 * and nothing after that NUL may be read. */
			int v[4];
			for (int i = 0; i < 4; i++)
				if ((v[i] = host_hex_val((unsigned char)p[1 + i])) < 0)
					return NULL;
			if (v[0] != 0 || v[1] != 0 || (v[2] == 0 && v[3] == 0))
				return NULL;
			*w++ = (char)(v[2] * 16 + v[3]);
			p += 5;
			break;
		}
		default:
			return NULL;
		}
	}
	if (*p != '"')
		return NULL;
	*w = '\0';
	return p + 1;
}

static char *skip_ws(char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

static bool set_field(struct mon_record *r, const char *key, char *s, long long num, bool is_num,
		      bool *have_verdict, bool *have_access)
{
	if (!strcmp(key, "pid")) {
		r->pid = is_num ? (long)num : 0;
	} else if (!strcmp(key, "port")) {
		if (is_num && num >= 0 && num <= 65535)
			r->port = (unsigned)num;
	} else if (!strcmp(key, "count")) {
		if (is_num && num > 0)
			r->count = (unsigned long)num;
	} else if (is_num) {
		return true; /* unknown numeric field: ignored */
	} else if (!strcmp(key, "exe")) {
		r->exe = s;
	} else if (!strcmp(key, "syscall")) {
		r->syscall = s;
	} else if (!strcmp(key, "path")) {
		r->path = s;
	} else if (!strcmp(key, "host")) {
		r->host = s;
	} else if (!strcmp(key, "rule")) {
		r->rule = s;
	} else if (!strcmp(key, "rule_text")) {
		r->rule_text = s;
	} else if (!strcmp(key, "access")) {
		if (!s || !mon_access_parse(s, &r->access))
			return false;
		*have_access = true;
	} else if (!strcmp(key, "verdict")) {
		if (!s || !mon_verdict_parse(s, &r->verdict))
			return false;
		*have_verdict = true;
	}
	return true;
}

bool mon_record_parse(char *line, struct mon_record *r)
{
	memset(r, 0, sizeof *r);
	r->count = 1;
	bool have_verdict = false, have_access = false;
	char *p = skip_ws(line);
	if (*p++ != '{')
		return false;
	p = skip_ws(p);
	if (*p == '}')
		return false;
	for (;;) {
		char *key;
		if (*p++ != '"' || !(p = parse_string(p, &key)))
			return false;
		p = skip_ws(p);
		if (*p++ != ':')
			return false;
		p = skip_ws(p);
		char *s = NULL;
		long long num = 0;
		bool is_num = false;
		if (*p == '"') {
			if (!(p = parse_string(p + 1, &s)))
				return false;
		} else if (!strncmp(p, "null", 4)) {
			p += 4;
		} else if (*p == '-' || (*p >= '0' && *p <= '9')) {
			char *e;
			num = strtoll(p, &e, 10);
			if (e == p)
				return false;
			is_num = true;
			p = e;
		} else {
			return false; /* true/false/nesting: not ours */
		}
		if (!strcmp(key, "time") && s) {
			/* kept as text by readers that need it; the epoch value
			 * is not needed to report or suggest */
		} else if (!set_field(r, key, s, num, is_num, &have_verdict, &have_access)) {
			return false;
		}
		p = skip_ws(p);
		if (*p == ',') {
			p = skip_ws(p + 1);
			continue;
		}
		if (*p != '}')
			return false;
		break;
	}
	if (!have_verdict || !have_access)
		return false;
	if (r->access == IR_A_CONNECT || r->access == IR_A_MACH)
		return r->host != NULL && r->path == NULL;
	/* A file record names a path and no host, as mon_record_write writes
	 * it; one with both would be summarised as one thing and written back
	 * as another. */
	return r->path != NULL && r->path[0] == '/' && r->host == NULL;
}
