/*
 * slog.h - the session log: where a run's denials go while they happen
 * when standard error is a terminal, so that a full-screen agent's screen
 * is not written over (docs/cagerun.md, "Denials on a terminal").
 *
 * Each run writes the proxy's denial lines to SESSION_DIR/session-PID.log
 * (mode 0600), SESSION_DIR being $XDG_RUNTIME_DIR/cage, else
 * ${TMPDIR:-/tmp}/cage-UID: a directory of the user's own, mode 0700,
 * checked before use. The file is removed when the run ends; `cagerun
 * denials [--follow] [PID]` prints it (and, following, what comes) from
 * another terminal until then.
 */
#ifndef CAGE_SLOG_H
#define CAGE_SLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct slog {
	int fd;          /* -1: none */
	char path[4200];
};

/* Opens this run's session log; false with err set (the run then prints
 * its denials at exit only). `what` names the command, for the header. */
bool slog_open(struct slog *s, const char *what, char *err, size_t errlen);

/* Removes the session log and closes it (nothing when none is open). */
void slog_close(struct slog *s);

/* `cagerun denials [--follow] [PID]`: the session log of PID, else the
 * newest one, to out; following, what is added too, until that run
 * ends. Returns an exit status (0, or 1 with the reason on err when no
 * session is running). */
int slog_show(const char *pid, bool follow, FILE *out, FILE *err);

#endif
