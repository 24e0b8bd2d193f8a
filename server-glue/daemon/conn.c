/* SPDX-License-Identifier: MIT */
/*
 * Listeners and client connections.  The event loop accepts; every client
 * then has a thread of its own that feeds its byte stream to its DCE/RPC
 * state (perflibv2.h) and writes the replies.  Requests take the namespace
 * lock, which the namespace lets go of while it waits on a provider: a slow
 * or hung provider holds up the requests that need it (each at most the
 * collect bound) and no others.  A client that does not read its replies
 * blocks its own thread, not the server.
 *
 * Authorisation happens once, at accept: a Unix-socket peer is allowed when
 * it is root, the server's own user, or in the configured group (its
 * primary group or, through SO_PEERGROUPS, a supplementary one).  Others
 * may connect and bind, and get ERROR_ACCESS_DENIED from every method, as
 * MS-PCQ's servers answer an unauthorised caller.  A TCP client, and an SMB
 * client smbd hands over on Samba's pipe (after its named-pipe handshake),
 * is authorised by its logon at packet privacy instead, at its bind.
 *
 * No client starves another (perflibd(8), LIMITS): a connection must bind
 * within the bind deadline and complete a request within every idle
 * deadline, counted in complete PDUs, never in bytes, so that a trickle
 * does not keep it; each user (a uid, or for TCP a remote address) holds
 * a bounded share of the connections, and root and the server's own user
 * always find one; requests, their buffers and query handles are capped
 * through the wire library.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "accept-pause.h"
#include "accounts.h"
#include "acct-winbind.h"
#include "daemon.h"
#include "log.h"
#include "ns-live.h"
#include "pcq-core.h"
#include "perflibv2.h"
#include "remote-auth.h"
#include "np-relay.h"
#include "rrp-perf.h"
#include "samba-np.h"

#define READ_CHUNK      65536
#define DENIED_MAX_REQUEST 65536
#define CONN_STACK_SIZE (1024 * 1024)
#define USEC_PER_SEC    1000000ull
#define NO_DEADLINE     UINT64_MAX

_Static_assert(CONN_MAX_QUERY_ITEMS == PCQ_SESSION_MAX_ITEMS, "one ceiling for items per query");

void conn_limits_default(struct conn_limits *l)
{
        *l = (struct conn_limits){
                .bind_timeout_sec = 10,
                .idle_timeout_sec = 300,
                .max_clients = 1024,
                .max_per_user = 32,
                .max_request = PV2_MAX_REQUEST,
                .request_budget = 64u << 20,
                .max_queries = 64,
                .max_items = 4096,
                .query_memory = 256u << 20,
        };
}

/* Who is at the other end, as the caps count it. */
struct conn_peer {
        bool tcp;
        bool samba;                     /* smbd; the address is its SMB client's, once known */
        bool privileged;                /* root or our own user: the caps never refuse it */
        uid_t uid;                      /* Unix: SO_PEERCRED's, -1 when unknown */
        gid_t gid;
        int family;                     /* TCP: the remote address, without the port */
        uint8_t addr[16];
        struct sockaddr_storage sa;     /* TCP: the remote address, as getpeername gave it */
        socklen_t sa_len;
};

/* One client: its socket, its DCE/RPC state and the thread that serves it. */
struct conn {
        struct daemon *d;
        int fd;                         /* blocking: only its own thread waits on it */
        struct conn_peer peer;
        struct pv2_server_conn *rpc;
        struct pcq_session session;
        struct conn *prev, *next;       /* d->conns, under d->conns_lock */

        /* Samba's pipe: who smbd says the SMB client is, and the framing. */
        struct np_identity np;
        uint8_t *np_req;                /* smbd's handshake, kept for --samba-winreg */
        size_t np_req_len;
        struct np_unframe unframe;
        struct pv2_auth_policy np_policy;
        /* MS-RRP beside PerflibV2 on the pipe: the V1 view of the namespace. */
        struct rrp_perf_session rrp;
        struct rrp_handlers rrp_handlers;
        /* With --samba-winbind: Samba's accounts, and the user winbind vouched for. */
        struct remote_verifier verifier;
        char winbind_user[NTLM_NAME_MAX + 1];

        /* Deadlines, in CLOCK_MONOTONIC microseconds (conn_thread only). */
        uint64_t deadline;
        uint64_t calls;                 /* pv2_server_conn_calls when last counted */
        bool bound;
};

static void conn_unlink(struct conn *c)
{
        struct daemon *d = c->d;

        pthread_mutex_lock(&d->conns_lock);
        if (c->prev)
                c->prev->next = c->next;
        else
                d->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        __atomic_sub_fetch(&d->n_clients, 1, __ATOMIC_RELAXED);
        pthread_cond_broadcast(&d->conns_cond);
        pthread_mutex_unlock(&d->conns_lock);
}

static bool peer_same(const struct conn_peer *a, const struct conn_peer *b)
{
        if (a->tcp != b->tcp || a->samba != b->samba)
                return false;
        if (!a->tcp && !a->samba)
                return a->uid == b->uid;
        return a->family == b->family && memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

/*
 * Whether the caps let one more connection of p in: -EUSERS when the
 * server is full, -EDQUOT when p's user holds its share.  Under conns_lock.
 */
static int conn_admit_locked(const struct daemon *d, const struct conn_peer *p)
{
        const struct conn_limits *l = &d->limits;
        size_t same = 0;

        if (p->privileged)
                return d->n_clients < l->max_clients + CONN_PRIVILEGED_RESERVE ? 0 : -EUSERS;
        if (d->n_clients >= l->max_clients)
                return -EUSERS;
        for (const struct conn *c = d->conns; c && l->max_per_user > 0; c = c->next)
                if (peer_same(&c->peer, p) && ++same >= l->max_per_user)
                        return -EDQUOT;
        return 0;
}

static int conn_link(struct conn *c)
{
        struct daemon *d = c->d;
        int r;

        pthread_mutex_lock(&d->conns_lock);
        r = conn_admit_locked(d, &c->peer);
        if (r == 0) {
                c->next = d->conns;
                if (d->conns)
                        d->conns->prev = c;
                d->conns = c;
                __atomic_add_fetch(&d->n_clients, 1, __ATOMIC_RELAXED);
        }
        pthread_mutex_unlock(&d->conns_lock);
        return r;
}

/*
 * Frees a connection that is not linked, or not linked any more, its
 * thread done with the namespace; accepts NULL.
 */
static void conn_free(struct conn *c)
{
        if (!c)
                return;
        /* Frees every query handle the client left open. */
        ns_lock(c->d->ns);
        pv2_server_conn_free(c->rpc);
        ns_unlock(c->d->ns);
        pcq_session_trim(&c->session);
        np_identity_done(&c->np);
        free(c->np_req);
        if (c->fd >= 0)
                close(c->fd);
        free(c);
}

static bool in_group(int fd, gid_t primary, gid_t want)
{
        gid_t groups[256];
        socklen_t len = sizeof(groups);

        if (primary == want)
                return true;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
                return false;
        for (size_t i = 0; i < len / sizeof(gid_t); i++)
                if (groups[i] == want)
                        return true;
        return false;
}

/*
 * Fills *p from fd: credentials for Unix sockets (smbd's too: its SMB
 * client's address comes with the handshake), the remote address for TCP.
 */
static void peer_identify(int fd, enum conn_kind kind, struct conn_peer *p)
{
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        struct ucred cred;

        *p = (struct conn_peer){ .tcp = kind == CONN_TCP, .samba = kind == CONN_SAMBA,
                                 .uid = (uid_t) -1, .gid = (gid_t) -1 };
        if (p->tcp) {
                if (getpeername(fd, (struct sockaddr *) &ss, &len) < 0)
                        return;         /* every such peer counts as one */
                p->sa = ss;
                p->sa_len = len;
                p->family = ss.ss_family;
                if (ss.ss_family == AF_INET)
                        memcpy(p->addr, &((struct sockaddr_in *) &ss)->sin_addr, 4);
                else if (ss.ss_family == AF_INET6)
                        memcpy(p->addr, &((struct sockaddr_in6 *) &ss)->sin6_addr, 16);
                return;
        }
        len = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return;
        p->uid = cred.uid;
        p->gid = cred.gid;
        /* smbd is root, but its SMB clients are not: they get the caps. */
        p->privileged = !p->samba && (cred.uid == 0 || cred.uid == geteuid());
}

static bool peer_allowed(const struct daemon *d, int fd, const struct conn_peer *p)
{
        /* A TCP or SMB peer is served only once it has logged on (remote-auth.h). */
        if (p->tcp || p->samba || p->privileged)
                return true;
        return p->uid != (uid_t) -1 && d->have_group && in_group(fd, p->gid, d->group);
}

/* Sends every slice, as many at a time as one sendmsg takes. */
static int send_all(int fd, struct iovec *iov, size_t n_iov)
{
        while (n_iov > 0) {
                struct msghdr m = { .msg_iov = iov, .msg_iovlen = n_iov < IOV_MAX ? n_iov : IOV_MAX };
                ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                /* Past the slices sent whole, into the one sent in part. */
                while (n_iov > 0 && (size_t) n >= iov->iov_len) {
                        n -= (ssize_t) iov->iov_len;
                        iov++;
                        n_iov--;
                }
                if (n_iov > 0) {
                        iov->iov_base = (uint8_t *) iov->iov_base + n;
                        iov->iov_len -= (size_t) n;
                }
        }
        return 0;
}

/*
 * Sends what the iovecs hold up to limit bytes (SIZE_MAX: all), and moves
 * *iov and *n_iov past it.
 */
static int send_upto(int fd, struct iovec **iov, size_t *n_iov, size_t limit)
{
        size_t n = 0, k = 0, part;
        struct iovec rest;
        int r;

        while (k < *n_iov && (*iov)[k].iov_len <= limit - n)
                n += (*iov)[k++].iov_len;
        part = k < *n_iov ? limit - n : 0;
        if (part == 0) {
                r = send_all(fd, *iov, k);
                *iov += k;
                *n_iov -= k;
                return r;
        }
        /* The slice the limit falls in: its head now, the rest left for later. */
        rest = (struct iovec){ .iov_base = (uint8_t *) (*iov)[k].iov_base + part,
                               .iov_len = (*iov)[k].iov_len - part };
        (*iov)[k].iov_len = part;
        r = send_all(fd, *iov, k + 1);
        (*iov)[k] = rest;
        *iov += k;
        *n_iov -= k;
        return r;
}

/*
 * Over Samba's pipe each PDU is a message of its own, after its length
 * (samba-np.h): the PDUs of the next limit bytes of the slices, which end
 * on a PDU's end (the sealer seals whole fragments).
 */
static int np_send_upto(int fd, struct iovec **iov, size_t *n_iov, size_t limit)
{
        uint8_t *msg = malloc(NP_MSG_MAX);
        size_t done = 0;
        int r = msg ? 0 : -ENOMEM;

        while (r == 0 && done < limit) {
                int n = np_frame_next(iov, n_iov, msg);
                struct iovec one = { msg, (size_t) n };

                if (n <= 0) {
                        r = n;
                        break;
                }
                done += (size_t) n - 2;
                r = send_all(fd, &one, 1);
        }
        free(msg);
        return r;
}

/*
 * Over TCP the replies are sealed here, out of the namespace lock (sealing
 * a large reply costs several times what building it did, and would hold
 * up every other client), a batch at a time, each sent as soon as it is
 * sealed so that the client opens one while we seal the next.
 */
#define SEAL_BATCH_BYTES (16u * 1024u)

static int send_sealed(struct conn *c, struct iovec *iov, size_t n_iov)
{
        size_t sent = 0, ready;
        int r;

        do {
                r = pv2_server_conn_seal(c->rpc, SEAL_BATCH_BYTES, &ready);
                if (r < 0)
                        return r;
                r = (c->peer.samba ? np_send_upto : send_upto)(c->fd, &iov, &n_iov,
                                                               ready == SIZE_MAX ? SIZE_MAX :
                                                               ready - sent);
                if (r < 0)
                        return r;
                sent = ready;
        } while (ready != SIZE_MAX);
        return 0;
}

/*
 * What the feed decided about a logon, logged; a failed one's answer is
 * held back (this thread only, outside every lock), so that guessing
 * passwords costs time.
 */
static void conn_auth_report(struct conn *c)
{
        const char *detail = NULL;
        enum pv2_auth_event e = pv2_server_conn_auth_event(c->rpc, &detail);
        uint64_t wait;

        if (e == PV2_AUTH_EVENT_NONE || !c->d->remote)
                return;
        wait = remote_auth_report(c->d->remote, e, detail, (struct sockaddr *) &c->peer.sa,
                                  c->peer.sa_len);
        if (wait) {
                struct timespec ts = { .tv_sec = (time_t) (wait / USEC_PER_SEC),
                                       .tv_nsec = (long) (wait % USEC_PER_SEC) * 1000 };

                while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        ;
        }
}

/*
 * Runs the requests that bytes complete, under the namespace lock (which
 * the namespace itself lets go of while it waits on a provider), and
 * sends the replies.  <0: close the connection.
 */
static int conn_serve(struct conn *c, const uint8_t *bytes, size_t n)
{
        struct iovec *iov = NULL;
        size_t n_iov = 0;
        int r, k;

        ns_lock(c->d->ns);
        /* Providers come and go between requests, never during one. */
        k = ns_refresh(c->d->ns);
        if (k < 0)
                log_warning("refreshing the namespace: %s", strerror(-k));
        r = pv2_server_conn_feed_iov(c->rpc, bytes, n, &iov, &n_iov);
        ns_unlock(c->d->ns);
        conn_auth_report(c);
        /*
         * A client that does not read its replies blocks only this thread.
         * The slices point into the connection (lpData included), which
         * only this thread uses: no copy, and no lock, to send them.
         */
        k = send_sealed(c, iov, n_iov);
        /*
         * The wire holds a reply's lpData until the next request; a large
         * one goes now that it is sent, so that a client polling a huge
         * counterset holds none of the query memory between its calls.
         */
        if (pcq_session_lent(&c->session) > PCQ_REPLY_KEEP_BYTES) {
                ns_lock(c->d->ns);
                pv2_server_conn_trim(c->rpc);
                ns_unlock(c->d->ns);
        }
        if (r < 0)
                log_debug("closing a connection: %s", strerror(-r));
        return r < 0 ? r : k;
}

/*
 * A client quiet for this long gives back what its connection keeps from
 * call to call (the reply buffers, as big as its largest reply, the
 * request buffer and the snapshot memory), so that many idle clients hold
 * little.
 */
#define IDLE_TRIM_SEC   2

static void conn_trim(struct conn *c)
{
        if (c->rpc) {
                /* Its lent lpData go back to the handlers, which run under the lock. */
                ns_lock(c->d->ns);
                pv2_server_conn_trim(c->rpc);
                ns_unlock(c->d->ns);
        }
        pcq_session_trim(&c->session);
        ns_thread_trim();
}

static uint64_t now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static uint64_t deadline_after(uint64_t now, unsigned sec)
{
        return sec ? now + sec * USEC_PER_SEC : NO_DEADLINE;
}

static void set_timeo(int fd, int opt, uint64_t usec)
{
        struct timeval tv = { .tv_sec = (time_t) (usec / USEC_PER_SEC),
                              .tv_usec = (suseconds_t) (usec % USEC_PER_SEC) };

        (void) setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

/*
 * Moves the deadline on what the protocol completed, never on bytes: the
 * bind deadline runs from the accept, the idle one from the bind and from
 * every request answered since.  Whether it passed.
 */
static bool conn_deadline_passed(struct conn *c)
{
        const struct conn_limits *l = &c->d->limits;
        uint64_t calls = pv2_server_conn_calls(c->rpc), now = now_usec();

        if (!c->bound && pv2_server_conn_bound(c->rpc)) {
                c->bound = true;
                c->deadline = deadline_after(now, l->idle_timeout_sec);
        }
        if (c->bound && calls != c->calls) {
                c->calls = calls;
                c->deadline = deadline_after(now, l->idle_timeout_sec);
        }
        if (now < c->deadline)
                return false;
        log_debug("closing a connection: no %s within %u s", c->bound ? "request" : "bind",
                  c->bound ? l->idle_timeout_sec : l->bind_timeout_sec);
        return true;
}

/* How long to wait for bytes: until the deadline, or the idle trim when that comes first. */
static int conn_wait_ms(const struct conn *c)
{
        uint64_t t = IDLE_TRIM_SEC * USEC_PER_SEC, now = now_usec();

        if (c->deadline != NO_DEADLINE && c->deadline < now + t)
                t = c->deadline > now ? c->deadline - now : 1;
        return (int) ((t + 999) / 1000);
}

/* ---- Samba's \PIPE\winreg (samba-np.h) ---- */

static void conn_log_refused(const struct daemon *d, const struct conn_peer *p, int r);

/* Reads n bytes by the connection's deadline (the handshake's is the bind's). */
static int recv_by_deadline(struct conn *c, uint8_t *buf, size_t n)
{
        while (n > 0) {
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                ssize_t k;

                if (now_usec() >= c->deadline)
                        return -ETIMEDOUT;
                if (poll(&p, 1, conn_wait_ms(c)) < 0 && errno != EINTR)
                        return -errno;
                k = recv(c->fd, buf, n, MSG_DONTWAIT);
                if (k == 0)
                        return -ECONNRESET;
                if (k < 0 && errno != EINTR && errno != EAGAIN)
                        return -errno;
                if (k > 0) {
                        buf += k;
                        n -= (size_t) k;
                }
        }
        return 0;
}

/* The SMB client's address as smbd names it: what the caps and the logon delay count. */
static void np_peer_address(struct conn_peer *p, const char *text)
{
        struct sockaddr_in *v4 = (struct sockaddr_in *) &p->sa;
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *) &p->sa;

        if (text && inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
                v4->sin_family = AF_INET;
                p->sa_len = sizeof(*v4);
                p->family = AF_INET;
                memcpy(p->addr, &v4->sin_addr, 4);
        } else if (text && inet_pton(AF_INET6, text, &v6->sin6_addr) == 1) {
                v6->sin6_family = AF_INET6;
                p->sa_len = sizeof(*v6);
                p->family = AF_INET6;
                memcpy(p->addr, &v6->sin6_addr, 16);
        }
}

/* With the SMB client known, its share of the connections, as a TCP client's. */
static int np_admit(struct conn *c)
{
        struct daemon *d = c->d;
        size_t same = 0;
        int r = 0;

        pthread_mutex_lock(&d->conns_lock);
        np_peer_address(&c->peer, c->np.client_addr);
        for (const struct conn *o = d->conns; o && d->limits.max_per_user > 0 && r == 0;
             o = o->next)
                if (o != c && peer_same(&o->peer, &c->peer) && ++same >= d->limits.max_per_user)
                        r = -EDQUOT;
        pthread_mutex_unlock(&d->conns_lock);
        if (r < 0)
                conn_log_refused(d, &c->peer, r);
        return r;
}

/*
 * smbd's handshake, by the bind deadline: who the SMB client is, then our
 * reply.  A level we do not speak means another Samba than the one this
 * perflibd knows: said plainly, since every open of the pipe then fails.
 */
static int np_accept(struct conn *c)
{
        uint8_t head[4], rep[NP_AUTH_REP_BYTES], *req = NULL;
        struct iovec iov = { rep, sizeof(rep) };
        uint32_t level = 0;
        size_t size = 0;
        int r;

        r = recv_by_deadline(c, head, sizeof(head));
        if (r == 0)
                r = np_auth_req_size(head, &size);
        if (r == 0 && !(req = malloc(size)))
                r = -ENOMEM;
        if (r == 0) {
                memcpy(req, head, sizeof(head));
                r = recv_by_deadline(c, req + sizeof(head), size - sizeof(head));
        }
        if (r == 0)
                r = np_auth_req_parse(req, size, &c->np, &level);
        /* To be replayed to Samba's winreg server, should the pipe be its. */
        if (r == 0 && c->d->samba_winreg) {
                c->np_req = req;
                c->np_req_len = size;
                req = NULL;
        }
        free(req);
        if (r == -EPROTONOSUPPORT)
                log_error("smbd asked for the named-pipe handshake at level %u; this perflibd "
                          "speaks level %u, that of " NP_AUTH_LEVEL_SAMBA ": \\PIPE\\winreg "
                          "cannot be served to this Samba", level, NP_AUTH_LEVEL);
        else if (r < 0)
                log_warning("closing a connection of smbd: its named-pipe handshake: %s",
                            strerror(-r));
        if (r == 0)
                r = np_admit(c);
        if (r < 0)
                return r;
        log_debug("smbd hands over %s\\%s (uid %llu) from %s", c->np.domain ? c->np.domain : "",
                  c->np.account, (unsigned long long) c->np.uid,
                  c->np.client_addr ? c->np.client_addr : "an unknown address");
        np_auth_rep_build(level, 0, rep);
        return send_all(c->fd, &iov, 1);
}

/*
 * With --samba-winreg the pipe's first message decides who serves it: a
 * bind to MS-RRP goes, with the whole pipe, to Samba's winreg server
 * (np-relay.h); anything else is ours, fed as it came.  0: ours to serve
 * now; 1: relayed, and over; -errno: close.
 */
static int np_route(struct conn *c)
{
        uint8_t *msg = malloc(NP_MSG_MAX);
        size_t len;
        int r, fd = -1;

        r = msg ? recv_by_deadline(c, msg, 2) : -ENOMEM;
        len = r == 0 ? (size_t) (msg[0] | msg[1] << 8) : 0;
        if (r == 0)
                r = recv_by_deadline(c, msg + 2, len);
        if (r == 0 && !np_is_rrp_bind(msg + 2, len)) {
                r = conn_serve(c, msg + 2, len);
                free(msg);
                return r < 0 ? r : 0;
        }
        if (r == 0) {
                r = np_relay_open(c->d->samba_winreg, c->np_req, c->np_req_len,
                                  (int) c->d->limits.bind_timeout_sec * 1000, &fd);
                if (r < 0)
                        log_error("cannot pass an MS-RRP bind of %s to Samba's winreg server "
                                  "at %s: %s", c->np.account, c->d->samba_winreg, strerror(-r));
        }
        if (r == 0) {
                log_debug("passing \\PIPE\\winreg of %s to Samba's winreg server", c->np.account);
                r = np_relay_run(c->fd, fd, msg, len + 2,
                                 (int) c->d->limits.idle_timeout_sec * 1000);
                close(fd);
        }
        free(msg);
        return r < 0 ? r : 1;
}

/*
 * winbind's check of a logon on the pipe (acct-winbind.h), for an account
 * the accounts file does not list.  It may wait on a domain controller:
 * not while holding the namespace lock, under which the connection's
 * bytes are fed (the logon touches nothing of the namespace).
 */
static int np_winbind_verify(void *userdata, const char *user, const char *domain,
                             const uint8_t challenge[8], const uint8_t *nt, size_t nt_len,
                             uint8_t ret_base[16])
{
        struct conn *c = userdata;
        int r;

        ns_unlock(c->d->ns);
        r = acct_winbind_verify(NULL, user, domain, challenge, nt, nt_len, ret_base);
        ns_lock(c->d->ns);
        if (r == 0 && strlen(user) < sizeof(c->winbind_user))
                strcpy(c->winbind_user, user);
        else if (r == 0)
                r = -EACCES;
        if (r == -EHOSTUNREACH || r == -EIO)
                log_error("winbind could not check the logon of %s\\%s on the Samba pipe: %s",
                          domain, user, r == -EHOSTUNREACH ? "winbindd is not running" :
                          "it reported an error");
        return r == -ENOENT ? -ENOENT : r < 0 ? -EACCES : 0;
}

static int np_new_sec(void *userdata, uint8_t auth_type, struct dcerpc_sec *ret)
{
        struct conn *c = userdata;
        const struct pv2_auth_policy *p = remote_auth_policy(c->d->remote);

        if (c->d->samba_winbind)
                return remote_auth_new_sec_verified(&c->verifier, auth_type, ret);
        return p->new_sec(p->userdata, auth_type, ret);
}

/* Whether the SMB user's unix groups meet --samba-group (none given: anyone). */
static bool np_in_groups(const struct daemon *d, const struct np_identity *id)
{
        if (d->n_samba_gids == 0)
                return true;
        for (size_t i = 0; id->have_unix && i < d->n_samba_gids; i++) {
                if (id->gid == d->samba_gids[i])
                        return true;
                for (size_t j = 0; j < id->n_groups; j++)
                        if (id->groups[j] == d->samba_gids[i])
                                return true;
        }
        return false;
}

/*
 * Who may query through the pipe: an account of the accounts file, as over
 * TCP, that is the very account smbd authenticated (an SMB user must not
 * query as another), in one of the --samba-group groups.
 */
static int np_authorize(void *userdata, const char *peer)
{
        struct conn *c = userdata;
        const struct pv2_auth_policy *p = remote_auth_policy(c->d->remote);
        const char *from = c->np.client_addr ? c->np.client_addr : "an unknown address";

        /* An account of the file, or one winbind vouched for on this very logon. */
        if (p->authorize(p->userdata, peer) < 0 &&
            !(c->winbind_user[0] && acct_name_equal(peer, c->winbind_user)))
                return -EACCES;
        if (!acct_name_equal(peer, c->np.account)) {
                log_notice("refused the SMB user %s from %s: it logged on to the pipe as %s",
                           c->np.account, from, peer);
                return -EACCES;
        }
        if (!np_in_groups(c->d, &c->np)) {
                log_notice("refused the SMB user %s (uid %llu) from %s: in none of the "
                           "--samba-group groups", c->np.account,
                           (unsigned long long) c->np.uid, from);
                return -EACCES;
        }
        return 0;
}

/* The pipe's logon: TCP's mechanisms and accounts, and the checks above. */
static int np_setup(struct conn *c)
{
        int r;

        if (!c->d->remote)
                return -EACCES;
        c->np_policy = (struct pv2_auth_policy){ np_new_sec, np_authorize, c };
        c->verifier = (struct remote_verifier){ c->d->remote, np_winbind_verify, c };
        /* ncacn_np's bind_ack names the pipe (MS-RPCE 2.2.2.12 port_any_t). */
        r = pv2_server_conn_set_secondary_address(c->rpc, "\\PIPE\\winreg");
        if (r == 0)
                r = pv2_server_conn_set_auth(c->rpc, &c->np_policy);
        /*
         * The pipe is winreg's: a performance client may read
         * HKEY_PERFORMANCE_DATA there (rrp-perf.h), bound and logged on as
         * for PerflibV2, under the same lock as its handlers.
         */
        c->rrp = (struct rrp_perf_session){ .ns = c->d->ns, .titles = c->d->rrp_titles,
                                            .allowed = c->session.allowed,
                                            .system_name = c->d->hostname };
        c->rrp_handlers = (struct rrp_handlers){ rrp_perf_query_value, rrp_perf_release,
                                                 &c->rrp };
        if (r == 0 && c->d->rrp_titles)
                r = pv2_server_conn_serve_rrp(c->rpc, &c->rrp_handlers);
        return r;
}

/*
 * Serves what the client sent since the last wait, in READ_CHUNK pieces, from
 * a buffer held only meanwhile: a thousand quiet clients hold no read buffer.
 * 0 once no more bytes are waiting, -1 when the connection is done.
 */
static int conn_read_burst(struct conn *c)
{
        uint8_t *buf = malloc(READ_CHUNK);
        int r = -1;

        while (buf) {
                ssize_t n = recv(c->fd, buf, READ_CHUNK, MSG_DONTWAIT);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                        r = 0;
                        break;
                }
                if (n > 0 && c->peer.samba)
                        n = (ssize_t) np_unframe(&c->unframe, buf, (size_t) n);
                else if (n <= 0)
                        break;
                if (n > 0 && conn_serve(c, buf, (size_t) n) < 0)
                        break;
        }
        free(buf);
        return r;
}

static void *conn_thread(void *userdata)
{
        struct conn *c = userdata;
        unsigned idle = c->d->limits.idle_timeout_sec;

        c->deadline = deadline_after(now_usec(), c->d->limits.bind_timeout_sec);
        /* A client that reads nothing of a reply for that long is gone too. */
        if (idle)
                set_timeo(c->fd, SO_SNDTIMEO, idle * USEC_PER_SEC);
        if (c->peer.samba && np_accept(c) < 0)
                goto done;
        if (c->peer.samba && c->d->samba_winreg && np_route(c) != 0)
                goto done;
        for (;;) {
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                int k = poll(&p, 1, conn_wait_ms(c));

                if (k < 0 && errno != EINTR)
                        break;
                if (k == 0)
                        conn_trim(c);
                else if (k > 0 && conn_read_burst(c) < 0)
                        break;
                if (conn_deadline_passed(c))
                        break;
        }
done:
        /*
         * Done with everything the daemon owns before saying so: once the
         * connection is unlinked, conns_stop may return and the namespace go.
         */
        ns_lock(c->d->ns);
        pv2_server_conn_free(c->rpc);
        ns_unlock(c->d->ns);
        c->rpc = NULL;
        conn_trim(c);
        conn_unlink(c);
        close(c->fd);
        np_identity_done(&c->np);
        free(c->np_req);
        free(c);
        return NULL;
}

static void tune_tcp(int fd)
{
        int one = 1;

        /* Requests and replies are small and answered at once: no Nagle delay. */
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        (void) setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
}

/* ncacn_ip_tcp's bind_ack names the server's port as its secondary address. */
static int tcp_secondary_address(int fd, struct pv2_server_conn *rpc)
{
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        char port[16];

        if (getsockname(fd, (struct sockaddr *) &ss, &len) < 0 ||
            getnameinfo((struct sockaddr *) &ss, len, NULL, 0, port, sizeof(port),
                        NI_NUMERICSERV) != 0)
                return 0;       /* the empty address every client accepts */
        return pv2_server_conn_set_secondary_address(rpc, port);
}

static int conn_start(struct conn *c)
{
        pthread_attr_t attr;
        pthread_t t;
        int r;

        r = conn_link(c);
        if (r < 0)
                return r;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, CONN_STACK_SIZE);
        r = -pthread_create(&t, &attr, conn_thread, c);
        pthread_attr_destroy(&attr);
        if (r < 0)
                conn_unlink(c);
        return r;
}

/* The wire's caps for this client: a caller refused anyway needs no large requests. */
static int conn_set_caps(struct conn *c)
{
        const struct conn_limits *l = &c->d->limits;
        size_t max_request = c->session.allowed ? l->max_request :
                             l->max_request < DENIED_MAX_REQUEST ? l->max_request :
                             DENIED_MAX_REQUEST;
        int r;

        c->session.max_items = l->max_items;
        if ((r = pv2_server_conn_set_max_request(c->rpc, max_request)) < 0 ||
            (r = pv2_server_conn_set_max_queries(c->rpc, l->max_queries)) < 0)
                return r;
        return pv2_server_conn_set_budget(c->rpc, c->d->budget);
}

static void conn_log_refused(const struct daemon *d, const struct conn_peer *p, int r)
{
        char who[INET6_ADDRSTRLEN + 16] = "an unknown peer";

        if (!p->tcp && !p->samba && p->uid != (uid_t) -1)
                snprintf(who, sizeof(who), "uid %u", (unsigned) p->uid);
        else if (p->family)
                inet_ntop(p->family, p->addr, who, sizeof(who));
        if (r == -EDQUOT)
                log_info("refusing a connection of %s: it holds %zu already "
                         "(--max-clients-per-user)", who, d->limits.max_per_user);
        else
                log_info("refusing a connection of %s: %zu clients (--max-clients)", who,
                         d->limits.max_clients);
}

/*
 * Serves a new client on a thread of its own, so that a request waiting
 * on a slow provider holds up no other client.  Takes fd.
 */
static int conn_new(struct daemon *d, int fd, enum conn_kind kind)
{
        struct conn *c = calloc(1, sizeof(*c));
        bool allowed, tcp = kind == CONN_TCP;
        int r;

        if (!c) {
                close(fd);
                return -ENOMEM;
        }
        c->d = d;
        c->fd = fd;
        peer_identify(fd, kind, &c->peer);
        allowed = peer_allowed(d, fd, &c->peer);
        /* The socket is smbd's (0600 or its group's): anyone else is a mistake. */
        if (c->peer.samba && c->peer.uid != 0 && c->peer.uid != geteuid() &&
            !(d->have_samba_np_group && c->peer.gid == d->samba_np_group)) {
                log_warning("refusing uid %u on the Samba pipe socket: it is smbd's",
                            (unsigned) c->peer.uid);
                conn_free(c);
                return -EPERM;
        }
        c->session = (struct pcq_session){ .ns = d->ns, .allowed = allowed };
        if (tcp)
                tune_tcp(fd);
        r = pv2_server_conn_new(&pcq_core_handlers, &c->session, &c->rpc);
        if (r == 0 && tcp)
                r = tcp_secondary_address(fd, c->rpc);
        if (r == 0 && tcp)
                r = d->remote ? pv2_server_conn_set_auth(c->rpc, remote_auth_policy(d->remote))
                              : -EACCES;
        if (r == 0 && c->peer.samba)
                r = np_setup(c);
        if (r == 0 && (tcp || c->peer.samba))
                pv2_server_conn_defer_seal(c->rpc);     /* sealed outside the namespace lock */
        if (r == 0)
                r = conn_set_caps(c);
        if (r == 0)
                r = conn_start(c);
        /* Once started, c is its thread's: it may be gone already. */
        if (r == 0 && !allowed)
                log_notice("a client without the right to query connected; "
                           "it gets ERROR_ACCESS_DENIED");
        if (r == -EUSERS || r == -EDQUOT)
                conn_log_refused(d, &c->peer, r);
        if (r < 0)
                conn_free(c);
        return r;
}

void conns_stop(struct daemon *d)
{
        pthread_mutex_lock(&d->conns_lock);
        /* Every thread then sees its recv or send fail, and leaves. */
        for (struct conn *c = d->conns; c; c = c->next)
                shutdown(c->fd, SHUT_RDWR);
        while (d->conns)
                pthread_cond_wait(&d->conns_cond, &d->conns_lock);
        pthread_mutex_unlock(&d->conns_lock);
}

struct listener {
        struct daemon *d;
        enum conn_kind kind;
        struct accept_pause pause;      /* out of descriptors: stop accepting a while */
};

static int listener_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct listener *l = userdata;
        struct daemon *d = l->d;
        int r;

        for (;;) {
                int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

                if (cfd < 0) {
                        int e = errno;

                        if (e == EINTR || e == ECONNABORTED)
                                continue;
                        if (e != EAGAIN && !accept_pause(&l->pause, e))
                                log_warning("accept: %s", strerror(e));
                        return 0;
                }
                accept_pause_reset(&l->pause);
                /* conn_new applies the caps, and logs whom they refuse. */
                r = conn_new(d, cfd, l->kind);
                if (r < 0 && r != -EUSERS && r != -EDQUOT && r != -EPERM)
                        log_warning("cannot serve a new client: %s", strerror(-r));
        }
}

static void listener_destroy(void *userdata)
{
        free(userdata);
}

int listener_add(struct daemon *d, int fd, enum conn_kind kind)
{
        struct listener *l = malloc(sizeof(*l));
        sd_event_source *s;
        int r;

        if (!l)
                return -ENOMEM;
        /* Sockets passed by systemd may be blocking; accept must never block the loop. */
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
                free(l);
                return -errno;
        }
        *l = (struct listener){ .d = d, .kind = kind };
        r = sd_event_add_io(d->event, &s, fd, EPOLLIN, listener_io, l);
        if (r < 0) {
                free(l);
                return r;
        }
        /* From here the source owns both the listener and the descriptor. */
        sd_event_source_set_destroy_callback(s, listener_destroy);
        r = sd_event_source_set_io_fd_own(s, true);
        if (r == 0)
                r = sd_event_source_set_floating(s, true);
        sd_event_source_unref(s);
        if (r < 0)
                return r;
        return accept_pause_init(&l->pause, s);
}

/* 1 when a server already answers at path, 0 when not (a stale socket). */
static int unix_in_use(const char *path, const struct sockaddr_un *sa)
{
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int r;

        if (fd < 0)
                return -errno;
        r = connect(fd, (const struct sockaddr *) sa, sizeof(*sa)) == 0 ? 1 : 0;
        close(fd);
        return r;
}

int listen_unix(const char *path, mode_t mode, int *ret_fd)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        r = unix_in_use(path, &sa);
        if (r != 0)
                return r > 0 ? -EADDRINUSE : r;
        if (unlink(path) < 0 && errno != ENOENT)
                return -errno;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || chmod(path, mode) < 0 ||
            listen(fd, SOMAXCONN) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

/* Splits "host:port" or "[v6]:port"; host and port point into buf. */
static int split_host_port(char *buf, char **ret_host, char **ret_port)
{
        char *colon;

        if (buf[0] == '[') {
                char *end = strchr(buf, ']');

                if (!end || end[1] != ':')
                        return -EINVAL;
                *end = '\0';
                *ret_host = buf + 1;
                *ret_port = end + 2;
                return 0;
        }
        colon = strrchr(buf, ':');
        if (!colon || colon == buf || !colon[1])
                return -EINVAL;
        *colon = '\0';
        *ret_host = buf;
        *ret_port = colon + 1;
        return 0;
}

static int bind_first(const struct addrinfo *list, int *ret_fd)
{
        int r = -EADDRNOTAVAIL, one = 1;

        for (const struct addrinfo *a = list; a; a = a->ai_next) {
                int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                                a->ai_protocol);

                if (fd < 0) {
                        r = -errno;
                        continue;
                }
                (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
                if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
                        *ret_fd = fd;
                        return 0;
                }
                r = -errno;
                close(fd);
        }
        return r;
}

int listen_tcp(const char *spec, int *ret_fd)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
        struct addrinfo *list = NULL;
        char *buf = strdup(spec), *host, *port;
        int r;

        if (!buf)
                return -ENOMEM;
        r = split_host_port(buf, &host, &port);
        if (r == 0)
                r = getaddrinfo(host, port, &hints, &list) == 0 ? 0 : -EADDRNOTAVAIL;
        if (r == 0)
                r = bind_first(list, ret_fd);
        if (list)
                freeaddrinfo(list);
        free(buf);
        return r;
}
