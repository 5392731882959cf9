/*
 * mon_summary.h - the records of a run counted by folder and by host, for
 * the summary cagerun prints at exit and `cagec monitor-report` prints
 * from a log. The number of groups is bounded: a session touching endless
 * folders cannot grow it; what falls past the bound is counted as
 * "other".
 */
#ifndef CAGE_MON_SUMMARY_H
#define CAGE_MON_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "mon_record.h"

struct mon_group {
	enum mon_verdict verdict;
	bool is_host;
	char *key;           /* folder (or, detailed, the path) or host name */
	unsigned port;
	uint32_t access;     /* IR_A_* bits seen */
	unsigned long count;
	char *rule;          /* the deciding rule of the first record, or NULL */
};

struct mon_summary {
	struct mon_group *g;
	size_t n, cap;   /* groups in use; hash slots (power of two) */
	size_t *slot;    /* index+1 into g, 0 = empty */
	size_t max;      /* bound on groups */
	bool detailed;   /* group by the path itself, not its folder */
	unsigned long other[3], total[3];
	bool oom;
};

void mon_summary_init(struct mon_summary *s, size_t max_groups, bool detailed);
/* Counts r. Returns false only when memory ran out (then r is counted as
 * "other"). */
bool mon_summary_add(struct mon_summary *s, const struct mon_record *r);
/* would-block first, then denied, then covered; each by folder, then by
 * host; most frequent first. Every line starts with `prefix`. */
void mon_summary_print(const struct mon_summary *s, FILE *out, const char *prefix);
bool mon_summary_empty(const struct mon_summary *s);
void mon_summary_free(struct mon_summary *s);

#endif
