/*
 * mon_sink.c - classify, gate, log and count observed accesses (see
 * mon_sink.h).
 */
#include "mon_sink.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ir.h"

#define MON_SUMMARY_GROUPS 512

int64_t mon_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void mon_sink_init(struct mon_sink *s, const struct ir_profile *prof, const struct mon_opts *o)
{
	memset(s, 0, sizeof *s);
	s->prof = prof;
	s->o = *o;
	pthread_mutex_init(&s->mu, NULL);
	mon_summary_init(&s->sum, MON_SUMMARY_GROUPS, false);
}

void mon_sink_free(struct mon_sink *s)
{
	mon_summary_free(&s->sum);
	pthread_mutex_destroy(&s->mu);
}

static bool under(const char *dir, const char *path)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(dir, path, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static void gate(struct mon_sink *s, bool allowed, const struct ir_rule *rule, bool in_ws,
		 struct mon_class *c)
{
	c->rule = rule;
	c->verdict = allowed ? MON_COVERED : s->o.enforce ? MON_DENIED : MON_WOULD_BLOCK;
	c->record = !allowed || (!s->o.only_would_block && !(s->o.exclude_workspace && in_ws));
}

void mon_sink_classify_path(struct mon_sink *s, uint32_t access, const char *path,
			    struct mon_class *c)
{
	for (size_t i = 0; i < 2; i++)
		if (s->o.always[i] && under(s->o.always[i], path)) {
			c->verdict = MON_COVERED;
			c->rule = NULL;
			c->record = false;
			return;
		}
	struct ir_verdict v;
	ir_eval_path(s->prof, access, path, &v);
	gate(s, v.allowed, v.rule, s->o.workspace && under(s->o.workspace, path), c);
}

void mon_sink_classify_host(struct mon_sink *s, const char *host, unsigned port,
			    struct mon_class *c)
{
	struct ir_verdict v;
	ir_eval_host(s->prof, host, port, &v);
	gate(s, v.allowed, v.rule, false, c);
}

static void add_locked(struct mon_sink *s, const struct mon_record *r)
{
	s->recorded++;
	if (s->o.log_fd >= 0 && !mon_record_write(s->o.log_fd, r))
		s->log_errors++;
	mon_summary_add(&s->sum, r);
}

void mon_sink_record(struct mon_sink *s, struct mon_record *r, const struct mon_class *c)
{
	const struct ir_rule *rule = c->rule;
	char loc[600] = "", text[1200] = "";
	if (rule && rule->loc.file)
		snprintf(loc, sizeof loc, "%s:%u:%u", rule->loc.file->name, rule->loc.line,
			 rule->loc.col);
	if (rule) {
		char acc[128], tgt[1000];
		ir_access_names(rule->access, acc, sizeof acc);
		ir_target_display(rule, tgt, sizeof tgt);
		snprintf(text, sizeof text, "%s %s %s", ir_effect_name(rule->effect), acc, tgt);
	}
	r->verdict = c->verdict;
	r->rule = loc[0] ? loc : NULL;
	r->rule_text = text[0] ? text : NULL;
	if (!r->count)
		r->count = 1;
	pthread_mutex_lock(&s->mu);
	s->seen++;
	add_locked(s, r);
	pthread_mutex_unlock(&s->mu);
}

void mon_sink_add(struct mon_sink *s, const struct mon_record *r)
{
	pthread_mutex_lock(&s->mu);
	add_locked(s, r);
	pthread_mutex_unlock(&s->mu);
}

void mon_sink_print(struct mon_sink *s, FILE *out, const char *prefix)
{
	pthread_mutex_lock(&s->mu);
	if (!mon_summary_empty(&s->sum))
		mon_summary_print(&s->sum, out, prefix);
	if (s->log_errors)
		fprintf(out, "%s%lu record%s could not be written to the log\n", prefix,
			s->log_errors, s->log_errors == 1 ? "" : "s");
	pthread_mutex_unlock(&s->mu);
}
