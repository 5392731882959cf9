/*
 * pimage.h - a compiled policy as bytes, and back: what cagerun keeps on
 * disk to run a request again without compiling it (cage.h's
 * cage_policy_image and cage_policy_from_image, which wrap these; the
 * format and what the reader checks: pimage.c).
 */
#ifndef CAGE_PIMAGE_H
#define CAGE_PIMAGE_H

#include <stdbool.h>
#include <stddef.h>

struct cage_policy;

/* p's image, malloc'd: false when p has none (diagnostics, no selected
 * profile, a pointer the format cannot name) or on OOM. */
bool pim_write(const struct cage_policy *p, unsigned char **out, size_t *n);
/* Reads the image at buf + off, n bytes, into p, whose arena and
 * diagnostics list the caller set up: p's IR and inputs are filled, and p
 * owns buf (malloc'd) from then on (p->image: its strings point into it),
 * also on failure. NULL, or what is wrong with the image, and then p holds
 * nothing the caller may use; it is only to be freed. */
const char *pim_read(struct cage_policy *p, unsigned char *buf, size_t off, size_t n);

#endif
