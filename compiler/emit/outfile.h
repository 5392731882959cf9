/*
 * outfile.h - writing an output file all-or-nothing: the new content goes
 * to a temporary file beside the target and is renamed over it only when
 * complete, so a failed compile never leaves a truncated profile behind
 * (a truncated allow-list might still load and mean something else).
 * A target that exists and is not a regular file (/dev/null, /dev/stdout, a
 * FIFO) is written in place: renaming over it would replace a device node
 * with a file, which for root means destroying /dev/null.
 */
#ifndef CAGE_OUTFILE_H
#define CAGE_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

struct outfile {
	FILE *fp;
	char *tmp;
	char *path;
};

bool outfile_open(struct outfile *o, const char *path, char *err, size_t errlen);
bool outfile_commit(struct outfile *o, char *err, size_t errlen);
void outfile_abort(struct outfile *o);

#endif
