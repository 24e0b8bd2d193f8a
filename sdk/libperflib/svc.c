/* SPDX-License-Identifier: MIT */
/*
 * The collect service's messages over SOCK_SEQPACKET, for both ends (the
 * provider's service.c and the reader's reader-conn.c), and socket
 * addresses for paths of any length.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "svc.h"

void pl_svc_init(struct pl_svc_msg *m, enum pl_svc_op op, uint64_t seq)
{
        memset(m, 0, sizeof(*m));
        m->magic = PL_SVC_MAGIC;
        m->version = PL_SVC_VERSION;
        m->op = (uint16_t) op;
        m->seq = seq;
}

int pl_svc_send(int sock, const struct pl_svc_msg *m, const void *payload, int pass_fd)
{
        struct iovec iov[2] = {
                { .iov_base = (void *) m, .iov_len = sizeof(*m) },
                { .iov_base = (void *) payload, .iov_len = m->payload_size },
        };
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int))];
        } control;
        struct msghdr mh = {
                .msg_iov = iov,
                .msg_iovlen = m->payload_size > 0 ? 2 : 1,
        };

        if (m->payload_size > PL_SVC_MAX_PAYLOAD || (m->payload_size > 0 && !payload))
                return -EINVAL;
        if (pass_fd >= 0) {
                memset(&control, 0, sizeof(control));
                mh.msg_control = control.buf;
                mh.msg_controllen = sizeof(control.buf);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
        }
        for (;;) {
                ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
                if (n >= 0)
                        return (size_t) n == sizeof(*m) + m->payload_size ? 0 : -EIO;
                if (errno != EINTR)
                        return -errno;
        }
}

static int wait_readable(int sock, int timeout_ms)
{
        struct pollfd p = { .fd = sock, .events = POLLIN };
        for (;;) {
                int r = poll(&p, 1, timeout_ms);
                if (r > 0)
                        return 0;
                if (r == 0)
                        return -ETIMEDOUT;
                if (errno != EINTR)
                        return -errno;
        }
}

static int take_fd(struct msghdr *mh)
{
        int fd = -1;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < n; i++) {
                        int got;
                        memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (fd < 0)
                                fd = got;
                        else
                                close(got);     /* only one is ever expected */
                }
        }
        return fd;
}

int pl_svc_recv(int sock, struct pl_svc_msg *m, void *payload, size_t max,
                int *ret_fd, int timeout_ms)
{
        uint8_t buf[sizeof(struct pl_svc_msg) + PL_SVC_MAX_PAYLOAD];
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(4 * sizeof(int))];
        } control;
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1,
                .msg_control = control.buf, .msg_controllen = sizeof(control.buf),
        };
        ssize_t n;
        int r, fd;

        r = wait_readable(sock, timeout_ms);
        if (r < 0)
                return r;
        do
                n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return errno == EAGAIN ? -ETIMEDOUT : -errno;
        fd = take_fd(&mh);
        if (n == 0) {
                r = -ECONNRESET;
                goto fail;
        }
        /*
         * Room was made for more descriptors than a peer may send: a
         * truncation that left us none means our table is full.
         */
        if ((mh.msg_flags & MSG_CTRUNC) && fd < 0) {
                r = -EMFILE;
                goto fail;
        }
        if ((size_t) n < sizeof(*m) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
                r = -EBADMSG;
                goto fail;
        }
        memcpy(m, buf, sizeof(*m));
        if (m->magic != PL_SVC_MAGIC || m->version != PL_SVC_VERSION ||
            m->payload_size > PL_SVC_MAX_PAYLOAD ||
            (size_t) n != sizeof(*m) + m->payload_size ||
            m->payload_size > max) {
                r = -EBADMSG;
                goto fail;
        }
        if (m->payload_size > 0)
                memcpy(payload, buf + sizeof(*m), m->payload_size);
        if (ret_fd)
                *ret_fd = fd;
        else if (fd >= 0)
                close(fd);
        return 0;
fail:
        if (fd >= 0)
                close(fd);
        return r;
}

int pl_sockaddr(const char *path, struct sockaddr_un *ret, int *ret_dirfd)
{
        size_t len = strlen(path);

        memset(ret, 0, sizeof(*ret));
        ret->sun_family = AF_UNIX;
        *ret_dirfd = -1;
        if (len < sizeof(ret->sun_path)) {
                memcpy(ret->sun_path, path, len + 1);
                return 0;
        }
        /* Too long for sun_path: go through an O_PATH handle of the directory. */
        const char *slash = strrchr(path, '/');
        if (!slash)
                return -ENAMETOOLONG;
        char dir[4096];
        size_t dlen = (size_t) (slash - path);
        if (dlen == 0 || dlen >= sizeof(dir))
                return -ENAMETOOLONG;
        memcpy(dir, path, dlen);
        dir[dlen] = '\0';
        int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        int k = snprintf(ret->sun_path, sizeof(ret->sun_path), "/proc/self/fd/%d/%s", dfd, slash + 1);
        if (k < 0 || (size_t) k >= sizeof(ret->sun_path)) {
                close(dfd);
                return -ENAMETOOLONG;
        }
        *ret_dirfd = dfd;
        return 0;
}
