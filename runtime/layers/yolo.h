/*
 * yolo.h - the agents' own "ask me nothing" switches. An agent started with
 * one of them runs every tool call without asking its user; that is safe
 * only when the cage is the boundary, so cagerun lets it through under
 * `enforce` and refuses it under any other mode unless told otherwise.
 */
#ifndef CAGE_YOLO_H
#define CAGE_YOLO_H

#include <stddef.h>

struct yolo_flag {
	const char *agent; /* the command's base name: "claude", "codex", ... */
	const char *flag;  /* the option as typed */
	const char *value; /* for `--opt VALUE` / `--opt=VALUE` forms; NULL for a switch */
};

/* The whole table, for docs and tests. */
const struct yolo_flag *yolo_flags(size_t *n);

/* The first skip-permission switch in the command line (argv[0] names the
 * agent), or NULL. */
const struct yolo_flag *yolo_find(char *const *argv);

#endif
