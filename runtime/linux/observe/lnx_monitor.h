/*
 * lnx_monitor.h - starting a command in monitor mode on Linux: no
 * namespaces, no Landlock, no refusing seccomp filter (the command runs as
 * it would unsandboxed, with the same user, files and network), only the
 * observer's user-notification filter (lnx_observe.h), installed right
 * before exec so that the command's own execve is the first call seen.
 */
#ifndef CAGE_LNX_MONITOR_H
#define CAGE_LNX_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct run_nofile;
struct lnx_monitor_child {
	pid_t pid;
	int listen_fd; /* the observer's listener, once received */
	int err_fd;    /* exec failures; EOF once the command runs */
};

/* Forks the command (its own process group, the terminal's foreground
 * group when take_terminal, the open-files limit `nofile` put back) and receives the observer's listener from it.
 * The child waits in its first notified call (execve) until the listener
 * is served. The caller must have blocked the signals it forwards. */
bool lnx_monitor_spawn(char *const *argv, char *const *envp, bool take_terminal,
		       const struct run_nofile *nofile, struct lnx_monitor_child *c, char *err,
		       size_t errlen);
/* 0 once the command runs, else 126/127 with the reason in err. */
int lnx_monitor_wait_exec(struct lnx_monitor_child *c, char *err, size_t errlen);
/* After the command exited: kills and reaps what it left behind (cagerun
 * is their subreaper), in a bounded number of rounds. */
void lnx_monitor_reap_leftovers(pid_t pgid);

#endif
