/* SPDX-License-Identifier: MIT */
/*
 * plugin-proc.h: a plugin's host as a process: starting it (host-proto.h
 * says with what), what the kernel says it uses, and how it ended, in
 * words for the log.
 *
 * Functions return 0 or -errno and write ret_ parameters only on success.
 */
#ifndef PERFLIBD_PLUGIN_PROC_H
#define PERFLIBD_PLUGIN_PROC_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct host_proc {
        pid_t pid;
        int pidfd;                      /* readable once it has exited */
        int status_fd;                  /* our end of its status socket */
};

/*
 * Starts host (the perflib-plugin-host program) for the plugin file
 * ("x.so") whose image is image_fd, with user (NULL: as we run) and
 * memory_max (0: none) on its command line.  posix_spawn(3): this process
 * has threads, and nothing between fork and exec may take a lock.  On
 * success *ret owns the pidfd and the status socket (host_proc_close).
 */
int host_spawn(const char *host, const char *file, int image_fd, const char *user,
               uint64_t memory_max, struct host_proc *ret);

/* Closes the descriptors (not the process); accepts a closed one (-1s). */
void host_proc_close(struct host_proc *h);

/*
 * Reaps the host once its pidfd is readable: *ret_info as waitid(2) fills
 * it.  -EAGAIN while it still runs.
 */
int host_reap(struct host_proc *h, siginfo_t *ret_info);

/* Its resident memory in bytes and CPU time (user and system) in µs, from /proc. */
int proc_usage(pid_t pid, uint64_t *ret_rss, uint64_t *ret_cpu_usec);

/*
 * How it ended, for the log: "exited with status 3", "killed by signal 11
 * (Segmentation fault), core dumped".
 */
void exit_text(const siginfo_t *si, char *buf, size_t size);

#endif /* PERFLIBD_PLUGIN_PROC_H */
