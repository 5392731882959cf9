/*
 * bench_cpt.c - workload for the proxy table lookup benchmark
 * (testsuite/bench/cpt.sh times it as whole processes with bench_run).
 *
 *   bench_cpt gen N              a policy with N host rules on stdout
 *   bench_cpt load TABLE         map and validate the table, nothing else
 *   bench_cpt norm TABLE COUNT   + COUNT host normalisations (the anchor)
 *   bench_cpt lookup TABLE COUNT + COUNT normalise-and-lookup calls
 *
 * The policy: 80% exact names (every 16th a deny), 20% `*.suffix` rules,
 * some with ports. The queries (65,536 distinct strings, cycled) are one
 * third exact hits, one third wildcard hits one to three labels below a
 * suffix, one third misses shaped like the hits. All three query modes build
 * the same query list, so their difference is the work being measured. Each
 * prints a digest of its results so nothing can be optimised away and the
 * script can check the decisions are the expected mix.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpt.h"
#include "host.h"

enum { NQUERIES = 1 << 16, QMAX = 96 };

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Rule i is an exact name when i % 5 != 4, else a suffix. */
static int exact_name(char *buf, size_t n, unsigned long i)
{
	return snprintf(buf, n, "host%lu.svc%lu.example-%lu.com", i, i % 97, i % 1000);
}

static int suffix_name(char *buf, size_t n, unsigned long i)
{
	return snprintf(buf, n, "cdn%lu.example-%lu.net", i, i % 1000);
}

static int gen(unsigned long n)
{
	char name[QMAX];
	printf("cage 1\n# %lu host rules for bench_cpt (testsuite/bench/cpt.sh)\nprofile bench {\n", n);
	for (unsigned long i = 0; i < n; i++) {
		const char *effect = i % 16 == 15 ? "deny" : "allow";
		if (i % 5 == 4) {
			suffix_name(name, sizeof(name), i);
			printf("    %s connect \"*.%s%s\"\n", effect, name, i % 3 == 0 ? ":443" : "");
		} else {
			exact_name(name, sizeof(name), i);
			printf("    %s connect \"%s%s\"\n", effect, name,
			       i % 7 == 0 ? ":80,443" : i % 11 == 0 ? ":8000-8100" : "");
		}
	}
	puts("}");
	return ferror(stdout) ? 1 : 0;
}

/* Queries carry the rule count they were made for: derived from the table. */
static char (*make_queries(unsigned long nrules))[QMAX]
{
	char (*q)[QMAX] = malloc((size_t)NQUERIES * QMAX);
	uint64_t s = 0x9e3779b97f4a7c15ull;
	if (!q)
		return NULL;
	for (unsigned i = 0; i < NQUERIES; i++) {
		unsigned long r = (unsigned long)(rng(&s) % nrules);
		char name[QMAX];
		switch (i % 3) {
		case 0: /* exact hit: an exact-name rule */
			r -= r % 5 == 4 ? 1 : 0;
			exact_name(q[i], QMAX, r);
			break;
		case 1: { /* wildcard hit: 1-3 labels under a suffix rule */
			r = r - r % 5 + 4;
			if (r >= nrules)
				r -= 5;
			suffix_name(name, sizeof(name), r);
			unsigned depth = 1 + (unsigned)(rng(&s) % 3);
			int n = 0;
			for (unsigned d = 0; d < depth; d++)
				n += snprintf(q[i] + n, QMAX - (size_t)n, "w%u.", (unsigned)(rng(&s) % 100));
			snprintf(q[i] + n, QMAX - (size_t)n, "%s", name);
			break;
		}
		default: /* miss: same shape, names no rule has */
			if (rng(&s) & 1)
				snprintf(q[i], QMAX, "host%lu.svc%lu.example-%lu.com", r + nrules, r % 97,
					 r % 1000);
			else
				snprintf(q[i], QMAX, "w1.cdn%lu.example-%lu.org", r, r % 1000);
			break;
		}
	}
	return q;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "gen") == 0)
		return gen(strtoul(argv[2], NULL, 10));
	if (argc < 3 || (strcmp(argv[1], "load") != 0 && argc != 4)) {
		fputs("usage: bench_cpt gen N | load TABLE | norm TABLE COUNT | lookup TABLE COUNT\n",
		      stderr);
		return 2;
	}
	struct cpt_table t;
	struct cpt_error e;
	if (!cpt_open(&t, argv[2], &e)) {
		fprintf(stderr, "bench_cpt: %s: %s\n", argv[2], e.msg);
		return 1;
	}
	if (strcmp(argv[1], "load") == 0) {
		printf("rules=%u\n", cpt_rule_count(&t));
		cpt_close(&t);
		return 0;
	}
	unsigned long count = strtoul(argv[3], NULL, 10);
	char (*q)[QMAX] = make_queries(cpt_rule_count(&t) ? cpt_rule_count(&t) : 1);
	size_t *qlen = malloc(NQUERIES * sizeof(*qlen));
	if (!q || !qlen) {
		fputs("bench_cpt: out of memory\n", stderr);
		return 1;
	}
	for (unsigned i = 0; i < NQUERIES; i++)
		qlen[i] = strlen(q[i]);
	unsigned long allowed = 0, denied_rule = 0, denied_default = 0, bad = 0;
	uint64_t digest = 0;
	if (strcmp(argv[1], "norm") == 0) {
		for (unsigned long i = 0; i < count; i++) {
			struct host_norm h;
			unsigned k = (unsigned)(i & (NQUERIES - 1));
			if (host_normalize(q[k], qlen[k], &h) != HOST_OK)
				bad++;
			else
				digest += h.len + (unsigned char)h.name[0];
		}
		printf("normalised=%lu bad=%lu digest=%llu\n", count - bad, bad,
		       (unsigned long long)digest);
	} else if (strcmp(argv[1], "lookup") == 0) {
		for (unsigned long i = 0; i < count; i++) {
			struct cpt_result r;
			unsigned k = (unsigned)(i & (NQUERIES - 1));
			if (cpt_lookup_str(&t, q[k], qlen[k], 443, &r) != HOST_OK)
				bad++;
			else if (r.allowed)
				allowed++;
			else if (r.by_default)
				denied_default++;
			else
				denied_rule++;
		}
		printf("allowed=%lu denied_rule=%lu denied_default=%lu bad=%lu\n", allowed,
		       denied_rule, denied_default, bad);
	} else {
		fprintf(stderr, "bench_cpt: unknown mode '%s'\n", argv[1]);
		return 2;
	}
	free(q);
	free(qlen);
	cpt_close(&t);
	return bad ? 1 : 0;
}
