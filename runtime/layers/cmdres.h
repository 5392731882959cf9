/*
 * cmdres.h - what `cagerun -- COMMAND` (the layered form) needs to start
 * COMMAND however it was installed: COMMAND found on the PATH cagerun was
 * given, followed through symlinks, `#!` interpreters (`#!/usr/bin/env
 * node` included) and the shim formats it knows, to the files the exec
 * reads and runs. The "command" layer grants read and exec on exactly
 * those (docs/cagerun.md, "The command layer").
 *
 * Resolution runs outside the sandbox, before it starts. Each file is
 * reached through its real path and pinned with an O_PATH descriptor
 * while it is checked; a file or any directory above it that others may
 * write (without the sticky bit) is refused, as is a path a policy string
 * cannot name. Symlink hops are bounded by the kernel (40), interpreters
 * by CMD_MAX_DEPTH, grants by CMD_MAX_GRANTS. A version manager's shim
 * (asdf, mise, volta) is followed from the manager's own files to the
 * program it would run (shims.h); the manager is not run.
 */
#ifndef CAGE_CMDRES_H
#define CAGE_CMDRES_H

#include <stdbool.h>
#include <stddef.h>

enum { CMD_MAX_DEPTH = 4, CMD_MAX_GRANTS = 16, CMD_MAX_STEPS = 16 };

struct cmd_grant {
	char *path;      /* a real path */
	bool tree;       /* the directory and everything under it */
	const char *why; /* "the program", "its package", "its interpreter", ... */
};

struct cmd_res {
	char *found;                 /* where COMMAND was found (a PATH entry + name) */
	char *steps[CMD_MAX_STEPS];  /* the chain, one line each, for --show */
	size_t nsteps;
	struct cmd_grant g[CMD_MAX_GRANTS];
	size_t n;
	/* COMMAND was a version manager's shim (shims.h): the program it
	 * resolved to, run instead of the shim, and the directories the
	 * manager puts first on PATH ("DIR:DIR"); both NULL otherwise. */
	char *exec;
	char *path_prefix;
};

enum cmd_status {
	CMD_OK,        /* r holds the grants */
	CMD_NOT_FOUND, /* not on PATH: the exec will say so (127) */
	CMD_REFUSED,   /* cannot be made to run: err names the path and the line to add */
};

/* Resolves `cmd` (a name looked up on `path_env`, or a path with a slash,
 * relative to the current directory). On CMD_REFUSED err says why, the
 * path, and the policy line that would grant it. r is zeroed first;
 * cmd_res_free releases it in every case. */
enum cmd_status cmd_resolve(const char *cmd, const char *path_env, struct cmd_res *r, char *err,
			    size_t errlen);

/* The command layer's policy text (malloc'd): one `allow read exec` per
 * grant, each with its reason. NULL when out of memory. */
char *cmd_layer_text(const struct cmd_res *r, const char *cmd);

void cmd_res_free(struct cmd_res *r);

#endif
