/*
 * sbx_run.h - the Seatbelt launcher (macOS; `--backend seatbelt` anywhere,
 * where it fails closed without /usr/bin/sandbox-exec). See sbx_run.c.
 */
#ifndef CAGE_SBX_RUN_H
#define CAGE_SBX_RUN_H

#include "run.h"

/* As run_command (run.h), with sandbox-exec. */
int sbx_run_command(const struct run_opts *o);

#endif
