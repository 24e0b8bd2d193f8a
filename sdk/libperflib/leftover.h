/* SPDX-License-Identifier: MIT */
/*
 * leftover.c: a provider's socket removed when its process ends without
 * PerfStopProvider: at exit(), and on SIGTERM, SIGINT or SIGHUP when the
 * application left those signals at their default action.  Hidden.
 */
#ifndef PL_LEFTOVER_H
#define PL_LEFTOVER_H

/*
 * Remembers path (copied) for removal at an abnormal end of this process.
 * Returns a slot (>= 0) for pl_leftover_forget, or -ENOSPC/-ENAMETOOLONG
 * when it cannot; then the socket is left for perflibd to reclaim, as after
 * SIGKILL.
 */
int pl_leftover_remember(const char *path);

/* Forgets a slot of pl_leftover_remember; a negative slot is ignored. */
void pl_leftover_forget(int slot);

#endif /* PL_LEFTOVER_H */
