/* SPDX-License-Identifier: MIT */
/*
 * Shared by the SDK tests: a private runtime directory per test program (so
 * the suite needs no root and tests never see each other's providers),
 * provider child processes, and a template builder.
 */
#ifndef PL_TESTUTIL_H
#define PL_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perflib.h"
#include "reader.h"

/*
 * Creates a fresh runtime directory and points $PERFLIB_RUNTIME_DIR at it.
 * Returns the path (static storage); aborts the test program on failure.
 */
const char *tu_runtime_setup(void);
/* Removes the directory made by tu_runtime_setup and everything in it. */
void tu_runtime_teardown(void);

/* The two as cmocka fixtures, for tests that need nothing else. */
int tu_fixture_setup(void **state);
int tu_fixture_teardown(void **state);
#define TU_TEST(f) cmocka_unit_test_setup_teardown(f, tu_fixture_setup, tu_fixture_teardown)

/* CLOCK_MONOTONIC in seconds. */
double tu_now(void);

/*
 * A counterset template with n counters: ids 1..n (or the given ids), sizes
 * and types from the arrays, all offsets 0 (automatic layout).  The result is
 * malloc'ed and owned by the caller; *ret_size is the TemplateSize to pass.
 */
PPERF_COUNTERSET_INFO tu_template(const GUID *provider, const GUID *cset,
                                  ULONG instance_type, ULONG n,
                                  const ULONG *sizes, ULONG *ret_size);

/*
 * Runs fn(arg, wfd) in a child process; the child writes one byte to wfd
 * (tu_ready) when it is ready.  Returns the child's pid once that byte
 * arrived, -1 if the child died first.  With ret_rfd, the parent keeps the
 * read end (owned by the caller) to wait for further tu_ready()s.
 */
pid_t tu_spawn(void (*fn)(void *arg, int wfd), void *arg, int *ret_rfd);
/* Tells the parent the child is ready (or done with a step). */
void tu_ready(int wfd);
/* Waits for one tu_ready() of the child; 0, or -1 if the child is gone. */
int tu_wait_ready(int rfd);

/*
 * A scripted provider child: the parent sends one command byte at a time
 * with tu_command, which returns once the child acknowledged it.
 */
struct tu_child {
        pid_t pid;
        int cmd_fd;             /* parent's write end */
        int ack_fd;             /* parent's read end */
};
int tu_child_start(struct tu_child *c, void (*fn)(int cmd_fd, int ack_fd));
int tu_command(struct tu_child *c, char cmd);
/* Kills (SIGKILL) and reaps the child if still running, closes the pipes. */
void tu_child_stop(struct tu_child *c);
/* Child side: the next command byte, or 0 when the parent went away. */
char tu_next_command(int cmd_fd);

/*
 * Waits up to timeout_s for exactly one live provider in the runtime
 * directory and opens a reader on it; *ret owned by the caller.
 */
int tu_open_only_provider(double timeout_s, struct pl_reader **ret);

/* The number of live providers in the runtime directory (pl_scan). */
int tu_count_providers(unsigned *ret_reclaimed);

#endif
