/* SPDX-License-Identifier: MIT */
/*
 * The PerflibV2 client: one connection, bound once, calls one at a time.
 *
 * Every call has the client's timeout as a deadline for the whole exchange
 * (poll on a non-blocking socket).  A connection that timed out or saw a
 * PDU it cannot place is out of step with the server for good: every later
 * call returns ERROR_CONNECTION_ABORTED without touching the socket.
 *
 * The server's reply is untrusted like anything else from a socket:
 * responses are reassembled up to a bound computed from what the call can
 * legitimately return, and the stub is checked field by field.
 *
 * Over TCP the client may authenticate (MS-PCQ 2.1: NTLM or SPNEGO at
 * PKT_PRIVACY): the bind carries the security context's first token, the
 * bind_ack the server's answer, and an auth3 (NTLM) or alter_context
 * (SPNEGO, whose answer proves the server through mechListMIC) completes
 * it.  From then on every request is sealed and every response fragment
 * checked and unsealed whole before a byte of it is believed; a fragment
 * that fails breaks the connection as a timeout does.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "dcerpc.h"
#include "dcerpc-auth.h"
#include "dcerpc-sec.h"
#include "ndr.h"
#include "pcq-utf.h"
#include "perflibv2.h"

#define PV2_CLIENT_FRAG DCERPC_SERVER_MAX_FRAG
/* Slack over the lpData bytes for the other [out] fields of a response. */
#define PV2_RESPONSE_SLACK 64u
/* A bind or alter_context of one context with one transfer syntax, before any verifier. */
#define PV2_BIND_SIZE 72u
/* Tokens a context may take after the bind_ack's (SPNEGO around NTLM needs one). */
#define PV2_AUTH_ROUNDS 4
/* Our auth_context_id: one security context per connection, any number does. */
#define PV2_AUTH_CONTEXT_ID 1u

struct pv2_client {
        int fd;
        int timeout_ms;
        uint32_t next_call_id;
        uint16_t max_xmit;              /* largest fragment we may send */
        uint32_t last_fault;
        bool broken;
        uint8_t bind_flags;             /* of the bind and alter_context */
        struct dcerpc_sec sec;          /* owned; ops NULL: unauthenticated */
        struct dcerpc_auth auth;        /* its protection, mech set once established */
        uint8_t frag[65536];            /* one received fragment */
};

/* ---- socket I/O under a deadline ---- */

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* deadline < 0: none. */
static int wait_fd(int fd, short events, int64_t deadline)
{
        for (;;) {
                int t = -1;
                if (deadline >= 0) {
                        int64_t left = deadline - now_ms();
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

static int send_all(int fd, const uint8_t *b, size_t n, int64_t deadline)
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
                int r = wait_fd(fd, POLLOUT, deadline);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int recv_all(int fd, uint8_t *b, size_t n, int64_t deadline)
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
                int r = wait_fd(fd, POLLIN, deadline);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int64_t deadline_of(const struct pv2_client *c)
{
        return c->timeout_ms > 0 ? now_ms() + c->timeout_ms : -1;
}

/* Reads one PDU into c->frag. */
static int recv_pdu(struct pv2_client *c, struct dcerpc_hdr *ret, int64_t deadline)
{
        int r = recv_all(c->fd, c->frag, DCERPC_HDR_SIZE, deadline);
        if (r < 0)
                return r;
        r = dcerpc_parse_hdr(c->frag, ret);
        if (r < 0)
                return -EPROTO;
        return recv_all(c->fd, c->frag + DCERPC_HDR_SIZE, ret->frag_len - DCERPC_HDR_SIZE,
                        deadline);
}

/* ---- connect and bind ---- */

/*
 * A bind or alter_context (ptype) offering PerflibV2 over NDR as context 0,
 * with a verifier carrying token when there is one.  *ret is malloc'd,
 * the caller's.
 */
static int build_bind(const struct pv2_client *c, uint8_t ptype, uint32_t call_id,
                      const uint8_t *token, size_t token_len, uint8_t **ret, size_t *ret_len)
{
        uint8_t *b = NULL, *at;
        size_t len = 0;
        int r = dcerpc_grow(&b, &len, PV2_BIND_SIZE, &at);

        if (r < 0)
                return r;
        memset(b, 0, PV2_BIND_SIZE);
        dcerpc_put_hdr(b, ptype, c->bind_flags, PV2_BIND_SIZE, call_id);
        ndr_put_le16(b + 16, PV2_CLIENT_FRAG);
        ndr_put_le16(b + 18, PV2_CLIENT_FRAG);
        /* assoc_group 0; one context, id 0, one transfer syntax. */
        b[24] = 1;
        b[30] = 1;
        memcpy(b + 32, dcerpc_pv2_syntax, DCERPC_SYNTAX_SIZE);
        memcpy(b + 52, dcerpc_ndr_syntax, DCERPC_SYNTAX_SIZE);
        if (token)
                r = dcerpc_auth_append_token(&b, &len, 0, c->auth.auth_type, c->auth.auth_level,
                                             c->auth.context_id, token, token_len);
        if (r < 0) {
                free(b);
                return r;
        }
        *ret = b;
        *ret_len = len;
        return 0;
}

static int send_bind(struct pv2_client *c, uint8_t ptype, uint32_t call_id, const uint8_t *token,
                     size_t token_len, int64_t deadline)
{
        uint8_t *b;
        size_t len;
        int r = build_bind(c, ptype, call_id, token, token_len, &b, &len);

        if (r < 0)
                return r;
        r = send_all(c->fd, b, len, deadline);
        free(b);
        return r;
}

/*
 * The body of a bind_ack or alter_context_resp in c->frag: the context
 * accepted with NDR, and the server's largest receive fragment.
 */
static int parse_ack(const struct pv2_client *c, const struct dcerpc_hdr *h,
                     uint16_t *ret_server_recv)
{
        struct ndr_pull p;

        ndr_pull_init(&p, c->frag, h->frag_len);
        (void)ndr_pull_bytes(&p, DCERPC_HDR_SIZE);
        (void)ndr_pull_u16(&p);                 /* the server's max_xmit_frag */
        uint16_t server_recv = ndr_pull_u16(&p);
        (void)ndr_pull_u32(&p);
        uint16_t secaddr = ndr_pull_u16(&p);
        (void)ndr_pull_bytes(&p, secaddr);
        ndr_pull_align(&p, 4);
        uint8_t n = ndr_pull_u8(&p);
        (void)ndr_pull_bytes(&p, 3);
        const uint8_t *res = ndr_pull_bytes(&p, 24);
        if (p.err || n < 1 || ndr_le16(res) != DCERPC_RESULT_ACCEPTANCE ||
            memcmp(res + 4, dcerpc_ndr_syntax, DCERPC_SYNTAX_SIZE) != 0)
                return -EPROTO;
        *ret_server_recv = server_recv;
        return 0;
}

/*
 * A refusal of a bind or alter_context: a bind_nak for anything but the
 * protocol version, or nca_s_fault_access_denied, says the server will
 * not have us (an unauthenticated bind over TCP, a wrong password).
 */
static int refusal(const struct pv2_client *c, const struct dcerpc_hdr *h)
{
        if (h->ptype == DCERPC_BIND_NAK && h->frag_len >= DCERPC_HDR_SIZE + 2)
                return ndr_le16(c->frag + DCERPC_HDR_SIZE) == DCERPC_NAK_PROTOCOL_VERSION ?
                       -EPROTO : -EACCES;
        if (h->ptype == DCERPC_FAULT && h->frag_len >= DCERPC_FAULT_SIZE &&
            ndr_le32(c->frag + 24) == PV2_NCA_S_FAULT_ACCESS_DENIED)
                return -EACCES;
        return -EPROTO;
}

/*
 * Receives the answer (want) to the bind or alter_context call_id into
 * c->frag.  When authenticating, its verifier must match ours (type,
 * level, context id): *ret views it, auth_len 0 when there is none.
 */
static int recv_ack(struct pv2_client *c, uint8_t want, uint32_t call_id, int64_t deadline,
                    uint16_t *ret_server_recv, struct dcerpc_auth_view *ret)
{
        struct dcerpc_auth_view v = { 0 };
        struct dcerpc_hdr h;
        int r = recv_pdu(c, &h, deadline);

        if (r < 0)
                return r;
        if (h.ptype != want || h.call_id != call_id)
                return refusal(c, &h);
        r = parse_ack(c, &h, ret_server_recv);
        if (r < 0)
                return r;
        if (c->sec.ops) {
                if (dcerpc_auth_parse(c->frag, h.frag_len, &v) < 0)
                        return -EPROTO;
                if (v.auth_len && (v.auth_type != c->auth.auth_type ||
                                   v.auth_level != c->auth.auth_level ||
                                   v.auth_context_id != c->auth.context_id))
                        return -EPROTO;
        } else if (h.auth_len)
                return -EPROTO;
        *ret = v;
        return 0;
}

/* NTLM's third leg: AUTHENTICATE in an auth3 of the bind's call_id; nothing answers it. */
static int send_auth3(struct pv2_client *c, uint32_t call_id, const uint8_t *token,
                      size_t token_len, int64_t deadline)
{
        uint8_t *b = NULL, *at;
        size_t len = 0;
        int r = dcerpc_grow(&b, &len, DCERPC_HDR_SIZE + 4, &at);

        if (r < 0)
                return r;
        memset(b, 0, len);
        dcerpc_put_hdr(b, DCERPC_AUTH3, DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG,
                       (uint16_t)len, call_id);
        r = dcerpc_auth_append_token(&b, &len, 0, c->auth.auth_type, c->auth.auth_level,
                                     c->auth.context_id, token, token_len);
        if (r == 0)
                r = send_all(c->fd, b, len, deadline);
        free(b);
        return r;
}

/*
 * Steps the security context from the server's token in the bind_ack (v)
 * until it is established: NTLM ends with an auth3, SPNEGO with an
 * alter_context whose answer carries the server's last token (and its
 * mechListMIC, which the step checks).  -EACCES when the server refuses
 * us or fails to prove itself.
 */
static int authenticate(struct pv2_client *c, uint32_t bind_call_id,
                        const struct dcerpc_auth_view *v, int64_t deadline)
{
        const uint8_t *in = v->auth_len ? c->frag + v->auth_off : NULL;
        size_t in_len = v->auth_len;

        for (int round = 0; round < PV2_AUTH_ROUNDS; round++) {
                struct dcerpc_auth_view ack;
                uint16_t unused;
                uint8_t *tok = NULL;
                size_t tok_len = 0;
                uint32_t call_id = c->next_call_id;
                int st = c->sec.ops->step(c->sec.ctx, in, in_len, &tok, &tok_len);

                if (st < 0)
                        return st;
                if (!tok)
                        return st == DCERPC_SEC_DONE ? 0 : -EPROTO;
                if (st == DCERPC_SEC_DONE && c->auth.auth_type == DCERPC_AUTH_TYPE_NTLM) {
                        int r = send_auth3(c, bind_call_id, tok, tok_len, deadline);
                        free(tok);
                        return r;
                }
                c->next_call_id++;
                int r = send_bind(c, DCERPC_ALTER_CONTEXT, call_id, tok, tok_len, deadline);
                free(tok);
                if (r == 0)
                        r = recv_ack(c, DCERPC_ALTER_CONTEXT_RESP, call_id, deadline, &unused, &ack);
                if (r < 0)
                        return r;
                if (st == DCERPC_SEC_DONE && ack.auth_len == 0)
                        return 0;
                in = ack.auth_len ? c->frag + ack.auth_off : NULL;
                in_len = ack.auth_len;
        }
        return -EPROTO;
}

/* Binds, authenticating first when c has a security context. */
static int bind_iface(struct pv2_client *c)
{
        int64_t deadline = deadline_of(c);
        uint32_t call_id = c->next_call_id++;
        uint8_t *tok = NULL;
        size_t tok_len = 0;
        struct dcerpc_auth_view v;
        uint16_t server_recv;
        int r = 0;

        if (c->sec.ops) {
                r = c->sec.ops->step(c->sec.ctx, NULL, 0, &tok, &tok_len);
                if (r >= 0 && !tok)
                        r = -EPROTO;
        }
        if (r >= 0)
                r = send_bind(c, DCERPC_BIND, call_id, tok, tok_len, deadline);
        free(tok);
        if (r == 0)
                r = recv_ack(c, DCERPC_BIND_ACK, call_id, deadline, &server_recv, &v);
        if (r < 0)
                return r;
        c->max_xmit = server_recv < DCERPC_MIN_FRAG ? DCERPC_MIN_FRAG :
                      server_recv > PV2_CLIENT_FRAG ? PV2_CLIENT_FRAG : server_recv;
        if (!c->sec.ops)
                return 0;
        /* A server that binds us without a token does not authenticate: not one to trust. */
        if (v.auth_len == 0)
                return -EPROTONOSUPPORT;
        c->auth.header_sign = dcerpc_auth_header_sign(c->bind_flags, v.flags);
        r = authenticate(c, call_id, &v, deadline);
        if (r < 0)
                return r;
        c->auth.mech = c->sec.ops->mech;
        c->auth.ctx = c->sec.ops->mech_ctx ? c->sec.ops->mech_ctx(c->sec.ctx) : NULL;
        return c->auth.mech && c->auth.ctx ? 0 : -EPROTO;
}

/*
 * Takes fd and *sec (its ops NULL: no authentication), whatever the
 * outcome, and binds.
 */
static int client_new(int fd, int timeout_ms, uint8_t auth_type, struct dcerpc_sec *sec,
                      struct pv2_client **ret)
{
        struct pv2_client *c = calloc(1, sizeof(*c));

        if (!c) {
                close(fd);
                dcerpc_sec_free(sec);
                return -ENOMEM;
        }
        c->fd = fd;
        c->timeout_ms = timeout_ms;
        c->next_call_id = 1;
        c->bind_flags = DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG;
        c->sec = *sec;
        *sec = (struct dcerpc_sec){ 0 };
        if (c->sec.ops) {
                c->bind_flags |= DCERPC_PFC_SUPPORT_HEADER_SIGN;
                c->auth = (struct dcerpc_auth){ .auth_type = auth_type,
                                                .auth_level = DCERPC_AUTH_LEVEL_PRIVACY,
                                                .context_id = PV2_AUTH_CONTEXT_ID };
        }
        int r = bind_iface(c);
        if (r < 0) {
                pv2_client_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

static int set_nonblock(int fd)
{
        int fl = fcntl(fd, F_GETFL);

        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
                return -errno;
        return 0;
}

int pv2_client_connect_unix(const char *path, int timeout_ms, struct pv2_client **ret)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        if (!path || !ret || timeout_ms < 0)
                return -EINVAL;
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || set_nonblock(fd) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return client_new(fd, timeout_ms, DCERPC_AUTH_TYPE_NONE, &(struct dcerpc_sec){ 0 }, ret);
}

/* A non-blocking connect to one address, bounded by deadline. */
static int connect_one(const struct addrinfo *ai, int64_t deadline)
{
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                        ai->ai_protocol);
        int r = 0;

        if (fd < 0)
                return -errno;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
                r = errno == EINPROGRESS ? wait_fd(fd, POLLOUT, deadline) : -errno;
                if (r == 0) {
                        int err = 0;
                        socklen_t len = sizeof(err);
                        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                                err = errno;
                        r = -err;
                }
        }
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

int pv2_client_connect_tcp_sec(const char *host, const char *port, int timeout_ms,
                               uint8_t auth_type, struct dcerpc_sec *sec, struct pv2_client **ret)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
        struct addrinfo *res = NULL;
        struct dcerpc_sec none = { 0 };
        int r = -ECONNREFUSED;

        if (!sec)
                sec = &none;
        if (!host || !port || !ret || timeout_ms < 0 || (sec->ops && !sec->ops->step)) {
                dcerpc_sec_free(sec);
                return -EINVAL;
        }
        if (getaddrinfo(host, port, &hints, &res) != 0) {
                dcerpc_sec_free(sec);
                return -EHOSTUNREACH;
        }
        int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : -1;
        int fd = -1;
        for (const struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
                fd = connect_one(ai, deadline);
                if (fd < 0)
                        r = fd;
        }
        freeaddrinfo(res);
        if (fd < 0) {
                dcerpc_sec_free(sec);
                return r;
        }
        return client_new(fd, timeout_ms, auth_type, sec, ret);
}

int pv2_client_connect_tcp(const char *host, const char *port, int timeout_ms,
                           struct pv2_client **ret)
{
        return pv2_client_connect_tcp_sec(host, port, timeout_ms, DCERPC_AUTH_TYPE_NONE, NULL, ret);
}

void pv2_client_free(struct pv2_client *c)
{
        if (!c)
                return;
        if (c->fd >= 0)
                close(c->fd);
        dcerpc_sec_free(&c->sec);
        free(c);
}

uint32_t pv2_client_last_fault(const struct pv2_client *c)
{
        return c ? c->last_fault : 0;
}

/* ---- one call ---- */

/* Where the stub of a response goes: its first bytes into head, the rest into ret. */
struct stub_dest {
        uint8_t *head;
        size_t head_len, head_got;
        size_t cap;                     /* ret may not grow past it */
        struct ndr_push *ret;
};

/* n bytes into dst: from src, or from the socket when src is NULL. */
static int fill(struct pv2_client *c, uint8_t *dst, const uint8_t *src, size_t n,
                int64_t deadline)
{
        if (n == 0)
                return 0;
        if (!src)
                return recv_all(c->fd, dst, n, deadline);
        memcpy(dst, src, n);
        return 0;
}

/*
 * Places the n stub bytes of one response fragment where d says, each
 * byte received (src NULL) or copied (src, an unsealed fragment) once.
 */
static int take_stub(struct pv2_client *c, const uint8_t *src, size_t n, struct stub_dest *d,
                     int64_t deadline)
{
        size_t h = d->head_len - d->head_got < n ? d->head_len - d->head_got : n;
        int r;

        if (n - h > d->cap - d->ret->size)
                return -EPROTO;
        r = fill(c, d->head + d->head_got, src, h, deadline);
        if (r < 0)
                return r;
        d->head_got += h;
        if (n == h)
                return 0;
        uint8_t *b = ndr_push_room(d->ret, n - h);
        if (!b)
                return d->ret->err;
        return fill(c, b, src ? src + h : NULL, n - h, deadline);
}

/* A fragment of the answer to a call, its call header in c->frag. */
struct frag {
        struct dcerpc_hdr h;
        const uint8_t *stub;            /* unsealed in c->frag; NULL: still on the socket */
        size_t stub_len;
};

/* A plain fragment: the headers now, the stub (of a response) left to take_stub. */
static int recv_plain(struct pv2_client *c, struct frag *f, int64_t deadline)
{
        int r = recv_all(c->fd, c->frag, DCERPC_HDR_SIZE, deadline);

        if (r < 0)
                return r;
        if (dcerpc_parse_hdr(c->frag, &f->h) < 0 || f->h.auth_len != 0)
                return -EPROTO;
        if (f->h.ptype != DCERPC_RESPONSE || f->h.frag_len < DCERPC_CALL_HDR_SIZE)
                return recv_all(c->fd, c->frag + DCERPC_HDR_SIZE,
                                f->h.frag_len - DCERPC_HDR_SIZE, deadline);
        f->stub = NULL;
        f->stub_len = f->h.frag_len - DCERPC_CALL_HDR_SIZE;
        return recv_all(c->fd, c->frag + DCERPC_HDR_SIZE, DCERPC_CALL_HDR_SIZE - DCERPC_HDR_SIZE,
                        deadline);
}

/*
 * A protected fragment, whole, checked and unsealed before anything in it
 * is believed.  A fault without a verifier is taken as it is: a server
 * refusing a call may not sign its refusal, and a forged one can only
 * end the call, as a forged reset could.
 */
static int recv_sealed(struct pv2_client *c, struct frag *f, int64_t deadline)
{
        struct dcerpc_auth_view v;
        int r = recv_pdu(c, &f->h, deadline);

        if (r < 0)
                return r;
        if (f->h.ptype == DCERPC_FAULT && f->h.auth_len == 0)
                return 0;
        r = dcerpc_auth_verify(&c->auth, c->frag, f->h.frag_len, &v);
        if (r < 0)
                return r;
        f->stub = c->frag + v.stub_off;
        f->stub_len = v.stub_len;
        return 0;
}

static uint32_t fault_status(struct pv2_client *c, const struct frag *f)
{
        if (f->h.ptype != DCERPC_FAULT || f->h.frag_len < DCERPC_FAULT_SIZE)
                return 0;
        c->last_fault = ndr_le32(c->frag + 24);
        return c->last_fault == PV2_NCA_S_FAULT_ACCESS_DENIED ? ERROR_ACCESS_DENIED :
               PV2_RPC_S_CALL_FAILED;
}

/* The request PDUs of a call, protected when the connection is. */
static int build_request(struct pv2_client *c, uint32_t call_id, uint16_t opnum,
                         const struct ndr_push *stub, uint8_t **pdus, size_t *pdus_len)
{
        if (c->sec.ops)
                return dcerpc_auth_append_call(&c->auth, pdus, pdus_len, DCERPC_REQUEST, call_id,
                                               0, opnum, stub->data, stub->size, c->max_xmit);
        return dcerpc_append_call(pdus, pdus_len, DCERPC_REQUEST, call_id, 0, opnum,
                                  stub->data, stub->size, c->max_xmit);
}

/*
 * Receives the response to call_id into d, fragment by fragment: 0 with
 * *ret_fault 0, or the status of a fault as call_split returns it; -errno
 * when the connection is out of step.
 */
static int recv_response(struct pv2_client *c, uint32_t call_id, struct stub_dest *d,
                         int64_t deadline, uint32_t *ret_fault)
{
        for (bool first = true;; first = false) {
                struct frag f = { 0 };
                int r = c->sec.ops ? recv_sealed(c, &f, deadline) : recv_plain(c, &f, deadline);

                if (r < 0)
                        return r;
                if (f.h.call_id != call_id || (first && !(f.h.flags & DCERPC_PFC_FIRST_FRAG)))
                        return -EPROTO;
                *ret_fault = fault_status(c, &f);
                if (*ret_fault)
                        return 0;
                if (f.h.ptype != DCERPC_RESPONSE || f.h.frag_len < DCERPC_CALL_HDR_SIZE)
                        return -EPROTO;
                if (first) {
                        /* alloc_hint sizes the buffer, within what the call may return. */
                        uint32_t hint = ndr_le32(c->frag + 16);
                        ndr_push_presize(d->ret, hint < d->cap ? hint : d->cap);
                }
                r = take_stub(c, f.stub, f.stub_len, d, deadline);
                if (r < 0)
                        return r;
                if (f.h.flags & DCERPC_PFC_LAST_FRAG)
                        return 0;
        }
}

/*
 * Sends stub as a request of opnum, reassembles the response stub: its
 * first head_len bytes into head (*ret_head_got says how many came), the
 * rest (at most resp_cap bytes) into *ret (malloc'd, the caller's), each
 * fragment received where it belongs rather than copied there (once
 * unsealed, when the connection is protected).  Returns 0, the
 * RPC_S_CALL_FAILED of a fault (ERROR_ACCESS_DENIED for
 * nca_s_fault_access_denied), ERROR_CONNECTION_ABORTED or
 * ERROR_OUTOFMEMORY.
 */
static uint32_t call_split(struct pv2_client *c, uint16_t opnum, const struct ndr_push *stub,
                           uint8_t *head, size_t head_len, size_t *ret_head_got,
                           size_t resp_cap, struct ndr_push *ret)
{
        struct stub_dest d = { .head = head, .head_len = head_len, .cap = resp_cap, .ret = ret };
        uint8_t *pdus = NULL;
        size_t pdus_len = 0;
        int64_t deadline = deadline_of(c);
        uint32_t call_id = c->next_call_id++;

        if (c->broken)
                return PV2_ERROR_CONNECTION_ABORTED;
        if (stub->err)
                return stub->err == -ENOMEM ? ERROR_OUTOFMEMORY : ERROR_INVALID_PARAMETER;
        if (build_request(c, call_id, opnum, stub, &pdus, &pdus_len) < 0) {
                free(pdus);
                /* A sealing mechanism may have moved its sequence on: no going back. */
                c->broken = c->sec.ops != NULL;
                return ERROR_OUTOFMEMORY;
        }
        int r = send_all(c->fd, pdus, pdus_len, deadline);
        free(pdus);
        ndr_push_init(ret);
        uint32_t fault = 0;
        if (r == 0)
                r = recv_response(c, call_id, &d, deadline, &fault);
        if (r == 0 && !fault) {
                if (ret_head_got)
                        *ret_head_got = d.head_got;
                return 0;
        }
        ndr_push_done(ret);
        if (r == 0)
                return fault;
        c->broken = true;
        return PV2_ERROR_CONNECTION_ABORTED;
}

static uint32_t call(struct pv2_client *c, uint16_t opnum, const struct ndr_push *stub,
                     size_t resp_cap, struct ndr_push *ret)
{
        return call_split(c, opnum, stub, NULL, 0, NULL, resp_cap, ret);
}

/* A response stub that does not parse: reported like a fault the client raised. */
static uint32_t bad_stub(struct pv2_client *c)
{
        c->last_fault = PV2_NCA_S_FAULT_NDR;
        return PV2_RPC_S_CALL_FAILED;
}

/* ---- [in] parameters ---- */

/* machine as UTF-16LE [string]; NULL is the empty string; bad UTF-8 is refused. */
static void push_machine(struct ndr_push *p, const char *machine)
{
        const unsigned char *s = (const unsigned char *)(machine ? machine : "");
        uint8_t *u = malloc((strlen((const char *)s) + 1) * 4);
        size_t k = 0;

        if (!u) {
                p->err = p->err ? p->err : -ENOMEM;
                return;
        }
        while (*s) {
                uint16_t units[2];
                uint32_t cp;
                size_t n;

                s += pcq_utf8_next(s, &cp);
                if (cp == PCQ_UTF_INVALID) {
                        free(u);
                        p->err = p->err ? p->err : -EINVAL;
                        return;
                }
                n = pcq_utf16_encode(cp, units);
                for (size_t i = 0; i < n; i++)
                        ndr_put_le16(u + 2 * k++, units[i]);
        }
        ndr_put_le16(u + 2 * k++, 0);
        ndr_push_wstring(p, u, (uint32_t)k);
        free(u);
}

/* ---- the lpData methods ---- */

/*
 * Sends stub, parses pdwOutSize, pdwRtnSize, lpData and the status into
 * out.  The five fixed fields before lpData are received apart, so that
 * the response buffer starts with lpData and becomes out->data as it is.
 */
static uint32_t out_call(struct pv2_client *c, uint16_t opnum, struct ndr_push *stub,
                         uint32_t in_size, size_t elem, struct pv2_out *out)
{
        struct ndr_push resp;
        uint8_t head[20];
        size_t got = 0;
        size_t cap = (size_t)in_size * elem + PV2_RESPONSE_SLACK;
        uint32_t st = call_split(c, opnum, stub, head, sizeof(head), &got, cap, &resp);

        ndr_push_done(stub);
        if (st != ERROR_SUCCESS)
                return st;

        uint32_t out_size = ndr_le32(head), rtn_size = ndr_le32(head + 4);
        uint32_t max = ndr_le32(head + 8), offset = ndr_le32(head + 12);
        uint32_t actual = ndr_le32(head + 16);
        size_t n = (size_t)actual * elem;
        /* lpData starts 4-aligned (at 20): the status follows it, aligned to 4. */
        size_t pad = (4 - (n & 3)) & 3;
        if (got < sizeof(head) || max != in_size || offset != 0 || actual > max ||
            actual != out_size || resp.size < n + pad + 4) {
                ndr_push_done(&resp);
                return bad_stub(c);
        }
        st = ndr_le32(resp.data + n + pad);
        pv2_out_done(out);
        *out = (struct pv2_out){ .data = resp.data, .out_size = out_size, .rtn_size = rtn_size };
        return st;
}

uint32_t pv2_enumerate_counterset(struct pv2_client *c, const char *machine,
                                  uint32_t in_size, struct pv2_out *out)
{
        struct ndr_push p;

        if (!c || !out)
                return ERROR_INVALID_PARAMETER;
        ndr_push_init(&p);
        push_machine(&p, machine);
        ndr_push_u32(&p, in_size);
        return out_call(c, PV2_ENUMERATE_COUNTERSET, &p, in_size, sizeof(GUID), out);
}

uint32_t pv2_query_registration_info(struct pv2_client *c, const char *machine,
                                     const GUID *counterset, uint32_t request_code,
                                     uint32_t request_lcid, uint32_t in_size,
                                     struct pv2_out *out)
{
        struct ndr_push p;

        if (!c || !counterset || !out)
                return ERROR_INVALID_PARAMETER;
        ndr_push_init(&p);
        push_machine(&p, machine);
        ndr_push_guid(&p, counterset);
        ndr_push_u32(&p, request_code);
        ndr_push_u32(&p, request_lcid);
        ndr_push_u32(&p, in_size);
        return out_call(c, PV2_QUERY_COUNTERSET_REGISTRATION_INFO, &p, in_size, 1, out);
}

uint32_t pv2_enumerate_instances(struct pv2_client *c, const char *machine,
                                 const GUID *counterset, uint32_t in_size,
                                 struct pv2_out *out)
{
        struct ndr_push p;

        if (!c || !counterset || !out)
                return ERROR_INVALID_PARAMETER;
        ndr_push_init(&p);
        push_machine(&p, machine);
        ndr_push_guid(&p, counterset);
        ndr_push_u32(&p, in_size);
        return out_call(c, PV2_ENUMERATE_COUNTERSET_INSTANCES, &p, in_size, 1, out);
}

/* QueryCounterInfo and QueryCounterData: a handle and dwInSize in, a buffer out. */
static uint32_t query_call(struct pv2_client *c, uint16_t opnum, const struct pv2_handle *h,
                           uint32_t in_size, struct pv2_out *out)
{
        struct ndr_push p;

        if (!c || !h || !out)
                return ERROR_INVALID_PARAMETER;
        ndr_push_init(&p);
        ndr_push_handle(&p, h->bytes);
        ndr_push_u32(&p, in_size);
        return out_call(c, opnum, &p, in_size, 1, out);
}

uint32_t pv2_query_counter_info(struct pv2_client *c, const struct pv2_handle *h,
                                uint32_t in_size, struct pv2_out *out)
{
        return query_call(c, PV2_QUERY_COUNTER_INFO, h, in_size, out);
}

uint32_t pv2_query_counter_data(struct pv2_client *c, const struct pv2_handle *h,
                                uint32_t in_size, struct pv2_out *out)
{
        return query_call(c, PV2_QUERY_COUNTER_DATA, h, in_size, out);
}

/* ---- the handle methods ---- */

/* Sends stub; the response is a handle and the status. */
static uint32_t handle_call(struct pv2_client *c, uint16_t opnum, struct ndr_push *stub,
                            struct pv2_handle *ret)
{
        struct ndr_push resp;
        uint32_t st = call(c, opnum, stub, NDR_HANDLE_SIZE + 4, &resp);

        ndr_push_done(stub);
        if (st != ERROR_SUCCESS)
                return st;
        struct ndr_pull p;
        struct pv2_handle h;
        ndr_pull_init(&p, resp.data, resp.size);
        ndr_pull_handle(&p, h.bytes);
        st = ndr_pull_u32(&p);
        int err = p.err;
        ndr_push_done(&resp);
        if (err)
                return bad_stub(c);
        *ret = h;
        return st;
}

uint32_t pv2_open_query(struct pv2_client *c, const char *machine, struct pv2_handle *ret)
{
        struct ndr_push p;

        if (!c || !ret)
                return ERROR_INVALID_PARAMETER;
        ndr_push_init(&p);
        push_machine(&p, machine);
        return handle_call(c, PV2_OPEN_QUERY_HANDLE, &p, ret);
}

uint32_t pv2_close_query(struct pv2_client *c, struct pv2_handle *h)
{
        struct ndr_push p;

        if (!c || !h)
                return ERROR_INVALID_PARAMETER;
        ndr_push_init(&p);
        ndr_push_handle(&p, h->bytes);
        return handle_call(c, PV2_CLOSE_QUERY_HANDLE, &p, h);
}

uint32_t pv2_validate_counters(struct pv2_client *c, const struct pv2_handle *h,
                               uint8_t *data, uint32_t in_size, uint32_t add)
{
        struct ndr_push p, resp;

        if (!c || !h || (!data && in_size))
                return ERROR_INVALID_PARAMETER;
        ndr_push_init(&p);
        ndr_push_handle(&p, h->bytes);
        ndr_push_u32(&p, in_size);
        ndr_push_u32(&p, in_size);
        ndr_push_bytes(&p, data, in_size);
        ndr_push_u32(&p, add);
        uint32_t st = call(c, PV2_VALIDATE_COUNTERS, &p, (size_t)in_size + 16, &resp);
        ndr_push_done(&p);
        if (st != ERROR_SUCCESS)
                return st;

        struct ndr_pull q;
        ndr_pull_init(&q, resp.data, resp.size);
        uint32_t max = ndr_pull_u32(&q);
        const uint8_t *bytes = max == in_size ? ndr_pull_bytes(&q, in_size) : NULL;
        st = ndr_pull_u32(&q);
        if (q.err || !bytes) {
                ndr_push_done(&resp);
                return bad_stub(c);
        }
        if (in_size)
                memcpy(data, bytes, in_size);
        ndr_push_done(&resp);
        return st;
}
