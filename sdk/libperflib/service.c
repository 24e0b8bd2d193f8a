/* SPDX-License-Identifier: MIT */
/*
 * The provider-side collect service: one thread per provider, serving the
 * provider's Unix socket in the runtime directory.  It hands each authorised
 * reader a read-only descriptor of the segment, copies referenced values on
 * request, and runs the ControlCallback for notifications.  The connection
 * itself is the liveness signal: when the process dies, readers see it hang
 * up, whatever killed it.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "collect.h"
#include "leftover.h"
#include "service.h"
#include "state.h"
#include "svc.h"

static unsigned provider_counter;

static int sock_connectable(const char *path)
{
        struct sockaddr_un sa;
        int dfd, r;
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -errno;
        r = pl_sockaddr(path, &sa, &dfd);
        if (r == 0)
                r = connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ? -errno : 0;
        if (dfd >= 0)
                close(dfd);
        close(fd);
        return r;
}

/*
 * Binds path so that it appears only once it accepts connections: bound
 * and made listening under a name readers ignore, then renamed into place.
 * A reader that found the socket between bind() and listen() would get
 * ECONNREFUSED and take it for a dead provider's.  A stale socket left by
 * a dead process (the name embeds a pid, which may be reused) is replaced,
 * a live one is not.
 */
static int bind_socket(int fd, const char *path)
{
        char *tmp = NULL;
        const char *base = strrchr(path, '/');
        struct sockaddr_un sa;
        int dfd, r;

        base = base ? base + 1 : path;
        if (asprintf(&tmp, "%.*s.%s.tmp", (int) (base - path), path, base) < 0)
                return -ENOMEM;
        if (sock_connectable(path) == 0) {
                r = -EADDRINUSE;
                goto out;
        }
        (void) unlink(tmp);
        r = pl_sockaddr(tmp, &sa, &dfd);
        if (r < 0)
                goto out;
        r = bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ? -errno : 0;
        if (dfd >= 0)
                close(dfd);
        if (r < 0)
                goto out;
        /* Group members of the runtime directory may read counters; others not. */
        if (chmod(tmp, 0660) < 0 || listen(fd, 64) < 0 || rename(tmp, path) < 0) {
                r = -errno;
                (void) unlink(tmp);
        }
out:
        free(tmp);
        return r;
}

static int make_path(struct pl_provider *p, const char *dir)
{
        char name[128];
        const GUID *g = &p->guid;
        unsigned n = __atomic_add_fetch(&provider_counter, 1, __ATOMIC_RELAXED);

        snprintf(name, sizeof(name),
                 PL_SVC_SOCKET_PREFIX "%u-%u-%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x"
                 PL_SVC_SOCKET_SUFFIX,
                 (unsigned) getpid(), n, g->Data1, g->Data2, g->Data3, g->Data4[0], g->Data4[1],
                 g->Data4[2], g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
        size_t len = strlen(dir) + 1 + strlen(name) + 1;
        p->sock_path = pl_alloc(p, len);
        if (!p->sock_path)
                return -ENOMEM;
        snprintf(p->sock_path, len, "%s/%s", dir, name);
        return 0;
}

/* Root, our own user, or the group that owns the runtime directory. */
static bool peer_allowed(struct pl_provider *p, int fd)
{
        struct ucred cred;
        socklen_t len = sizeof(cred);
        struct stat st;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return false;
        if (cred.uid == 0 || cred.uid == geteuid())
                return true;
        return stat(p->sock_path, &st) == 0 && cred.gid == st.st_gid;
}

static void reply(int fd, uint64_t seq, uint32_t status)
{
        struct pl_svc_msg m;

        pl_svc_init(&m, PL_SVC_REPLY, seq);
        m.status = status;
        (void) pl_svc_send(fd, &m, NULL, -1);
}

static int accept_client(struct pl_provider *p)
{
        struct pl_svc_msg hello;
        int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0)
                return -errno;
        if (!peer_allowed(p, fd)) {
                close(fd);
                return -EACCES;
        }
        pl_svc_init(&hello, PL_SVC_HELLO, 0);
        hello.segment_size = p->size;
        hello.pid = (uint32_t) getpid();
        if (pl_svc_send(fd, &hello, NULL, p->ro_fd) < 0) {
                close(fd);
                return -EIO;
        }
        return fd;
}

/* Handles one request; a negative return drops the client. */
static int serve(struct pl_provider *p, int fd)
{
        uint8_t payload[PL_SVC_MAX_PAYLOAD];
        struct pl_svc_msg m;
        int r = pl_svc_recv(fd, &m, payload, sizeof(payload), NULL, 0);

        if (r < 0)
                return r == -ETIMEDOUT ? 0 : r;
        switch (m.op) {
        case PL_SVC_COLLECT:
                pl_provider_collect(p);
                __atomic_store_n(&p->hdr->collect_seq, m.seq, __ATOMIC_RELEASE);
                reply(fd, m.seq, ERROR_SUCCESS);
                return 0;
        case PL_SVC_NOTIFY:
                reply(fd, m.seq, p->callback ?
                      p->callback(m.request_code, m.payload_size ? payload : NULL, m.payload_size) :
                      ERROR_NOT_SUPPORTED);
                return 0;
        default:
                return -EBADMSG;
        }
}

/* What a thread's own faults raise, synchronously. */
static const int fault_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT };

/*
 * The client list lives in the provider, under its lock, so that a forked
 * child can close every connection it inherited (see pl_service_forget).
 */
static void client_add(struct pl_provider *p, int fd)
{
        pthread_mutex_lock(&p->lock);
        if (p->n_clients < PL_SVC_MAX_CLIENTS)
                p->clients[p->n_clients++] = fd;
        else
                close(fd);
        pthread_mutex_unlock(&p->lock);
}

static void client_drop(struct pl_provider *p, uint32_t i)
{
        pthread_mutex_lock(&p->lock);
        close(p->clients[i]);
        p->clients[i] = p->clients[--p->n_clients];
        pthread_mutex_unlock(&p->lock);
}

static nfds_t poll_set(struct pl_provider *p, struct pollfd *pf)
{
        nfds_t n = 2;

        pf[0] = (struct pollfd) { .fd = p->wake_fd, .events = POLLIN };
        pf[1] = (struct pollfd) { .fd = p->listen_fd, .events = POLLIN };
        pthread_mutex_lock(&p->lock);
        for (uint32_t i = 0; i < p->n_clients; i++)
                pf[n++] = (struct pollfd) { .fd = p->clients[i], .events = POLLIN };
        pthread_mutex_unlock(&p->lock);
        return n;
}

static void *service_main(void *arg)
{
        struct pl_provider *p = arg;
        struct pollfd pf[2 + PL_SVC_MAX_CLIENTS];

        for (;;) {
                nfds_t n = poll_set(p, pf);
                if (poll(pf, n, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (pf[0].revents)
                        break;
                /* Backwards, so that dropping client i moves only served ones. */
                for (nfds_t i = n; i-- > 2;)
                        if (pf[i].revents && serve(p, pf[i].fd) < 0)
                                client_drop(p, (uint32_t) (i - 2));
                if (pf[1].revents) {
                        int fd = accept_client(p);
                        if (fd >= 0)
                                client_add(p, fd);
                }
        }
        return NULL;
}

int pl_service_start(struct pl_provider *p, const char *dir)
{
        int r;

        r = make_path(p, dir);
        if (r < 0)
                return r;
        p->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        p->wake_fd = eventfd(0, EFD_CLOEXEC);
        if (p->listen_fd < 0 || p->wake_fd < 0)
                return -errno;
        r = bind_socket(p->listen_fd, p->sock_path);
        if (r < 0)
                return r;
        p->leftover_slot = pl_leftover_remember(p->sock_path);
        /*
         * Signals are the application's business: keep them off our thread.
         * But not the ones our thread's own faults raise (in a collect
         * callback, a reference read): blocked, the kernel would kill the
         * process with the default action, past the application's handler
         * (a crash reporter, perflib-plugin-host's).
         */
        sigset_t all, old;
        sigfillset(&all);
        for (size_t i = 0; i < sizeof(fault_signals) / sizeof(fault_signals[0]); i++)
                sigdelset(&all, fault_signals[i]);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = -pthread_create(&p->thread, NULL, service_main, p);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r < 0) {
                pl_leftover_forget(p->leftover_slot);
                p->leftover_slot = -1;
                unlink(p->sock_path);
                return r;
        }
        p->thread_started = true;
        return 0;
}

/* Safe on a partly started service; unlinks the socket first so that no new reader finds it. */
void pl_service_stop(struct pl_provider *p)
{
        if (p->thread_started) {
                pl_leftover_forget(p->leftover_slot);
                p->leftover_slot = -1;
                unlink(p->sock_path);
                (void) eventfd_write(p->wake_fd, 1);
                pthread_join(p->thread, NULL);
                p->thread_started = false;
        }
        pl_service_forget(p);
}

void pl_service_forget(struct pl_provider *p)
{
        /* In a forked child the socket is the parent's: never ours to remove. */
        pl_leftover_forget(p->leftover_slot);
        p->leftover_slot = -1;
        for (uint32_t i = 0; i < p->n_clients; i++)
                close(p->clients[i]);
        p->n_clients = 0;
        if (p->listen_fd >= 0)
                close(p->listen_fd);
        if (p->wake_fd >= 0)
                close(p->wake_fd);
        p->listen_fd = p->wake_fd = -1;
        p->thread_started = false;
}
