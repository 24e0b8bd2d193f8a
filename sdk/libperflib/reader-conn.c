/* SPDX-License-Identifier: MIT */
/*
 * A reader's connection to a provider's collect service: opening a segment
 * through the provider's socket, telling whether the provider lives, and
 * the requests (collect, notify) with their deadline, the collect bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proclist.h"
#include "reader-conn.h"
#include "reader-open.h"
#include "reader.h"
#include "svc.h"

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int remaining_ms(int64_t deadline)
{
        int64_t left = deadline - now_ms();

        return left > 0 ? (int) left : 0;
}

int pl_collect_timeout_ms(void)
{
        const char *e = getenv("PERFLIB_COLLECT_TIMEOUT_MS");
        char *end;
        long v;

        if (!e || !*e)
                return PL_SVC_DEFAULT_TIMEOUT_MS;
        errno = 0;
        v = strtol(e, &end, 10);
        if (errno != 0 || *end != '\0' || v < 1 || v > 60000)
                return PL_SVC_DEFAULT_TIMEOUT_MS;
        return (int) v;
}

/*
 * A non-blocking connect: a Unix socket whose backlog is full answers
 * EAGAIN, and a provider that stopped accepting must not hang us, so retry
 * until the deadline.
 */
static int connect_path(int fd, const char *path, int64_t deadline)
{
        struct sockaddr_un sa;
        int dfd, ret;

        ret = pl_sockaddr(path, &sa, &dfd);
        if (ret < 0)
                return ret;
        for (;;) {
                ret = connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ? -errno : 0;
                if (ret != -EAGAIN && ret != -EINTR)
                        break;
                if (remaining_ms(deadline) == 0) {
                        ret = -ETIMEDOUT;
                        break;
                }
                (void) poll(NULL, 0, 1);
        }
        if (dfd >= 0)
                close(dfd);
        return ret;
}

/* The memfd is sealed against shrinking, or a mapping could SIGBUS us. */
static int check_sealed(int fd)
{
        int seals = fcntl(fd, F_GET_SEALS);

        if (seals < 0 || !(seals & F_SEAL_SHRINK))
                return -EBADMSG;
        return 0;
}

static int receive_hello(int sock, int64_t deadline, uint64_t *ret_size, int *ret_fd)
{
        struct pl_svc_msg m;
        uint8_t payload[8];
        int fd = -1, ret;

        ret = pl_svc_recv(sock, &m, payload, sizeof(payload), &fd, remaining_ms(deadline));
        if (ret < 0)
                return ret;
        if (m.op != PL_SVC_HELLO || fd < 0) {
                if (fd >= 0)
                        close(fd);
                return -EBADMSG;
        }
        *ret_size = m.segment_size;
        *ret_fd = fd;
        return 0;
}

/*
 * Whoever listens on a provider's socket must be who made the file: a
 * socket passed to another user's process, or a name that user planted in
 * a shared directory, speaks for nobody.
 */
static int check_listener(struct pl_reader *r, const struct stat *file)
{
        struct ucred cred;
        socklen_t len = sizeof(cred);

        if (getsockopt(r->sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return -errno;
        return cred.uid == file->st_uid ? 0 : -EPERM;
}

static int reader_connect(struct pl_reader *r, const char *socket_path)
{
        int64_t deadline = now_ms() + pl_collect_timeout_ms();
        struct stat file;
        uint64_t size;
        int fd, ret;

        if (lstat(socket_path, &file) < 0)
                return -errno;
        if (!S_ISSOCK(file.st_mode))
                return -ENOTSOCK;
        r->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (r->sock < 0)
                return -errno;
        ret = connect_path(r->sock, socket_path, deadline);
        if (ret == 0)
                ret = check_listener(r, &file);
        if (ret < 0)
                return ret;
        ret = receive_hello(r->sock, deadline, &size, &fd);
        if (ret < 0)
                return ret;
        /* What the hello announces is refused at once; the header is checked too. */
        ret = r->max_map > 0 && size > r->max_map ? -EFBIG : check_sealed(fd);
        if (ret == 0)
                ret = pl_reader_map_fd(r, fd);
        /* The mapping keeps the segment; the descriptor is not needed. */
        close(fd);
        if (ret == 0 && size != r->segment_size)
                ret = -EBADMSG;
        return ret;
}

int pl_reader_open(const char *socket_path, struct pl_reader **ret)
{
        return pl_reader_open_max(socket_path, 0, ret);
}

int pl_reader_open_max(const char *socket_path, uint64_t max_size, struct pl_reader **ret)
{
        struct pl_reader *r;
        int k;

        if (!socket_path || !ret)
                return -EINVAL;
        r = pl_reader_new();
        if (!r)
                return -ENOMEM;
        r->max_map = max_size;
        k = reader_connect(r, socket_path);
        if (k < 0) {
                pl_reader_close(r);
                return k;
        }
        *ret = r;
        return 0;
}

/* The kernel's record of who made the provider's socket listen. */
static int peer_cred(struct pl_reader *r, struct ucred *ret)
{
        socklen_t len = sizeof(*ret);

        if (!r)
                return -EINVAL;
        if (r->sock < 0)
                return -ENOTCONN;
        if (getsockopt(r->sock, SOL_SOCKET, SO_PEERCRED, ret, &len) < 0)
                return -errno;
        return 0;
}

int pl_reader_peer_pid(struct pl_reader *r, pid_t *ret_pid)
{
        struct ucred cred;
        int k;

        if (!ret_pid)
                return -EINVAL;
        if ((k = peer_cred(r, &cred)) < 0)
                return k;
        /* 0: the provider lives in a pid namespace this process cannot see. */
        if (cred.pid <= 0)
                return -ESRCH;
        *ret_pid = cred.pid;
        return 0;
}

int pl_reader_peer_uid(struct pl_reader *r, uid_t *ret_uid)
{
        struct ucred cred;
        int k;

        if (!ret_uid)
                return -EINVAL;
        if ((k = peer_cred(r, &cred)) < 0)
                return k;
        *ret_uid = cred.uid;
        return 0;
}

int pl_reader_alive(struct pl_reader *r)
{
        struct pollfd p;
        char c;
        int k;

        if (!r)
                return -EINVAL;
        if (r->sock < 0)
                return -ENOTCONN;
        p = (struct pollfd) { .fd = r->sock, .events = POLLIN | POLLRDHUP };
        do
                k = poll(&p, 1, 0);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        if (p.revents & (POLLHUP | POLLRDHUP | POLLERR))
                return 0;
        if (!(p.revents & POLLIN))
                return 1;
        /* Readable: either EOF or a late reply to a request that timed out. */
        ssize_t n = recv(r->sock, &c, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
                return 1;
        return 0;
}

/*
 * Sends m with a fresh request id and waits for the reply carrying it;
 * replies to earlier requests that timed out are dropped on the way.
 */
static int request(struct pl_reader *r, struct pl_svc_msg *m, const void *payload,
                   uint32_t *ret_status)
{
        int64_t deadline = now_ms() + pl_collect_timeout_ms();
        uint64_t seq = ++r->next_seq;
        struct pl_svc_msg reply;
        uint8_t buf[PL_SVC_MAX_PAYLOAD];
        int ret;

        m->seq = seq;
        ret = pl_svc_send(r->sock, m, payload, -1);
        if (ret < 0)
                return ret == -EAGAIN ? -ETIMEDOUT : ret;
        for (;;) {
                ret = pl_svc_recv(r->sock, &reply, buf, sizeof(buf), NULL, remaining_ms(deadline));
                if (ret == 0 && reply.op == PL_SVC_REPLY && reply.seq == seq) {
                        *ret_status = reply.status;
                        return 0;
                }
                /* A malformed or stale message is skipped, not fatal. */
                if (ret < 0 && ret != -EBADMSG)
                        return ret;
                if (remaining_ms(deadline) == 0)
                        return -ETIMEDOUT;
        }
}

int pl_reader_notify(struct pl_reader *r, uint32_t request_code,
                     const void *buffer, uint32_t size, uint32_t *ret_status)
{
        struct pl_svc_msg m;
        uint32_t status;
        int ret;

        if (!r || !ret_status || size > PL_SVC_MAX_PAYLOAD || (size > 0 && !buffer))
                return -EINVAL;
        if (r->sock < 0)
                return -ENOTCONN;
        pl_svc_init(&m, PL_SVC_NOTIFY, 0);
        m.request_code = request_code;
        m.payload_size = size;
        ret = request(r, &m, buffer, &status);
        if (ret < 0)
                return ret;
        *ret_status = status;
        return 0;
}

bool pl_reader_collect(struct pl_reader *r)
{
        struct pl_svc_msg m;
        uint32_t status;

        if (r->have_id && pl_provider_collect_local(r->dev, r->ino) == 0)
                return true;
        if (r->sock < 0)
                return false;
        pl_svc_init(&m, PL_SVC_COLLECT, 0);
        return request(r, &m, NULL, &status) == 0 && status == 0;
}
