/*
 * yolo.c - the one table of agents' skip-permission switches (yolo.h). The
 * policy language has no place to declare them, so they live here, one row
 * per spelling, for every agent that has a module in std/agents/.
 */
#include "yolo.h"

#include <stdbool.h>
#include <string.h>

static const struct yolo_flag table[] = {
	/* Claude Code (std/agents/claude) */
	{ "claude", "--dangerously-skip-permissions", NULL },
	{ "claude", "--permission-mode", "bypassPermissions" },
	/* Codex CLI (std/agents/codex) */
	{ "codex", "--dangerously-bypass-approvals-and-sandbox", NULL },
	{ "codex", "--yolo", NULL },
	/* Gemini CLI (std/agents/gemini) */
	{ "gemini", "--yolo", NULL },
	{ "gemini", "-y", NULL },
	{ "gemini", "--approval-mode", "yolo" },
};

const struct yolo_flag *yolo_flags(size_t *n)
{
	*n = sizeof table / sizeof table[0];
	return table;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* `arg` (and the one after it) spell row `y`. */
static bool matches(const struct yolo_flag *y, const char *arg, const char *next)
{
	size_t n = strlen(y->flag);
	if (strncmp(arg, y->flag, n) != 0)
		return false;
	if (!y->value)
		return arg[n] == '\0' || (arg[n] == '=' && strncmp(y->flag, "--", 2) == 0);
	if (arg[n] == '=')
		return strcmp(arg + n + 1, y->value) == 0;
	return arg[n] == '\0' && next && strcmp(next, y->value) == 0;
}

const struct yolo_flag *yolo_find(char *const *argv)
{
	if (!argv || !argv[0])
		return NULL;
	const char *agent = base_name(argv[0]);
	for (size_t a = 1; argv[a]; a++) {
		if (strcmp(argv[a], "--") == 0)
			break; /* what follows is the agent's own operands */
		for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
			if (strcmp(table[i].agent, agent) == 0 && matches(&table[i], argv[a], argv[a + 1]))
				return &table[i];
	}
	return NULL;
}
