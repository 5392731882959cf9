/*
 * target.h - parsing network and service targets as written in a policy:
 * host patterns with ports, IP literals, Mach service names.
 */
#ifndef CAGE_TARGET_H
#define CAGE_TARGET_H

#include "ir.h"

/* Parses "name", "*.suffix", "*", "1.2.3.4", "[::1]", each with an optional
 * ":port", ":p1,p2" or ":lo-hi" (lists may mix both). Returns false with a
 * message in *err (allocated in `a` or static). */
/* True (with *err saying what to write instead, e.g. "github.com:443")
 * when `s` is a URL rather than a host. */
bool target_reject_url(struct arena *a, const char *s, size_t len, const char **err);
bool target_parse_host(struct arena *a, const char *s, size_t len, struct ir_host *out,
		       const char **err);

/* "com.apple.trustd.agent" or a prefix "com.example.*". */
bool target_parse_mach(struct arena *a, const char *s, size_t len, struct ir_mach *out,
		       const char **err);

#endif
