/*
 * runenv.h - the environment a sandboxed command starts with. Scrubbed by
 * default: only the names the policy keeps (`env keep`) pass from
 * cagerun's environment, then the policy's `env set` and `env unset` in
 * order, then what cagerun itself must set (TMPDIR, HOME for a private
 * home, the proxy, git's prompts and hooks switched off).
 */
#ifndef CAGE_RUNENV_H
#define CAGE_RUNENV_H

#include <stdbool.h>

#include "ir.h"

struct runenv_extra {
	const char *tmp;   /* TMPDIR */
	const char *home;  /* HOME, or NULL to leave it to the policy */
	const char *proxy; /* "http://127.0.0.1:PORT", or NULL */
	const char *prompt; /* PS1 (cagerun --shell), or NULL */
	/* NAME=VALUE entries that name the agents' own copies of their config
	 * (agentstate.h), NULL-terminated, or NULL. */
	const char *const *agent;
	/* The mode is enforce: files and network are both enclosed, and the
	 * command is told so (IS_SANDBOX=1). */
	bool enforce;
	/* Directories put first on PATH ("DIR:DIR"), as a version manager
	 * does for the program it runs (the command layer's shims), or NULL. */
	const char *path_prefix;
};

/* A NULL-terminated array, malloc'd (runenv_free frees it); NULL on OOM. */
char **runenv_build(const struct ir_profile *p, char *const *parent,
		    const struct runenv_extra *x);
void runenv_free(char **env);

#endif
