/*
 * ll_serve.h - cage-lint's work: lint's verdict on one composition of
 * cagerun's layers (the exchange: layers_lint.h).
 */
#ifndef CAGE_LL_SERVE_H
#define CAGE_LL_SERVE_H

#include <stdio.h>

/* Reads the request (argv, and the text from `in` with --stdin), writes
 * the reply to `out` and what went wrong to `err`. Returns the exit
 * status: 0 after a whole reply, 2 for arguments it does not take, 1
 * otherwise. */
int ll_serve(int argc, char **argv, FILE *in, FILE *out, FILE *err);

#endif
