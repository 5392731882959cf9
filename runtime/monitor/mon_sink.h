/*
 * mon_sink.h - where a platform's observer hands each access: the sink
 * classifies it with the IR evaluator (the one `cagec explain` uses),
 * applies the recording toggles, writes the JSON line and counts it in the
 * summary. Thread-safe: the Linux observer and the proxy call it from
 * different threads.
 *
 * Memory stays flat however long the session: nothing is kept per access,
 * only the summary's bounded groups.
 */
#ifndef CAGE_MON_SINK_H
#define CAGE_MON_SINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mon_record.h"
#include "mon_summary.h"

struct ir_profile;

struct mon_opts {
	bool only_would_block;   /* record only what enforce would refuse (default on) */
	bool exclude_workspace;  /* do not record covered accesses under the workspace
	                            (default on; would-block ones are always recorded) */
	const char *workspace;   /* absolute, normalised; NULL: none */
	int log_fd;              /* JSON lines, -1 for none; not owned */
	const char *always[2];   /* directories every access to is covered, whatever the
	                            policy says (the run's private tmp and home); NULL: none */
	bool enforce;            /* records are denials (verdict "denied") */
};

struct mon_sink {
	const struct ir_profile *prof;
	struct mon_opts o;
	pthread_mutex_t mu;
	struct mon_summary sum;
	unsigned long seen, recorded, log_errors;
};

void mon_sink_init(struct mon_sink *s, const struct ir_profile *prof, const struct mon_opts *o);
void mon_sink_free(struct mon_sink *s);

/* The observer's question: is this access recorded? (classifies; cheap,
 * no I/O). Fills v with the verdict and the deciding rule. */
struct mon_class {
	enum mon_verdict verdict;
	const void *rule; /* const struct ir_rule *, NULL: no rule */
	bool record;
};
void mon_sink_classify_path(struct mon_sink *s, uint32_t access, const char *path,
			    struct mon_class *c);
void mon_sink_classify_host(struct mon_sink *s, const char *host, unsigned port,
			    struct mon_class *c);
/* Records r, whose verdict and rule come from c (r->verdict, r->rule and
 * r->rule_text are filled in here). */
void mon_sink_record(struct mon_sink *s, struct mon_record *r, const struct mon_class *c);
/* Records r as it is (already classified, e.g. the proxy's denials). */
void mon_sink_add(struct mon_sink *s, const struct mon_record *r);

/* Prints the summary (nothing when nothing was recorded). */
void mon_sink_print(struct mon_sink *s, FILE *out, const char *prefix);

int64_t mon_now_ms(void);

#endif
