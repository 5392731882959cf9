/*
 * lint_secrets.h - the built-in list of places that hold credentials.
 *
 * The checker reports a grant that reaches one of these (`secret-exposed`)
 * whether or not the policy imports std/secrets: forgetting that import is
 * exactly the mistake worth catching.
 */
#ifndef CAGE_LINT_SECRETS_H
#define CAGE_LINT_SECRETS_H

#include <stddef.h>

struct lint_secret {
	const char *pattern; /* "~/..." (home-relative) or absolute; cage glob syntax */
	const char *what;    /* for messages: "SSH keys" */
};

const struct lint_secret *lint_secrets(size_t *n);

#endif
