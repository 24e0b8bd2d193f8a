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
#include "ndr.h"
#include "pcq-utf.h"
#include "perflibv2.h"

#define PV2_CLIENT_FRAG DCERPC_SERVER_MAX_FRAG
/* Slack over the lpData bytes for the other [out] fields of a response. */
#define PV2_RESPONSE_SLACK 64u

struct pv2_client {
        int fd;
        int timeout_ms;
        uint32_t next_call_id;
        uint16_t max_xmit;              /* largest fragment we may send */
        uint32_t last_fault;
        bool broken;
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

static int bind_iface(struct pv2_client *c)
{
        int64_t deadline = deadline_of(c);
        uint8_t b[72] = { 0 };
        struct dcerpc_hdr h;

        dcerpc_put_hdr(b, DCERPC_BIND, DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG,
                       sizeof(b), c->next_call_id++);
        ndr_put_le16(b + 16, PV2_CLIENT_FRAG);
        ndr_put_le16(b + 18, PV2_CLIENT_FRAG);
        /* assoc_group 0; one context, id 0, one transfer syntax. */
        b[24] = 1;
        b[30] = 1;
        memcpy(b + 32, dcerpc_pv2_syntax, DCERPC_SYNTAX_SIZE);
        memcpy(b + 52, dcerpc_ndr_syntax, DCERPC_SYNTAX_SIZE);
        int r = send_all(c->fd, b, sizeof(b), deadline);
        if (r < 0)
                return r;
        r = recv_pdu(c, &h, deadline);
        if (r < 0)
                return r;
        if (h.ptype != DCERPC_BIND_ACK || h.frag_len < 28)
                return -EPROTO;

        struct ndr_pull p;
        ndr_pull_init(&p, c->frag, h.frag_len);
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
        c->max_xmit = server_recv < DCERPC_MIN_FRAG ? DCERPC_MIN_FRAG :
                      server_recv > PV2_CLIENT_FRAG ? PV2_CLIENT_FRAG : server_recv;
        return 0;
}

static int client_new(int fd, int timeout_ms, struct pv2_client **ret)
{
        struct pv2_client *c = calloc(1, sizeof(*c));

        if (!c) {
                close(fd);
                return -ENOMEM;
        }
        c->fd = fd;
        c->timeout_ms = timeout_ms;
        c->next_call_id = 1;
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
        return client_new(fd, timeout_ms, ret);
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

int pv2_client_connect_tcp(const char *host, const char *port, int timeout_ms,
                           struct pv2_client **ret)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
        struct addrinfo *res = NULL;
        int r = -ECONNREFUSED;

        if (!host || !port || !ret || timeout_ms < 0)
                return -EINVAL;
        if (getaddrinfo(host, port, &hints, &res) != 0)
                return -EHOSTUNREACH;
        int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : -1;
        int fd = -1;
        for (const struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
                fd = connect_one(ai, deadline);
                if (fd < 0)
                        r = fd;
        }
        freeaddrinfo(res);
        if (fd < 0)
                return r;
        return client_new(fd, timeout_ms, ret);
}

void pv2_client_free(struct pv2_client *c)
{
        if (!c)
                return;
        if (c->fd >= 0)
                close(c->fd);
        free(c);
}

uint32_t pv2_client_last_fault(const struct pv2_client *c)
{
        return c ? c->last_fault : 0;
}

/* ---- one call ---- */

/* Receives the rest of a fault (or anything that is not a response) into c->frag. */
static int recv_rest(struct pv2_client *c, const struct dcerpc_hdr *h, int64_t deadline)
{
        return recv_all(c->fd, c->frag + DCERPC_HDR_SIZE, h->frag_len - DCERPC_HDR_SIZE,
                        deadline);
}

/*
 * Receives the stub bytes of one response fragment (its call header is in
 * c->frag): the first ones into head until *head_got reaches head_len, the
 * rest straight into ret, which must not grow past resp_cap.
 */
static int recv_stub(struct pv2_client *c, size_t n, uint8_t *head, size_t head_len,
                     size_t *head_got, size_t resp_cap, struct ndr_push *ret, int64_t deadline)
{
        size_t h = head_len - *head_got < n ? head_len - *head_got : n;
        int r = h ? recv_all(c->fd, head + *head_got, h, deadline) : 0;

        if (r < 0)
                return r;
        *head_got += h;
        n -= h;
        if (n > resp_cap - ret->size)
                return -EPROTO;
        uint8_t *b = n ? ndr_push_room(ret, n) : NULL;
        if (n && !b)
                return ret->err;
        return n ? recv_all(c->fd, b, n, deadline) : 0;
}

/*
 * Sends stub as a request of opnum, reassembles the response stub: its
 * first head_len bytes into head (*ret_head_got says how many came), the
 * rest (at most resp_cap bytes) into *ret (malloc'd, the caller's), each
 * fragment received where it belongs rather than copied there.  Returns 0,
 * the RPC_S_CALL_FAILED of a fault, ERROR_CONNECTION_ABORTED or
 * ERROR_OUTOFMEMORY.
 */
static uint32_t call_split(struct pv2_client *c, uint16_t opnum, const struct ndr_push *stub,
                           uint8_t *head, size_t head_len, size_t *ret_head_got,
                           size_t resp_cap, struct ndr_push *ret)
{
        uint8_t *pdus = NULL;
        size_t pdus_len = 0, head_got = 0;
        int64_t deadline = deadline_of(c);
        uint32_t call_id = c->next_call_id++;

        if (c->broken)
                return PV2_ERROR_CONNECTION_ABORTED;
        if (stub->err)
                return stub->err == -ENOMEM ? ERROR_OUTOFMEMORY : ERROR_INVALID_PARAMETER;
        if (dcerpc_append_call(&pdus, &pdus_len, DCERPC_REQUEST, call_id, 0, opnum,
                               stub->data, stub->size, c->max_xmit) < 0) {
                free(pdus);
                return ERROR_OUTOFMEMORY;
        }
        int r = send_all(c->fd, pdus, pdus_len, deadline);
        free(pdus);
        ndr_push_init(ret);
        for (bool first = true; r == 0;) {
                struct dcerpc_hdr h;
                r = recv_all(c->fd, c->frag, DCERPC_HDR_SIZE, deadline);
                if (r < 0)
                        break;
                if (dcerpc_parse_hdr(c->frag, &h) < 0 || h.call_id != call_id ||
                    h.auth_len != 0 || (first && !(h.flags & DCERPC_PFC_FIRST_FRAG))) {
                        r = -EPROTO;
                        break;
                }
                if (h.ptype != DCERPC_RESPONSE || h.frag_len < DCERPC_CALL_HDR_SIZE) {
                        r = recv_rest(c, &h, deadline);
                        if (r == 0 && h.ptype == DCERPC_FAULT && h.frag_len >= DCERPC_FAULT_SIZE) {
                                c->last_fault = ndr_le32(c->frag + 24);
                                ndr_push_done(ret);
                                return PV2_RPC_S_CALL_FAILED;
                        }
                        r = -EPROTO;
                        break;
                }
                r = recv_all(c->fd, c->frag + DCERPC_HDR_SIZE,
                             DCERPC_CALL_HDR_SIZE - DCERPC_HDR_SIZE, deadline);
                if (r < 0)
                        break;
                if (first) {
                        /* alloc_hint sizes the buffer, within what the call may return. */
                        uint32_t hint = ndr_le32(c->frag + 16);
                        ndr_push_presize(ret, hint < resp_cap ? hint : resp_cap);
                }
                r = recv_stub(c, h.frag_len - DCERPC_CALL_HDR_SIZE, head, head_len, &head_got,
                              resp_cap, ret, deadline);
                if (r < 0)
                        break;
                first = false;
                if (h.flags & DCERPC_PFC_LAST_FRAG) {
                        if (ret_head_got)
                                *ret_head_got = head_got;
                        return 0;
                }
        }
        ndr_push_done(ret);
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
