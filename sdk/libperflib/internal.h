/* SPDX-License-Identifier: MIT */
/* Helpers shared by the provider runtime and the reader; all hidden. */
#ifndef PL_INTERNAL_H
#define PL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "perflib.h"
#include "segment.h"

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline uint64_t pl_align_up(uint64_t v, uint64_t a)
{
        return (v + a - 1) & ~(a - 1);
}

/* ---- svc.c: collect-service messages over SOCK_SEQPACKET ---- */

/*
 * Sends header + payload as one datagram, with pass_fd attached via
 * SCM_RIGHTS when pass_fd >= 0.  0 or -errno.
 */
int pl_svc_send(int sock, const struct pl_svc_msg *m, const void *payload, int pass_fd);

/*
 * Waits at most timeout_ms (-1: forever) for one datagram, checks its magic,
 * version and sizes, and copies its payload (at most max bytes) out.  A
 * received descriptor is stored in *ret_fd (or closed when ret_fd is NULL);
 * *ret_fd is -1 when none came.  -ETIMEDOUT, -ECONNRESET on hang-up,
 * -EBADMSG on a malformed message.
 */
int pl_svc_recv(int sock, struct pl_svc_msg *m, void *payload, size_t max,
                int *ret_fd, int timeout_ms);

/* Fills the constant part of a message header. */
void pl_svc_init(struct pl_svc_msg *m, enum pl_svc_op op, uint64_t seq);

/*
 * Builds a sockaddr_un for path; paths longer than sun_path are reached
 * through /proc/self/fd/N/<name> with an O_PATH descriptor of the directory,
 * returned in *ret_dirfd (close it after bind/connect; -1 when unused).
 */
struct sockaddr_un;
int pl_sockaddr(const char *path, struct sockaddr_un *ret, int *ret_dirfd);

/* ---- utf.c ---- */

/* Strict UTF-8 to wchar_t (UTF-32); *ret owned by the caller (free). */
int pl_utf8_to_wcs(const char *s, wchar_t **ret);

/* n bytes of strict UTF-8; a NUL byte counts as a character. */
bool pl_utf8_valid(const char *s, size_t n);

/* ---- desc-parse.c ---- */

/*
 * Validates a self-description blob (segment.h) of size bytes, a private
 * copy the caller owns, and builds the pointer tree it describes, with
 * copies of its strings: one allocation, owned by the caller (free).
 * -EBADMSG when anything in it is wrong.
 */
struct ctrpp_provider_desc;
int pl_desc_parse(const uint8_t *blob, uint64_t size, struct ctrpp_provider_desc **ret);

/* ---- provider.c, for the in-process reader ---- */

/*
 * When the segment identified by (dev, ino) belongs to a provider of this
 * process, copies its referenced values into their slots directly and
 * returns 0; -ESRCH when it is not ours.
 */
int pl_provider_collect_local(uint64_t dev, uint64_t ino);

#endif /* PL_INTERNAL_H */
