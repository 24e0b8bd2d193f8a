/* SPDX-License-Identifier: MIT */
/*
 * The client's socket I/O (pv2-client.h): every read and write on a
 * non-blocking socket, bounded by the deadline of the call it is part
 * of, so that a server that stalls cannot hold a client past its timeout.
 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include "pv2-client.h"

int64_t pv2c_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* deadline < 0: none. */
int pv2c_wait_fd(int fd, short events, int64_t deadline)
{
        for (;;) {
                int t = -1;
                if (deadline >= 0) {
                        int64_t left = deadline - pv2c_now_ms();
                        if (left <= 0)
                                return -ETIMEDOUT;
                        t = left > 60000 ? 60000 : (int)left;
                }
                struct pollfd pfd = { .fd = fd, .events = events };
                int r = poll(&pfd, 1, t);
                if (r > 0)
                        return 0;
                if (r < 0 && errno != EINTR)
                        return -errno;
        }
}

int pv2c_send_all(int fd, const uint8_t *b, size_t n, int64_t deadline)
{
        while (n > 0) {
                ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
                if (k > 0) {
                        b += k;
                        n -= (size_t)k;
                        continue;
                }
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
                        return -errno;
                int r = pv2c_wait_fd(fd, POLLOUT, deadline);
                if (r < 0)
                        return r;
        }
        return 0;
}

int pv2c_recv_all(int fd, uint8_t *b, size_t n, int64_t deadline)
{
        while (n > 0) {
                ssize_t k = recv(fd, b, n, 0);
                if (k > 0) {
                        b += k;
                        n -= (size_t)k;
                        continue;
                }
                if (k == 0)
                        return -ECONNRESET;
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN && errno != EWOULDBLOCK)
                        return -errno;
                int r = pv2c_wait_fd(fd, POLLIN, deadline);
                if (r < 0)
                        return r;
        }
        return 0;
}

int64_t pv2c_deadline(const struct pv2_client *c)
{
        return c->timeout_ms > 0 ? pv2c_now_ms() + c->timeout_ms : -1;
}

/* Reads one PDU into c->frag. */
int pv2c_recv_pdu(struct pv2_client *c, struct dcerpc_hdr *ret, int64_t deadline)
{
        int r = pv2c_recv_all(c->fd, c->frag, DCERPC_HDR_SIZE, deadline);
        if (r < 0)
                return r;
        r = dcerpc_parse_hdr(c->frag, ret);
        if (r < 0)
                return -EPROTO;
        return pv2c_recv_all(c->fd, c->frag + DCERPC_HDR_SIZE, ret->frag_len - DCERPC_HDR_SIZE,
                        deadline);
}
