/*
 * trust.h - the user's approvals of project layers (`cagerun trust`), like
 * direnv's `allow`: one line per approved file, its XXH3 fingerprint and
 * real path, in CONFIG/cage/trust (CONFIG is $XDG_CONFIG_HOME when it is
 * an absolute path, else ~/.config). An approval holds for that exact
 * content only: editing the file revokes it.
 */
#ifndef CAGE_TRUST_H
#define CAGE_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CONFIG/cage into buf; false (with why in err) when neither
 * XDG_CONFIG_HOME nor HOME is an absolute path. */
bool trust_config_dir(char *buf, size_t size, char *err, size_t errlen);

/* Whether `realpath` is approved with fingerprint `fp`. A missing store
 * approves nothing. */
bool trust_is_approved(const char *cfgdir, const char *realpath, uint64_t fp);

/* Creates CONFIG/cage (0700, parents too) if missing. */
bool trust_make_dir(const char *cfgdir, char *err, size_t errlen);

/* Records the approval (replacing any older one of the same path),
 * creating CONFIG/cage (0700) and writing the store atomically (0600). */
bool trust_approve(const char *cfgdir, const char *realpath, uint64_t fp, char *err,
		   size_t errlen);

/* XXH3-64 of a file's bytes, read once; false with err on failure. */
bool trust_hash_file(const char *path, uint64_t *fp, char *err, size_t errlen);

#endif
