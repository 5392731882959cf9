/*
 * mon_summary.c - counting records by (verdict, folder or host) in a
 * bounded hash table, and printing them (see mon_summary.h).
 */
#include "mon_summary.h"

#include <stdlib.h>
#include <string.h>

#include "ir.h"

void mon_summary_init(struct mon_summary *s, size_t max_groups, bool detailed)
{
	memset(s, 0, sizeof *s);
	s->max = max_groups;
	s->detailed = detailed;
}

void mon_summary_free(struct mon_summary *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->g[i].key);
		free(s->g[i].rule);
	}
	free(s->g);
	free(s->slot);
	memset(s, 0, sizeof *s);
}

static uint64_t hash(enum mon_verdict v, bool is_host, unsigned port, const char *key, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ ((uint64_t)v << 1) ^ is_host ^ ((uint64_t)port << 8);
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)key[i]) * 1099511628211ull;
	return h;
}

static bool grow(struct mon_summary *s)
{
	size_t ncap = s->cap ? s->cap * 2 : 64;
	size_t *slot = calloc(ncap, sizeof *slot);
	struct mon_group *g = realloc(s->g, ncap / 2 * sizeof *g);
	if (!slot || !g) {
		free(slot);
		if (g)
			s->g = g;
		return false;
	}
	s->g = g;
	for (size_t i = 0; i < s->n; i++) {
		const struct mon_group *e = &g[i];
		size_t j = hash(e->verdict, e->is_host, e->port, e->key, strlen(e->key)) & (ncap - 1);
		while (slot[j])
			j = (j + 1) & (ncap - 1);
		slot[j] = i + 1;
	}
	free(s->slot);
	s->slot = slot;
	s->cap = ncap;
	return true;
}

bool mon_summary_add(struct mon_summary *s, const struct mon_record *r)
{
	unsigned long c = r->count ? r->count : 1;
	unsigned vi = (unsigned)r->verdict < 3 ? (unsigned)r->verdict : 0;
	s->total[vi] += c;
	bool is_host = r->path == NULL;
	const char *key = is_host ? (r->host ? r->host : "") : r->path;
	size_t len = strlen(key);
	if (!is_host && !s->detailed) {
		/* the folder: everything up to the last '/' ("/" for top level) */
		const char *sl = strrchr(key, '/');
		len = sl && sl != key ? (size_t)(sl - key) : 1;
	}
	unsigned port = is_host ? r->port : 0;
	if (s->cap) {
		size_t j = hash(r->verdict, is_host, port, key, len) & (s->cap - 1);
		for (; s->slot[j]; j = (j + 1) & (s->cap - 1)) {
			struct mon_group *e = &s->g[s->slot[j] - 1];
			if (e->verdict == r->verdict && e->is_host == is_host && e->port == port &&
			    strlen(e->key) == len && !memcmp(e->key, key, len)) {
				e->count += c;
				e->access |= r->access;
				return true;
			}
		}
	}
	if (s->n >= s->max || s->oom) {
		s->other[vi] += c;
		return !s->oom;
	}
	if ((s->n + 1) * 2 > s->cap && !grow(s)) {
		s->oom = true;
		s->other[vi] += c;
		return false;
	}
	struct mon_group *e = &s->g[s->n];
	memset(e, 0, sizeof *e);
	e->key = strndup(key, len);
	e->rule = r->rule ? strdup(r->rule) : NULL;
	if (!e->key || (r->rule && !e->rule)) {
		free(e->key);
		free(e->rule);
		s->oom = true;
		s->other[vi] += c;
		return false;
	}
	e->verdict = r->verdict;
	e->is_host = is_host;
	e->port = port;
	e->access = r->access;
	e->count = c;
	size_t j = hash(r->verdict, is_host, port, key, len) & (s->cap - 1);
	while (s->slot[j])
		j = (j + 1) & (s->cap - 1);
	s->slot[j] = ++s->n;
	return true;
}

bool mon_summary_empty(const struct mon_summary *s)
{
	return !s->total[0] && !s->total[1] && !s->total[2];
}

static int by_count(const void *a, const void *b)
{
	const struct mon_group *x = *(const struct mon_group *const *)a;
	const struct mon_group *y = *(const struct mon_group *const *)b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->port > y->port) - (x->port < y->port);
}

static void access_list(uint32_t access, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (uint32_t bit = 1; bit <= IR_A_UNIX && n < size; bit <<= 1) {
		if (!(access & bit))
			continue;
		int w = snprintf(buf + n, size - n, "%s%s", n ? "," : "", mon_access_name(bit));
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

void mon_summary_print(const struct mon_summary *s, FILE *out, const char *prefix)
{
	static const enum mon_verdict order[] = { MON_WOULD_BLOCK, MON_DENIED, MON_COVERED };
	const struct mon_group **v = malloc((s->n ? s->n : 1) * sizeof *v);
	if (!v) {
		fprintf(out, "%sout of memory printing the summary\n", prefix);
		return;
	}
	for (size_t o = 0; o < 3; o++) {
		enum mon_verdict vd = order[o];
		if (!s->total[vd])
			continue;
		fprintf(out, "%s%s: %lu access%s\n", prefix, mon_verdict_name(vd), s->total[vd],
			s->total[vd] == 1 ? "" : "es");
		for (int hosts = 0; hosts < 2; hosts++) {
			size_t k = 0;
			for (size_t i = 0; i < s->n; i++)
				if (s->g[i].verdict == vd && s->g[i].is_host == hosts)
					v[k++] = &s->g[i];
			if (!k)
				continue;
			qsort(v, k, sizeof *v, by_count);
			fprintf(out, "%s  by %s:\n", prefix,
				hosts ? "host" : s->detailed ? "path" : "folder");
			for (size_t i = 0; i < k; i++) {
				char acc[128], tgt[4200];
				access_list(v[i]->access, acc, sizeof acc);
				if (hosts)
					snprintf(tgt, sizeof tgt, "%s:%u", v[i]->key, v[i]->port);
				else
					snprintf(tgt, sizeof tgt, "%s%s", v[i]->key,
						 s->detailed || !strcmp(v[i]->key, "/") ? "" : "/");
				fprintf(out, "%s  %8lu  %-24s %s  (%s)\n", prefix, v[i]->count, acc, tgt,
					v[i]->rule ? v[i]->rule : "no rule");
			}
		}
		if (s->other[vd])
			fprintf(out, "%s  %8lu  in other places (past the summary's bound of %zu)\n",
				prefix, s->other[vd], s->max);
	}
	free(v);
}
