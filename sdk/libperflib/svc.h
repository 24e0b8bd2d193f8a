/* SPDX-License-Identifier: MIT */
/*
 * svc.c: the collect service's messages over SOCK_SEQPACKET (segment.h
 * gives their layout), for both ends: the provider's service and the
 * reader.  Hidden.
 */
#ifndef PL_SVC_H
#define PL_SVC_H

#include <stddef.h>
#include <stdint.h>

#include "segment.h"

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

#endif /* PL_SVC_H */
