/*
 * sbx_plan.h - the launch plan of the macOS (Seatbelt) launcher, as a pure
 * function: from the compiled profile's text, the values cagerun has for
 * its parameters, the profile's path and the user's argv, the exact argv
 * (and environment) for execve(2):
 *
 *   /usr/bin/sandbox-exec -f PROFILE [-D NAME=VALUE]... -- COMMAND [ARG]...
 *
 * sandbox-exec is the fixed path, never looked up on PATH. One -D per
 * parameter the profile declares (every `(param "NAME")` in it: a missing
 * one is #f and breaks the profile, so a declared name without a value is
 * an error). Path values and the profile path are canonicalised (realpath,
 * then the /private spelling of /tmp, /var, /etc) and validated: absolute,
 * no control character, existing. The command is passed verbatim after
 * `--`: it never goes into the profile or a shell string.
 *
 * Portable: built and tested on every platform (the Linux tests use the
 * root seam below to give realpath a macOS-like tree with /private).
 */
#ifndef CAGE_SBX_PLAN_H
#define CAGE_SBX_PLAN_H

#include <stdbool.h>
#include <stddef.h>

/* Fixed. Only the test program cagerun_fakesbx (testsuite/cmake/seatbelt.cmake)
 * is compiled with another path, a script that checks what it is given
 * and runs the command without any sandbox; no build of cagerun takes it
 * from the environment or the command line. */
#ifndef SBX_SANDBOX_EXEC
#define SBX_SANDBOX_EXEC "/usr/bin/sandbox-exec"
#endif

/* Most parameters a profile may declare (three exist today). */
#define SBX_MAX_PARAMS 16

enum sbx_kind {
	SBX_PATH, /* canonicalised, must exist */
	SBX_PORT, /* 1..65535, decimal */
};

struct sbx_value {
	const char *name;
	const char *value; /* NULL: cagerun has no value (an error if declared) */
	enum sbx_kind kind;
};

/* How paths are resolved. root == NULL or "": the real filesystem. A root
 * directory makes every path resolve below it (as a chroot would, for
 * relative links only) and the result is given without the root prefix:
 * the tests' seam for a tree whose /tmp links to /private/tmp.
 * map_private: after resolving, write /tmp, /var, /etc as /private/...
 * (a no-op on a real Mac, where realpath already returns /private/...). */
struct sbx_canon {
	const char *root;
	bool map_private;
};

struct sbx_plan_in {
	const char *profile_text;
	size_t profile_len;
	const char *profile_path;
	const struct sbx_value *values;
	size_t nvalues;
	char *const *argv;      /* the command, verbatim; argv[0] non-empty */
	char *const *envp;      /* copied by pointer into the plan */
	const struct sbx_canon *canon; /* NULL: the real filesystem, the host's mapping */
};

struct sbx_plan {
	char **argv;       /* malloc'd, with every string malloc'd; NULL-terminated */
	char *const *envp; /* the input's */
	size_t argc;
};

/* The names in `(param "NAME")` forms of a profile, in order of first
 * appearance, skipping comments and other strings. Returns the count (at
 * most max; more is an error: -1), names malloc'd into out. */
int sbx_profile_params(const char *text, size_t len, char **out, size_t max);

/* Canonical form of an existing absolute path (see sbx_canon), malloc'd;
 * NULL with a reason in err. */
char *sbx_canonical_path(const char *path, const struct sbx_canon *c, char *err, size_t errlen);

/* Builds the plan; false with one line naming the cause in err. */
bool sbx_plan_build(const struct sbx_plan_in *in, struct sbx_plan *out, char *err, size_t errlen);
void sbx_plan_free(struct sbx_plan *p);

/* Whether `path` is a regular file this process may execute; false with
 * the reason in err (errno text, or "not a regular file"). */
bool sbx_check_exec(const char *path, char *err, size_t errlen);

#endif
