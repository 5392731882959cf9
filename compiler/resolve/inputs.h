/*
 * inputs.h - what a compile looked at on disk, recorded as it loads the
 * main file and its imports, so that a compile kept for later (the
 * launcher's, docs/launcher.md "A compile kept ahead") can be checked
 * against the disk as it is now: every file read and its bytes, every
 * path probed on the search path and whether it was there, every real
 * path taken. A compile is a function of these, the options and the
 * environment (which the keeper compares itself): when all of them
 * answer as recorded, a fresh compile would make the same policy.
 */
#ifndef CAGE_INPUTS_H
#define CAGE_INPUTS_H

#include <stdbool.h>
#include <stddef.h>

enum input_kind {
	INPUT_PROBE, /* access(path, F_OK): there (err 0) or not (its errno) */
	INPUT_REAL,  /* realpath(path): `real`, or its errno */
	INPUT_FILE,  /* the file read at path: its bytes */
};

struct policy_input {
	enum input_kind kind;
	const char *path;
	int err;          /* PROBE, REAL: 0, or the errno the call failed with */
	const char *real; /* REAL */
	const char *text; /* FILE */
	size_t len;
};

struct cage_policy;

/* Asks every record of p again (cage.h's cage_inputs_unchanged). */
bool policy_inputs_unchanged(const struct cage_policy *p, const char **changed, size_t *n);

#endif
