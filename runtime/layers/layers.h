/*
 * layers.h - the policy cagerun runs under when no -p names one: layers
 * found automatically and composed in order under last-match-wins
 * (docs/cagerun.md, "Layers"; why it is built this way:
 * docs/design-notes.md):
 *
 *   defaults   std/base, std/secrets, std/guard (when the stdlib has it)
 *   workspace  cagerun/workspace: the project's root, read, write, exec
 *   command    what starting the command needs, resolved from PATH
 *              (cmdres.h), generated
 *   agent      std/agents/NAME, then CONFIG/cage/agents/NAME.cage, NAME
 *              being the command's base name
 *   project    .cage/policy.cage, the nearest from the current directory
 *              up to the repository's root; untrusted until approved
 *   task       --task FILE
 *
 * With -p POLICY that one file is the whole policy, as written.
 */
#ifndef CAGE_LAYERS_H
#define CAGE_LAYERS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cage.h"
#include "cmdres.h"
#include "layers_lint.h"

enum { LAYERS_MAX = 12 };

struct layer_src {
	const char *kind;   /* "defaults", "workspace", "command", "agent", "project", "task",
	                       "policy" */
	char *import;       /* as imported by the composition (or the -p path) */
	char *path;         /* the real path of the file compiled; NULL before loading */
	uint64_t fp;        /* XXH3 of the exact bytes compiled */
	bool untrusted;     /* a project layer the user has not approved */
	const void *src;    /* the compiler's source file (struct src_file) */
};

struct layers {
	struct layer_src v[LAYERS_MAX];
	size_t n;
	char *root;        /* the project's root: workspace's value unless -D */
	char cfgdir[4096]; /* CONFIG/cage, "" when there is none */
	char stdlib[4096]; /* the standard library's default folder once found, else "" */
	/* The private caches cagerun gave std/guard's `cache` param (cachedir.h),
	 * and the key they belong to; "" when it gave none (-D cache, or no
	 * std/guard). */
	char cache[4096];
	char cache_key[72];
	cage_policy *pol;  /* the composed policy, narrowed; owned */
	struct ll_job lint_job; /* cage-lint at work beside the compile (lint_begin) */
	struct ll_verdict lint; /* lint's findings on a second load (cage-lint), when linted */
	bool linted;       /* lint was asked (--show, a project or task layer compiled) */
	int mode;          /* enum ir_mode in force (--mode applied) */
	uint64_t fingerprint;
	size_t ignored;    /* grants of an untrusted project layer left out */
	struct cmd_res cmd; /* the command layer's resolution (cmd.found NULL: none) */
	char cmd_dir[4096]; /* a directory of this run's own that its generated file lives in
	                       while it is loaded (removed after), or "" */
	char *cmd_text;     /* the generated file's text, which the compile must have read */
	bool discovered;    /* the layers were found by layers_discover */
};

struct layers_req {
	const char *policy;  /* -p: exactly this file */
	const char *task;    /* --task */
	char *const *argv;   /* the command (argv[0] chooses the agent), or NULL */
	const char *mode;    /* --mode, or NULL */
	cage_options *copts; /* -D, -I, --profile, --stdlib, --home */
	bool lint;           /* always lint (--show) */
	bool quiet;
};

/* Finds, composes, compiles, checks trust and narrows. Returns 0, or 125
 * after saying why on stderr. L must be zeroed; layers_free releases it. */
int layers_load(struct layers *L, const struct layers_req *rq);

/* Without -p: finds the layers into L (zeroed) and writes the command
 * layer's file, without compiling; layers_load then goes on from there.
 * Split out so that a compile kept on disk can be looked for under a key
 * that holds what was found (kept.h). 0, or 125 after saying why. */
int layers_discover(struct layers *L, const struct layers_req *rq);

/* That the policy in L lets the command start (what layers_load checks
 * after its compile; for a compile taken instead). 0, or 125 saying why. */
int layers_check_command(const struct layers *L, const struct layers_req *rq);

/* The mode in force, --mode `mode` (NULL: the policy's) over the loaded
 * policy's, and the fingerprint that goes with it (layers_load's last
 * step, which a kept compile takes again: the compile does not depend
 * on --mode). 0, or 125 saying why. */
int layers_set_mode(struct layers *L, const char *mode);

/* --show: the layers, the mode, the effective grants and lint's findings. */
void layers_show(const struct layers *L, FILE *out);

/* --show: how the command was resolved and what the command layer grants
 * (layers_show_cmd.c); nothing when there is no command layer. */
void layers_show_command(const struct layers *L, FILE *out);

/* At exit: says which layer files changed since they were compiled. */
void layers_report_changes(const struct layers *L, FILE *err);

void layers_free(struct layers *L);

/* `cagerun trust [FILE]`: approves FILE, or the project layer found from
 * the current directory. Returns an exit status. */
int layers_trust(const char *file);

#endif
