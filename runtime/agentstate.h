/*
 * agentstate.h - the copies cagerun keeps of agent config files that mix
 * the agent's working state with commands the agent starts later.
 *
 * Claude Code's ~/.claude.json holds both: the state it saves on every
 * start (projects, the signed-in account, first-start flags) and
 * `mcpServers`, commands it runs. Inside the cage the file the agent reads
 * outside must not change, yet the agent must save its state from one
 * caged run to the next. So a policy that imports the agent's module runs
 * the agent on a copy of its own (docs/security-model.md, "Agent state"),
 * named through the agent's own variable and seeded from the user's file
 * the first time.
 */
#ifndef CAGE_AGENTSTATE_H
#define CAGE_AGENTSTATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ir.h"

#define AGENTSTATE_ENV_MAX 4

struct agentstate {
	/* NAME=VALUE entries the command's environment gets, NULL-terminated;
	 * they point into buf. */
	const char *env[AGENTSTATE_ENV_MAX + 1];
	char buf[AGENTSTATE_ENV_MAX][PATH_MAX + 64];
	size_t n;
	/* The copy in use ("" when the policy imports no such module). */
	char copy[PATH_MAX];
	/* Folders only caged runs use (an agent's copy folder that its
	 * outside runs never read, e.g. ~/.codex/.cage-home): the create
	 * guard lets the command make links there (lnx_guard.c). */
	char own[AGENTSTATE_ENV_MAX][PATH_MAX];
	size_t nown;
	bool seeded; /* the copy was made by this run */
};

/* Prepares the copy for each agent module `ir` imports: its folder (made
 * 0700 when missing) and, when the copy is missing, a copy of the user's
 * file. Runs as the user, before the sandbox. False with a message in err
 * when a step fails (nothing is run then). */
bool agentstate_prepare(const struct ir_policy *ir, struct agentstate *st, char *err,
			size_t errlen);

/* For --show: what agentstate_prepare sets up for `ir`, one line per
 * agent, under a heading; nothing when the policy imports none of them. */
void agentstate_show(const struct ir_policy *ir, FILE *out);

#endif
