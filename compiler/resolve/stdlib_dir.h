/*
 * stdlib_dir.h - where `import "std/..."` is found when no --stdlib is
 * given: beside the running program in an installed (or moved, or
 * packaged) tree, in the source tree for a program in its build tree, else
 * where the build was configured to install it.
 */
#ifndef CAGE_STDLIBDIR_H
#define CAGE_STDLIBDIR_H

#include <stdbool.h>
#include <stddef.h>

enum stdlib_origin {
	STDLIB_BESIDE_PROGRAM, /* EXE_DIR/CAGE_STDLIB_REL (../share/cage/stdlib) */
	STDLIB_SOURCE_TREE,    /* the program runs from its build tree */
	STDLIB_CONFIGURED,     /* CAGE_STDLIB_DIR, the configured install path */
};

/* Writes the default standard library directory to out (always
 * NUL-terminated) and says how it was chosen. The program's own path comes
 * from the kernel (/proc/self/exe on Linux, _NSGetExecutablePath on macOS)
 * and is resolved with realpath(3); a directory beside it is taken only if
 * it is a directory that neither group nor others may write (a writable one
 * would let another user rewrite every policy's imports). */
enum stdlib_origin stdlib_dir_default(char *out, size_t cap);

/* The running program's resolved path (no symlinks, no ".."), as found
 * above; cap must be at least PATH_MAX. Also where cagerun finds its
 * cage-lookup helper (runtime/lookup/). */
bool stdlib_program_path(char *out, size_t cap);

/* "installed beside the program", "the source tree", "configured at build
 * time": for messages. */
const char *stdlib_origin_name(enum stdlib_origin o);

#endif
