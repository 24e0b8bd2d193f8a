/* SPDX-License-Identifier: MIT */
/*
 * np-relay.c: a pipe passed to Samba's own winreg server (np-relay.h).
 * Both ends frame messages alike, so after the handshake the bytes pass
 * unchanged; nothing here looks into them.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "np-relay.h"
#include "samba-np.h"

#define RELAY_CHUNK     65536

/* 338cd001-2244-31f1-aaaa-900038001003, as a syntax id lays it out. */
static const uint8_t rrp_uuid[16] = {
        0x01, 0xd0, 0x8c, 0x33, 0x44, 0x22, 0xf1, 0x31,
        0xaa, 0xaa, 0x90, 0x00, 0x38, 0x00, 0x10, 0x03,
};

bool np_is_rrp_bind(const uint8_t *pdu, size_t len)
{
        /*
         * C706 12.6.4.3: the 16-byte header, max_xmit_frag, max_recv_frag,
         * assoc_group_id, then n_context_elem and padding at 24, the first
         * context's id and n_transfer_syn at 28, its abstract syntax at 32.
         */
        if (len < 52 || pdu[0] != 5 || pdu[2] != 11 || pdu[24] == 0)
                return false;
        return memcmp(pdu + 32, rrp_uuid, sizeof(rrp_uuid)) == 0;
}

static int wait_for(int fd, short events, int timeout_ms)
{
        struct pollfd p = { .fd = fd, .events = events };
        int k;

        do
                k = poll(&p, 1, timeout_ms);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        return k == 0 ? -ETIMEDOUT : 0;
}

static int write_all(int fd, const uint8_t *b, size_t n, int timeout_ms)
{
        while (n > 0) {
                ssize_t k = send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
                int r;

                if (k > 0) {
                        b += k;
                        n -= (size_t) k;
                } else if (k < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                else if (k < 0 && errno == EAGAIN && (r = wait_for(fd, POLLOUT, timeout_ms)) < 0)
                        return r;
        }
        return 0;
}

static int read_all(int fd, uint8_t *b, size_t n, int timeout_ms)
{
        while (n > 0) {
                int r = wait_for(fd, POLLIN, timeout_ms);
                ssize_t k;

                if (r < 0)
                        return r;
                k = recv(fd, b, n, MSG_DONTWAIT);
                if (k == 0)
                        return -ECONNRESET;
                if (k < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                if (k > 0) {
                        b += k;
                        n -= (size_t) k;
                }
        }
        return 0;
}

/* Samba's reply to the handshake: our level, a status of 0 (samba-np.h's layout). */
static int read_reply(int fd, int timeout_ms)
{
        uint8_t rep[NP_AUTH_REP_BYTES];
        int r = read_all(fd, rep, sizeof(rep), timeout_ms);

        if (r < 0)
                return r;
        if (rep[3] != NP_AUTH_REP_BYTES - 4 || memcmp(rep + 4, "NPAM", 4) != 0 ||
            (rep[8] | rep[9] << 8 | rep[10] << 16 | (uint32_t) rep[11] << 24) != NP_AUTH_LEVEL ||
            (rep[32] | rep[33] | rep[34] | rep[35]) != 0)
                return -EPROTO;
        return 0;
}

int np_relay_open(const char *path, const uint8_t *req, size_t req_len, int timeout_ms,
                  int *ret_fd)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, r;

        if (!path || !req || !ret_fd || strlen(path) >= sizeof(sa.sun_path))
                return -EINVAL;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        r = connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ? -errno : 0;
        if (r == 0)
                r = write_all(fd, req, req_len, timeout_ms);
        if (r == 0)
                r = read_reply(fd, timeout_ms);
        if (r < 0) {
                close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

/* Moves what from has to to; 0, 1 when from closed, -errno. */
static int pass(int from, int to, uint8_t *buf, int idle_ms)
{
        ssize_t k = recv(from, buf, RELAY_CHUNK, MSG_DONTWAIT);

        if (k == 0)
                return 1;
        if (k < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -errno;
        return write_all(to, buf, (size_t) k, idle_ms ? idle_ms : -1);
}

int np_relay_run(int a, int b, const uint8_t *first, size_t first_len, int idle_ms)
{
        uint8_t *buf = malloc(RELAY_CHUNK);
        int r = buf ? write_all(b, first, first_len, idle_ms ? idle_ms : -1) : -ENOMEM;

        while (r == 0) {
                struct pollfd p[2] = { { .fd = a, .events = POLLIN }, { .fd = b, .events = POLLIN } };
                int k = poll(p, 2, idle_ms ? idle_ms : -1);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        r = k < 0 ? -errno : -ETIMEDOUT;
                        break;
                }
                if (p[0].revents)
                        r = pass(a, b, buf, idle_ms);
                if (r == 0 && p[1].revents)
                        r = pass(b, a, buf, idle_ms);
        }
        free(buf);
        return r == 1 ? 0 : r;
}
