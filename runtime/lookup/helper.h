/*
 * helper.h - where cagerun's helper programs are, and whether to run
 * them: cage-lookup (lookup.h) and cage-lint (layers_lint.h).
 *
 * A helper runs outside any sandbox with the caller's rights, so the file
 * found must be one only its owner could have put there, as for the
 * standard library (stdlib_dir.c).
 */
#ifndef CAGE_HELPER_H
#define CAGE_HELPER_H

#include <stdbool.h>
#include <stddef.h>

/* The reason for a failure into why (cut to whylen); returns false. A
 * path too long for a message is refused where it is built. */
bool helper_say(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The real path of `program`: beside the running program (a build tree),
 * else at the installed path relative to it (CAGE_LIBEXEC_REL, bin/ to
 * libexec/cage/). Either must be a regular file in a directory, neither
 * writable by group or others. false with the reason in `why`. */
bool helper_path(const char *program, char *out, size_t cap, char *why, size_t whylen);

/* A close-on-exec socket pair of `type` to talk to a helper: atomically
 * where the system can (Linux); on Darwin, which cannot, set just after,
 * where a fork by another thread in between would give its child a copy
 * it does not use. false with errno. */
bool helper_socketpair(int type, int sp[2]);

#endif
