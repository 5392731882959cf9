/*
 * lnx_prep.c - set-up work on helper threads (see lnx_prep.h).
 */
#include "lnx_prep.h"

#include <stdio.h>

static void *job_main(void *arg)
{
	struct lnx_job *j = arg;
	j->fn(j);
	return NULL;
}

static void job_start(struct lnx_job *j, void (*fn)(struct lnx_job *))
{
	j->fn = fn;
	j->ok = false;
	j->running = pthread_create(&j->thread, NULL, job_main, j) == 0;
	if (!j->running)
		fn(j);
}

bool lnx_job_finish(struct lnx_job *j)
{
	if (j->running) {
		j->running = false;
		if (pthread_join(j->thread, NULL) != 0) {
			snprintf(j->err, sizeof j->err, "cannot join a set-up thread");
			j->ok = false;
		}
	}
	return j->ok;
}

static void sc_build(struct lnx_job *j)
{
	struct lnx_sc_job *s = (struct lnx_sc_job *)j;
	j->ok = lnx_seccomp_build(&s->opts, &s->prog, j->err, sizeof j->err);
}

void lnx_sc_job_start(struct lnx_sc_job *j, const struct lnx_seccomp_opts *o)
{
	j->opts = *o;
	job_start(&j->job, sc_build);
}

static void lease_build(struct lnx_job *j)
{
	struct lnx_lease_job *l = (struct lnx_lease_job *)j;
	j->ok = lease_create(l->lease, l->private_home, j->err, sizeof j->err);
}

void lnx_lease_job_start(struct lnx_lease_job *j, struct lease *l, bool private_home)
{
	j->lease = l;
	j->private_home = private_home;
	job_start(&j->job, lease_build);
}
