/*
 * sbx_nest.h - whether cagerun itself already runs inside a Seatbelt
 * sandbox. macOS refuses to apply a second sandbox to a sandboxed process:
 * sandbox-exec then exits 71 with "sandbox-exec: sandbox_apply: Operation
 * not permitted" (and the kernel logs `deny(1) forbidden-sandbox-reinit`),
 * which a user would take for a cage bug. cagerun asks first and says so.
 */
#ifndef CAGE_SBX_NEST_H
#define CAGE_SBX_NEST_H

#include <stdbool.h>
#include <stddef.h>

/* 1: this process is sandboxed; 0: it is not; -1: cannot tell (not
 * macOS, or libsystem_sandbox has no sandbox_check). */
int sbx_in_sandbox(void);

/* What cagerun says for a probe result: true (refuse) with the message in
 * err when state is 1; false otherwise. */
bool sbx_nested_refusal(int state, char *err, size_t errlen);

#endif
