/* SPDX-License-Identifier: MIT */
/*
 * Shared by the tests and benches that run a real perflibd: its private
 * directories, starting and stopping it, connecting the PerflibV2 client
 * once it answers, waiting for a provider's counterset to be listed.
 * No cmocka here (the benches use it too): functions return 0 or -errno
 * and the callers assert or die.
 */
#ifndef PL_DAEMONUTIL_H
#define PL_DAEMONUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perflibv2.h"

struct du_daemon {
        char sock[4096], registry[4096], plugins[4096];
        pid_t pid;                      /* perflibd while it runs, else 0 */
        /* Run in perflibd's child process before exec, when set; nonzero exits 126. */
        int (*in_child)(void);
        /* More options for perflibd (NULL-terminated, at most 16), when set. */
        const char *const *args;
        /*
         * perflibd's stderr, its log, goes to this file (made or emptied), in
         * plain lines even under systemd, when set: for a test to read it.
         */
        const char *log;
};

/*
 * Points d at the socket, registry and plugin directory under run (the
 * runtime directory perflibd uses) and creates the two directories.
 */
int du_init(struct du_daemon *d, const char *run);

/*
 * For the benches: creates $TMPDIR/prefix-XXXXXX (short: it holds a
 * socket) into dir, makes it $PERFLIB_RUNTIME_DIR, then du_init.
 */
int du_mkdtemp(struct du_daemon *d, char *dir, size_t size, const char *prefix);

/*
 * Starts bin (NULL: $top_builddir/server-glue/perflibd) on d's directories,
 * through launcher (a NULL-terminated argv prefix) when given.  Returns at
 * once: du_connect tells when it is ready.
 */
int du_start(struct du_daemon *d, const char *bin, const char *const *launcher);

/*
 * Connects to d's socket, retrying for 10 s while perflibd starts; each
 * call waits timeout_ms.  *ret is the caller's; -ETIMEDOUT if it never answered.
 */
int du_connect(const struct du_daemon *d, int timeout_ms, struct pv2_client **ret);

/* SIGTERM, then reaps it: its wait status, or -errno. */
int du_stop(struct du_daemon *d);

/* Whether perflibd enumerates counterset g: 1, 0, or -EIO. */
int du_listed(struct pv2_client *c, const GUID *g);

/*
 * Providers and plugins come and go asynchronously: waits up to timeout_ms
 * for g to be listed (or no longer, with listed false); 0 or -ETIMEDOUT.
 */
int du_wait_listed(struct pv2_client *c, const GUID *g, bool listed, int timeout_ms);

/*
 * Counter `counter` (8 bytes) of instance inst (ASCII) of g, through a query
 * handle of its own: *ret_value is the first block's value, or UINT64_MAX
 * when its status is not success (an instance that is not served may have
 * no block at all).  0, -EIO when a call failed, -EINVAL for a name longer
 * than 43 characters.
 */
int du_value_of(struct pv2_client *c, const GUID *g, const char *inst, uint32_t counter,
                uint64_t *ret_value);

/* Counts the countersets perflibd enumerates (asking for up to 65,536); -EIO. */
int du_count_countersets(struct pv2_client *c);

/*
 * In a child process: becomes uid (and gid uid, no supplementary groups)
 * and dies with the parent.  0 or -errno (the child should _exit).
 */
int du_drop_to(uid_t uid);

/* system() on a formatted command: its status, or -ENOMEM. */
int du_run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Runs fn(ready_fd, cmd_fd, arg) in a child, which writes a byte to
 * ready_fd once its provider is published and must _exit (say at EOF on
 * cmd_fd).  Returns the child's pid once ready, or -errno; *ret_wfd (the
 * caller's) is the write end of cmd_fd: closing it ends the child.
 */
pid_t du_spawn_provider(void (*fn)(int ready_fd, int cmd_fd, void *arg), void *arg,
                        int *ret_wfd);

/* Little-endian fields of PerflibV2 replies. */
static inline uint32_t du_le32(const uint8_t *p)
{
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
               (uint32_t) p[3] << 24;
}

static inline uint64_t du_le64(const uint8_t *p)
{
        return du_le32(p) | (uint64_t) du_le32(p + 4) << 32;
}

/*
 * Raw DCE/RPC connections, for tests and benches that play a hostile
 * client.  du_raw_connect: a stream socket connected to d's perflibd, sends
 * bounded by 10 s; the fd or -errno.  du_raw_bind: impacket's bind
 * (PerflibV2 over NDR, max fragments 4280) and its bind_ack; 0 or -errno.
 * du_request_header: a request fragment's 24-byte header for opnum 7
 * (flags, frag_len, alloc_hint; call id 2).  du_closed: reads what is there
 * and says whether the server closed the connection (1) or not (0), waiting
 * at most timeout_ms.
 */
int du_raw_connect(const struct du_daemon *d);
int du_raw_bind(int fd);
void du_request_header(uint8_t h[24], uint8_t flags, uint16_t frag_len, uint32_t hint);
int du_closed(int fd, int timeout_ms);

/* A field of /proc/PID/status in kB ("VmRSS", "VmSize", "VmHWM"), or -1. */
long du_status_kib(pid_t pid, const char *field);
/* A TCP port of 127.0.0.1 that nobody listens on right now, or -errno. */
int du_free_port(void);
/* Lines of the file at path that contain needle (every line for ""); 0 without the file. */
int du_count_lines(const char *path, const char *needle);

/*
 * A hostile client's flood: fragment i (the first one flagged first) of a
 * request announced as 63 MiB, the alloc_hint that once grew perflibd by
 * 1 GB, with DU_FLOOD_STUB bytes of stub, sent on fd from pdu (room for
 * 24 + DU_FLOOD_STUB bytes).  0, or -1 once the server refused it.
 * DU_FLOOD_FRAGS fragments stay under a 1 MiB request cap.
 */
#define DU_FLOOD_STUB   65000u
#define DU_FLOOD_FRAGS  15u             /* 975,000 bytes */
int du_flood_fragment(int fd, unsigned i, uint8_t *pdu);

#endif
