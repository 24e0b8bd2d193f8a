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
 * Over TCP the client may authenticate (the bind: pv2-client-bind.c).
 * Then every request is sealed and every response fragment checked and
 * unsealed whole before a byte of it is believed; a fragment that fails
 * breaks the connection as a timeout does.
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
#include <unistd.h>

#include "ndr.h"
#include "pcq-utf.h"
#include "perflibv2.h"
#include "pv2-client.h"

/* Slack over the lpData bytes for the other [out] fields of a response. */
#define PV2_RESPONSE_SLACK 64u

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
        int r = pv2c_bind(c);
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
                r = errno == EINPROGRESS ? pv2c_wait_fd(fd, POLLOUT, deadline) : -errno;
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
        int64_t deadline = timeout_ms > 0 ? pv2c_now_ms() + timeout_ms : -1;
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
                return pv2c_recv_all(c->fd, dst, n, deadline);
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
        int r = pv2c_recv_all(c->fd, c->frag, DCERPC_HDR_SIZE, deadline);

        if (r < 0)
                return r;
        if (dcerpc_parse_hdr(c->frag, &f->h) < 0 || f->h.auth_len != 0)
                return -EPROTO;
        if (f->h.ptype != DCERPC_RESPONSE || f->h.frag_len < DCERPC_CALL_HDR_SIZE)
                return pv2c_recv_all(c->fd, c->frag + DCERPC_HDR_SIZE,
                                f->h.frag_len - DCERPC_HDR_SIZE, deadline);
        f->stub = NULL;
        f->stub_len = f->h.frag_len - DCERPC_CALL_HDR_SIZE;
        return pv2c_recv_all(c->fd, c->frag + DCERPC_HDR_SIZE, DCERPC_CALL_HDR_SIZE - DCERPC_HDR_SIZE,
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
        int r = pv2c_recv_pdu(c, &f->h, deadline);

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
        int64_t deadline = pv2c_deadline(c);
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
        int r = pv2c_send_all(c->fd, pdus, pdus_len, deadline);
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
