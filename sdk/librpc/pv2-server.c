/* SPDX-License-Identifier: MIT */
/*
 * One server connection: received bytes are cut into PDUs, binds and
 * alter_contexts are answered, request fragments are reassembled and handed
 * to the stubs, and responses go back in fragments of the negotiated size.
 *
 * Everything here comes from a peer: no length is used before it has been
 * checked, a fragment is at most 64 KiB (frag_length is 16 bits), and a
 * reassembled request is capped at max_request (at most PV2_MAX_REQUEST,
 * the largest the IDL allows) whatever alloc_hint says, which only
 * presizes, and never past 1 MiB or the cap.  Request buffers past a first
 * share are paid from the transport's budget (pv2_budget), shared by all
 * its connections.
 *
 * Protocol violations that leave the connection in an unknown state (bad
 * version or drep, a PDU type a client never sends, fragments out of order,
 * a request before the bind) are answered with a bind_nak or a fault and
 * -EPROTO, so the transport closes the connection.  Errors confined to one
 * call (bad stub data, unknown opnum, unknown context) only fault the call.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>

#include "dcerpc.h"
#include "ndr.h"
#include "pv2-auth.h"
#include "pv2-stubs.h"
#include "rrp.h"

/* alloc_hint presizes at most this much: past it the buffer grows as bytes come. */
#define PV2_MAX_PRESIZE (1u << 20)
/* Presentation contexts one connection may have accepted. */
#define PV2_MAX_CONTEXTS 16u
#define PV2_MAX_SECADDR 255u
/* Faults of the security layer (MS-RPCE 2.2.2.11, 3.3.1.5.2). */
#define PV2_NCA_S_FAULT_ACCESS_DENIED   0x00000005u
#define PV2_NCA_S_FAULT_SEC_PKG_ERROR   0x00000721u

struct pv2_server_conn {
        struct pv2_stubs *stubs;

        uint8_t *in;                    /* received bytes not yet a whole PDU */
        size_t in_len;
        size_t in_cap;

        bool bound;
        uint16_t max_xmit;              /* largest fragment we send */
        uint16_t max_recv;              /* largest fragment we accept */
        uint32_t assoc_group;
        uint16_t ctx_ids[PV2_MAX_CONTEXTS];
        bool ctx_rrp[PV2_MAX_CONTEXTS]; /* the context is MS-RRP's, not PerflibV2's */
        size_t n_ctx;
        struct rrp_stubs *rrp;          /* NULL: MS-RRP is not served here */
        char secaddr[PV2_MAX_SECADDR + 1];
        struct pv2_assoc_auth auth;

        /* The request being reassembled. */
        bool in_call;
        uint32_t call_id;
        uint16_t call_ctx;
        uint16_t call_opnum;
        uint8_t *req;
        size_t req_len;
        size_t req_cap;
        size_t max_request;             /* reassembled stub bytes allowed */
        struct pv2_budget *budget;      /* borrowed; NULL: none */
        size_t charged;                 /* of req_cap + in_cap, taken from budget */
        uint64_t calls;                 /* requests answered */

        /*
         * pv2_server_conn_feed_iov's replies: headers and small stubs in out,
         * lpData lent (held until the next feed), the two as slices and
         * then as iovecs.  Kept from one feed to the next.
         */
        uint8_t *out;
        size_t out_len;
        struct dcerpc_slices sl;
        struct iovec *iov;
        size_t iov_cap;
        uint8_t **held;
        size_t n_held, held_cap;

        /*
         * With defer_seal, the response fragments in out that
         * pv2_server_conn_seal has yet to seal: their offsets, in order,
         * the first next_seal of them sealed already.
         */
        bool defer_seal;
        size_t *to_seal;
        size_t n_seal, seal_cap, next_seal;
};

/* Where a reply goes: a growing buffer, and with lend, slices lent from elsewhere. */
struct pv2_reply {
        uint8_t **out;
        size_t *out_len;
        struct dcerpc_slices *lend;
};

int pv2_server_conn_new(const struct pv2_handlers *handlers, void *conn,
                        struct pv2_server_conn **ret)
{
        if (!handlers || !ret)
                return -EINVAL;
        struct pv2_server_conn *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        int r = pv2_stubs_new(handlers, conn, &c->stubs);
        if (r < 0) {
                free(c);
                return r;
        }
        c->max_xmit = DCERPC_MIN_FRAG;
        c->max_recv = DCERPC_MIN_FRAG;
        c->max_request = PV2_MAX_REQUEST;
        *ret = c;
        return 0;
}

int pv2_server_conn_serve_rrp(struct pv2_server_conn *c, const struct rrp_handlers *h)
{
        if (!c || !h || c->rrp || c->bound)
                return -EINVAL;
        return rrp_stubs_new(h, &c->rrp);
}

int pv2_server_conn_set_max_request(struct pv2_server_conn *c, size_t bytes)
{
        if (!c || bytes < PV2_MIN_REQUEST || bytes > PV2_MAX_REQUEST)
                return -EINVAL;
        c->max_request = bytes;
        return 0;
}

int pv2_server_conn_set_max_queries(struct pv2_server_conn *c, size_t n)
{
        return c ? pv2_stubs_set_max_queries(c->stubs, n) : -EINVAL;
}

int pv2_server_conn_set_auth(struct pv2_server_conn *c, const struct pv2_auth_policy *p)
{
        if (!c || !p || !p->new_sec)
                return -EINVAL;
        if (c->bound)
                return -EBUSY;
        c->auth.policy = p;
        return 0;
}

enum pv2_auth_event pv2_server_conn_auth_event(struct pv2_server_conn *c,
                                               const char **ret_detail)
{
        enum pv2_auth_event e;

        if (!c || !ret_detail)
                return PV2_AUTH_EVENT_NONE;
        e = c->auth.event;
        c->auth.event = PV2_AUTH_EVENT_NONE;
        if (e != PV2_AUTH_EVENT_NONE)
                *ret_detail = c->auth.detail;
        return e;
}

bool pv2_server_conn_bound(const struct pv2_server_conn *c)
{
        return c && c->bound;
}

uint64_t pv2_server_conn_calls(const struct pv2_server_conn *c)
{
        return c ? c->calls : 0;
}

/* ---- the budget for requests being reassembled ---- */

struct pv2_budget {
        size_t limit;
        size_t used;                    /* atomic */
};

int pv2_budget_new(size_t bytes, struct pv2_budget **ret)
{
        struct pv2_budget *b;

        if (!ret)
                return -EINVAL;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        b->limit = bytes;
        *ret = b;
        return 0;
}

void pv2_budget_free(struct pv2_budget *b)
{
        free(b);
}

size_t pv2_budget_used(const struct pv2_budget *b)
{
        return b ? __atomic_load_n(&b->used, __ATOMIC_RELAXED) : 0;
}

static bool budget_take(struct pv2_budget *b, size_t n)
{
        size_t used = __atomic_load_n(&b->used, __ATOMIC_RELAXED);

        do {
                if (n > b->limit - used)
                        return false;
        } while (!__atomic_compare_exchange_n(&b->used, &used, used + n, true,
                                              __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        return true;
}

int pv2_server_conn_set_budget(struct pv2_server_conn *c, struct pv2_budget *b)
{
        if (!c)
                return -EINVAL;
        if (c->req_cap > 0 || c->in_cap > 0)
                return -EBUSY;
        c->budget = b;
        return 0;
}

/*
 * Pays for a request buffer of req_cap bytes and an unparsed tail of in_cap:
 * takes from the budget what they need beyond the free share, or gives back
 * what they no longer do.  0, or -ENOMEM when the budget cannot pay (nothing
 * changed).
 */
static int conn_charge(struct pv2_server_conn *c, size_t req_cap, size_t in_cap)
{
        size_t cap = req_cap + in_cap;
        size_t want = cap > PV2_BUDGET_FREE_BYTES ? cap - PV2_BUDGET_FREE_BYTES : 0;

        if (!c->budget)
                return 0;
        if (want > c->charged && !budget_take(c->budget, want - c->charged))
                return -ENOMEM;
        if (want < c->charged)
                __atomic_sub_fetch(&c->budget->used, c->charged - want, __ATOMIC_RELAXED);
        c->charged = want;
        return 0;
}

/* Resizes the request buffer to cap bytes (at least req_len), paid for first. */
static int req_resize(struct pv2_server_conn *c, size_t cap)
{
        uint8_t *d;
        size_t old = c->req_cap;

        if (conn_charge(c, cap, c->in_cap) < 0)
                return -ENOMEM;
        if (cap == 0) {
                free(c->req);
                d = NULL;
        } else if (!(d = realloc(c->req, cap))) {
                (void) conn_charge(c, old, c->in_cap);  /* gives back: cannot fail */
                return -ENOMEM;
        }
        c->req = d;
        c->req_cap = cap;
        return 0;
}

/* The lpData lent to the last feed_iov's slices: sent by now. */
static void held_release(struct pv2_server_conn *c)
{
        for (size_t i = 0; i < c->n_held; i++)
                pv2_stubs_release(c->stubs, c->held[i]);
        c->n_held = 0;
}

static int held_reserve(struct pv2_server_conn *c)
{
        uint8_t **v;
        size_t cap;

        if (c->n_held < c->held_cap)
                return 0;
        cap = c->held_cap ? 2 * c->held_cap : 4;
        v = realloc(c->held, cap * sizeof(*v));
        if (!v)
                return -ENOMEM;
        c->held = v;
        c->held_cap = cap;
        return 0;
}

void pv2_server_conn_free(struct pv2_server_conn *c)
{
        if (!c)
                return;
        held_release(c);
        pv2_stubs_free(c->stubs);
        rrp_stubs_free(c->rrp);
        free(c->held);
        free(c->out);
        free(c->to_seal);
        dcerpc_slices_done(&c->sl);
        free(c->iov);
        free(c->in);
        c->in = NULL;
        c->in_cap = 0;
        (void) req_resize(c, 0);        /* gives back all that was charged */
        pv2_auth_done(&c->auth);
        free(c);
}

void pv2_server_conn_trim(struct pv2_server_conn *c)
{
        if (!c)
                return;
        held_release(c);
        free(c->out);
        c->out = NULL;
        c->out_len = 0;
        free(c->to_seal);
        c->to_seal = NULL;
        c->n_seal = c->seal_cap = c->next_seal = 0;
        dcerpc_slices_done(&c->sl);
        free(c->iov);
        c->iov = NULL;
        c->iov_cap = 0;
        if (c->in_len == 0) {
                free(c->in);
                c->in = NULL;
                c->in_cap = 0;
        }
        pv2_auth_trim(&c->auth);
        /* Gives back what the tail was charged, and the request buffer between calls. */
        (void) req_resize(c, c->in_call ? c->req_cap : 0);
}

size_t pv2_server_conn_queries(const struct pv2_server_conn *c)
{
        return c ? pv2_stubs_queries(c->stubs) : 0;
}

int pv2_server_conn_set_secondary_address(struct pv2_server_conn *c, const char *addr)
{
        if (!c || !addr || strlen(addr) > PV2_MAX_SECADDR)
                return -EINVAL;
        strcpy(c->secaddr, addr);
        return 0;
}

/* ---- bind and alter_context ---- */

/* A reply was queued (or failed to be): either way the connection ends. */
static int closing(int r)
{
        return r < 0 ? r : -EPROTO;
}

static void call_reset(struct pv2_server_conn *c)
{
        c->in_call = false;
        c->req_len = 0;
}

static int fault_and_close(struct pv2_server_conn *c, uint32_t call_id, uint32_t status,
                           struct pv2_reply *rp)
{
        call_reset(c);
        return closing(dcerpc_append_fault(rp->out, rp->out_len, call_id, 0, status,
                                           DCERPC_PFC_DID_NOT_EXECUTE));
}

static int append_bind_nak(struct pv2_reply *rp, uint32_t call_id, uint16_t reason)
{
        /* The reason, then p_rt_versions_supported: one version, 5.0. */
        uint8_t *b;
        int r = dcerpc_grow(rp->out, rp->out_len, 24, &b);

        if (r < 0)
                return r;
        memset(b, 0, 24);
        dcerpc_put_hdr(b, DCERPC_BIND_NAK, DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG,
                       24, call_id);
        ndr_put_le16(b + 16, reason);
        b[18] = 1;
        b[19] = 5;
        b[20] = 0;
        return 0;
}

/* The position of context id in ctx_ids, or -1. */
static ssize_t ctx_find(const struct pv2_server_conn *c, uint16_t id)
{
        for (size_t i = 0; i < c->n_ctx; i++)
                if (c->ctx_ids[i] == id)
                        return (ssize_t)i;
        return -1;
}

static bool ctx_known(const struct pv2_server_conn *c, uint16_t id)
{
        return ctx_find(c, id) >= 0;
}

/* The interface an abstract syntax names, when served here: PerflibV2 or (when enabled) MS-RRP. */
static bool syntax_served(const struct pv2_server_conn *c, const uint8_t *abstract, bool *ret_rrp)
{
        /* Same major version; a client asking for a newer minor is refused. */
        if (ndr_le16(abstract + 18) != 0)
                return false;
        if (memcmp(abstract, dcerpc_pv2_syntax, 18) == 0) {
                *ret_rrp = false;
                return true;
        }
        if (c->rrp && memcmp(abstract, rrp_syntax, 18) == 0) {
                *ret_rrp = true;
                return true;
        }
        return false;
}

/*
 * Decides one p_cont_elem_t: writes its 24-byte p_result_t to res.  The
 * element is at *p (the reader moves past it).
 */
static void bind_one_context(struct pv2_server_conn *c, struct ndr_pull *p, uint8_t res[24])
{
        uint16_t id = ndr_pull_u16(p);
        uint8_t n_ts = ndr_pull_u8(p);
        (void)ndr_pull_u8(p);
        const uint8_t *abstract = ndr_pull_bytes(p, DCERPC_SYNTAX_SIZE);
        const uint8_t *ts = ndr_pull_bytes(p, (size_t)n_ts * DCERPC_SYNTAX_SIZE);
        uint16_t result = DCERPC_RESULT_PROVIDER_REJECTION;
        uint16_t reason = DCERPC_REASON_ABSTRACT_SYNTAX;
        const uint8_t *accepted = NULL;
        bool rrp = false;

        memset(res, 0, 24);
        if (p->err)
                return;
        for (uint8_t i = 0; i < n_ts; i++) {
                const uint8_t *t = ts + (size_t)i * DCERPC_SYNTAX_SIZE;
                if (memcmp(t, dcerpc_btfn_prefix, sizeof(dcerpc_btfn_prefix)) == 0) {
                        /* No optional features: acknowledge with none. */
                        ndr_put_le16(res, DCERPC_RESULT_NEGOTIATE_ACK);
                        return;
                }
        }
        if (syntax_served(c, abstract, &rrp)) {
                reason = DCERPC_REASON_TRANSFER_SYNTAXES;
                for (uint8_t i = 0; i < n_ts && !accepted; i++)
                        if (memcmp(ts + (size_t)i * DCERPC_SYNTAX_SIZE, dcerpc_ndr_syntax,
                                   DCERPC_SYNTAX_SIZE) == 0)
                                accepted = dcerpc_ndr_syntax;
        }
        if (accepted && !ctx_known(c, id) && c->n_ctx >= PV2_MAX_CONTEXTS) {
                accepted = NULL;
                reason = DCERPC_REASON_LOCAL_LIMIT;
        }
        /* A context id keeps the interface it was first bound to. */
        if (accepted && ctx_known(c, id) && c->ctx_rrp[ctx_find(c, id)] != rrp) {
                accepted = NULL;
                reason = DCERPC_REASON_ABSTRACT_SYNTAX;
        }
        if (accepted) {
                if (!ctx_known(c, id)) {
                        c->ctx_rrp[c->n_ctx] = rrp;
                        c->ctx_ids[c->n_ctx++] = id;
                }
                result = DCERPC_RESULT_ACCEPTANCE;
                reason = 0;
                memcpy(res + 4, accepted, DCERPC_SYNTAX_SIZE);
        }
        ndr_put_le16(res, result);
        ndr_put_le16(res + 2, reason);
}

static uint32_t new_assoc_group(void)
{
        uint32_t g = 0;

        while (g == 0)
                if (getrandom(&g, sizeof(g), 0) != sizeof(g))
                        g = 0x5043510a;         /* "PCQ\n": no entropy, any nonzero id */
        return g;
}

/* What a bind_ack carries of the security layer: flags, and our token. */
struct ack_auth {
        uint8_t flags;
        uint8_t *tok;                   /* owned */
        size_t tok_len;
        bool trailer;                   /* a verifier, even with no token */
};

/* Appends the bind_ack or alter_context_resp (C706 12.6.4.4, 12.6.4.2). */
static int append_bind_ack(struct pv2_server_conn *c, const struct dcerpc_hdr *h,
                           uint8_t n, const uint8_t results[][24], const struct ack_auth *aa,
                           struct pv2_reply *rp)
{
        size_t start = *rp->out_len;
        bool alter = h->ptype == DCERPC_ALTER_CONTEXT;
        struct ndr_push o;

        ndr_push_init(&o);
        (void)ndr_push_reserve(&o, DCERPC_HDR_SIZE);
        ndr_push_u16(&o, c->max_xmit);
        ndr_push_u16(&o, c->max_recv);
        ndr_push_u32(&o, c->assoc_group);
        if (alter) {
                /* As Windows does: no secondary address in an alter_context_resp. */
                ndr_push_u16(&o, 0);
        } else {
                /* port_any_t: length including the NUL, then the string. */
                size_t len = strlen(c->secaddr) + 1;
                ndr_push_u16(&o, (uint16_t)len);
                ndr_push_bytes(&o, c->secaddr, len);
        }
        ndr_push_align(&o, 4);
        ndr_push_u8(&o, n);
        ndr_push_u8(&o, 0);
        ndr_push_u16(&o, 0);
        for (uint8_t i = 0; i < n; i++)
                ndr_push_bytes(&o, results[i], 24);

        uint8_t *b;
        int r = o.err ? o.err : o.size > UINT16_MAX ? -E2BIG : 0;
        if (r == 0) {
                dcerpc_put_hdr(o.data, alter ? DCERPC_ALTER_CONTEXT_RESP : DCERPC_BIND_ACK,
                               DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG | aa->flags,
                               (uint16_t)o.size, h->call_id);
                r = dcerpc_grow(rp->out, rp->out_len, o.size, &b);
        }
        if (r == 0)
                memcpy(b, o.data, o.size);
        ndr_push_done(&o);
        if (r == 0 && aa->trailer)
                r = dcerpc_auth_append_trailer(rp->out, rp->out_len, start,
                                               c->auth.auth.auth_type, c->auth.auth.auth_level,
                                               c->auth.auth.context_id, aa->tok, aa->tok_len);
        if (r < 0)
                *rp->out_len = start;
        return r;
}

static uint16_t clamp_frag(uint16_t v)
{
        /* Below C706's minimum is a broken peer: it gets the minimum. */
        return v < DCERPC_MIN_FRAG ? DCERPC_MIN_FRAG :
               v > DCERPC_SERVER_MAX_FRAG ? DCERPC_SERVER_MAX_FRAG : v;
}

/*
 * The security layer's part of a bind or alter_context: the first leg of
 * the bind, or a later one in an alter_context.  0 and *aa to put in the
 * answer; otherwise the connection ends with the answer queued.
 */
static int bind_auth(struct pv2_server_conn *c, const struct dcerpc_hdr *h, const uint8_t *pdu,
                     struct ack_auth *aa, struct pv2_reply *rp)
{
        bool alter = h->ptype == DCERPC_ALTER_CONTEXT;
        uint16_t nak = DCERPC_NAK_NOT_SPECIFIED;
        int r;

        if (!pv2_auth_on(&c->auth))
                /* No authentication on this transport: refuse it rather than ignore it. */
                return h->auth_len == 0 ? 0 :
                       closing(alter ? dcerpc_append_fault(rp->out, rp->out_len, h->call_id, 0,
                                                           PV2_NCA_S_PROTO_ERROR,
                                                           DCERPC_PFC_DID_NOT_EXECUTE)
                                     : append_bind_nak(rp, h->call_id, DCERPC_NAK_AUTH_TYPE));
        if (!alter) {
                r = pv2_auth_bind(&c->auth, pdu, h->frag_len, &aa->tok, &aa->tok_len,
                                  &aa->flags, &nak);
                aa->trailer = aa->tok_len > 0;
                return r == -EACCES ? closing(append_bind_nak(rp, h->call_id, nak)) : r;
        }
        if (h->auth_len == 0)
                /* A new presentation context of an established association. */
                return c->auth.state == PV2_AUTH_DONE ? 0 :
                       fault_and_close(c, h->call_id, PV2_NCA_S_FAULT_ACCESS_DENIED, rp);
        r = pv2_auth_leg(&c->auth, pdu, h->frag_len, &aa->tok, &aa->tok_len);
        if (r < 0)
                return fault_and_close(c, h->call_id, r == -EACCES ?
                                       PV2_NCA_S_FAULT_ACCESS_DENIED : PV2_NCA_S_PROTO_ERROR, rp);
        /* Even with nothing to say (NTLM), the answer carries a trailer, as Windows'. */
        aa->trailer = true;
        return 0;
}

/* Answers a bind or alter_context, the PDU at pdu, whose body (after the header) is body. */
static int handle_bind(struct pv2_server_conn *c, const struct dcerpc_hdr *h,
                       const uint8_t *pdu, size_t body_len, struct pv2_reply *rp)
{
        bool alter = h->ptype == DCERPC_ALTER_CONTEXT;
        uint8_t both = DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG;
        const uint8_t *body = pdu + DCERPC_HDR_SIZE;
        uint8_t results[255][24];
        struct ack_auth aa = { 0 };
        struct ndr_pull p;
        int r;

        if (alter != c->bound || (h->flags & both) != both)
                goto proto;
        r = bind_auth(c, h, pdu, &aa, rp);
        if (r < 0)
                return r;

        ndr_pull_init(&p, body, body_len);
        uint16_t client_xmit = ndr_pull_u16(&p);
        uint16_t client_recv = ndr_pull_u16(&p);
        uint32_t group = ndr_pull_u32(&p);
        uint8_t n = ndr_pull_u8(&p);
        (void)ndr_pull_u8(&p);
        (void)ndr_pull_u16(&p);
        for (uint8_t i = 0; i < n && !p.err; i++) {
                ndr_pull_align(&p, 4);
                bind_one_context(c, &p, results[i]);
        }
        if (p.err) {
                free(aa.tok);
                goto proto;
        }
        if (!alter) {
                c->max_recv = clamp_frag(client_xmit);
                c->max_xmit = clamp_frag(client_recv);
                c->assoc_group = group ? group : new_assoc_group();
                c->bound = true;
        }
        r = append_bind_ack(c, h, n, (const uint8_t (*)[24])results, &aa, rp);
        free(aa.tok);
        return r;

proto:
        if (!c->bound)
                return closing(append_bind_nak(rp, h->call_id, DCERPC_NAK_NOT_SPECIFIED));
        return closing(dcerpc_append_fault(rp->out, rp->out_len, h->call_id, 0,
                                           PV2_NCA_S_PROTO_ERROR, DCERPC_PFC_DID_NOT_EXECUTE));
}

/* ---- requests ---- */

/*
 * A response of an authenticated association: sealed fragment by
 * fragment, so the pieces are joined first (sealing copies anyway).
 */
/* dcerpc_auth_append_framed's callback: one more fragment to seal. */
static int note_to_seal(void *userdata, size_t frag_off)
{
        struct pv2_server_conn *c = userdata;

        if (c->n_seal == c->seal_cap) {
                size_t cap = c->seal_cap ? 2 * c->seal_cap : 16;
                size_t *v = realloc(c->to_seal, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                c->to_seal = v;
                c->seal_cap = cap;
        }
        c->to_seal[c->n_seal++] = frag_off;
        return 0;
}

static int append_sealed(struct pv2_server_conn *c, const struct dcerpc_piece *pieces, size_t n,
                         struct pv2_reply *rp)
{
        size_t len = 0, at = 0;
        uint8_t *stub;
        int r;

        for (size_t i = 0; i < n; i++)
                len += pieces[i].len;
        stub = malloc(len ? len : 1);
        if (!stub)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (pieces[i].len)
                        memcpy(stub + at, pieces[i].data, pieces[i].len);
                at += pieces[i].len;
        }
        if (c->defer_seal && rp->out == &c->out) {
                struct dcerpc_call_id id = { DCERPC_RESPONSE, c->call_ctx, 0, c->call_id };

                r = dcerpc_auth_append_framed(&c->auth.auth, rp->out, rp->out_len, &id, stub,
                                              len, c->max_xmit, note_to_seal, c);
        } else
                r = dcerpc_auth_append_call(&c->auth.auth, rp->out, rp->out_len,
                                            DCERPC_RESPONSE, c->call_id, c->call_ctx, 0, stub,
                                            len, c->max_xmit);
        free(stub);
        return r;
}

/* Runs the reassembled call and appends its response or fault. */
static int dispatch(struct pv2_server_conn *c, struct pv2_reply *rp)
{
        struct pv2_lpdata lp = { 0 };
        struct ndr_push o;
        uint32_t fault = 0;
        int r;

        ndr_push_init(&o);
        ssize_t k = ctx_find(c, c->call_ctx);
        if (k < 0)
                fault = PV2_NCA_S_UNK_IF;
        else if (c->ctx_rrp[k]) {
                if (rrp_stubs_call(c->rrp, c->call_opnum, c->req, c->req_len, &o, &fault) < 0)
                        fault = PV2_NCA_S_FAULT_REMOTE_NO_MEMORY;
        } else if (pv2_stubs_call(c->stubs, c->call_opnum, c->req, c->req_len, &o, &lp,
                                &fault) < 0)
                fault = PV2_NCA_S_FAULT_REMOTE_NO_MEMORY;
        if (fault)
                r = dcerpc_append_fault(rp->out, rp->out_len, c->call_id, c->call_ctx, fault,
                                        fault == PV2_NCA_S_UNK_IF ||
                                        fault == PV2_NCA_S_OP_RNG_ERROR ?
                                        DCERPC_PFC_DID_NOT_EXECUTE : 0);
        else {
                /* The stub up to lpData, lpData, the rest: one copy of lpData. */
                struct dcerpc_piece pieces[3] = {
                        { o.data, lp.data ? lp.at : o.size },
                        { lp.data, lp.len },
                        { o.data + (lp.data ? lp.at : o.size), lp.data ? o.size - lp.at : 0 },
                };
                /* Lent lpData is released after the send; make room to hold it first. */
                struct dcerpc_slices *lend = lp.data && rp->lend && !pv2_auth_on(&c->auth) &&
                                             held_reserve(c) == 0 ? rp->lend : NULL;

                if (pv2_auth_on(&c->auth))
                        r = append_sealed(c, pieces, 3, rp);
                else
                        r = dcerpc_append_call_pieces(rp->out, rp->out_len, DCERPC_RESPONSE,
                                                      c->call_id, c->call_ctx, 0, pieces, 3,
                                                      c->max_xmit, lend);
                if (r == 0 && lend) {
                        c->held[c->n_held++] = lp.data;
                        lp.data = NULL;
                }
        }
        pv2_stubs_release(c->stubs, lp.data);
        ndr_push_done(&o);
        call_reset(c);
        c->calls++;
        /* Do not keep (nor keep paying for) a 64 MiB buffer for the next small call. */
        if (c->req_cap > PV2_BUDGET_FREE_BYTES)
                (void) req_resize(c, 0);
        return r;
}

static int req_append(struct pv2_server_conn *c, const uint8_t *b, size_t n)
{
        if (c->req_len + n > c->req_cap) {
                size_t cap = c->req_cap ? c->req_cap : 4096;
                while (cap < c->req_len + n)
                        cap *= 2;
                /* The caller keeps req_len + n within the cap: never double past it. */
                if (cap > c->max_request)
                        cap = c->req_len + n > c->max_request ? c->req_len + n : c->max_request;
                if (req_resize(c, cap) < 0)
                        return -ENOMEM;
        }
        if (n)
                memcpy(c->req + c->req_len, b, n);
        c->req_len += n;
        return 0;
}

/* A request fragment's stub, at pdu + off: reassembled, and dispatched when whole. */
static int request_stub(struct pv2_server_conn *c, const struct dcerpc_hdr *h,
                        const uint8_t *pdu, size_t off, size_t n, struct pv2_reply *rp)
{

        uint32_t alloc_hint = ndr_le32(pdu + 16);
        uint16_t ctx = ndr_le16(pdu + 20);
        uint16_t opnum = ndr_le16(pdu + 22);
        bool first = h->flags & DCERPC_PFC_FIRST_FRAG;

        /* One call at a time: fragments of another call, or a missing first one, are fatal. */
        if (first == c->in_call || (c->in_call && h->call_id != c->call_id))
                return fault_and_close(c, h->call_id, PV2_NCA_S_PROTO_ERROR, rp);
        if (first) {
                c->in_call = true;
                c->call_id = h->call_id;
                c->call_ctx = ctx;
                c->call_opnum = opnum;
                c->req_len = 0;
                /* alloc_hint is only a hint: it presizes, within reason (and the budget). */
                if (alloc_hint > c->req_cap && alloc_hint <= PV2_MAX_PRESIZE &&
                    alloc_hint <= c->max_request)
                        (void) req_resize(c, alloc_hint);
        }
        if (n > c->max_request - c->req_len)
                return fault_and_close(c, h->call_id, PV2_NCA_S_PROTO_ERROR, rp);
        if (req_append(c, pdu + off, n) < 0) {
                call_reset(c);
                return closing(dcerpc_append_fault(rp->out, rp->out_len, h->call_id, ctx,
                                           PV2_NCA_S_FAULT_REMOTE_NO_MEMORY,
                                           DCERPC_PFC_DID_NOT_EXECUTE));
        }
        if (h->flags & DCERPC_PFC_LAST_FRAG)
                return dispatch(c, rp);
        return 0;
}

/* A request fragment of an association without authentication: its stub. */
static int plain_request(struct pv2_server_conn *c, const struct dcerpc_hdr *h,
                         const uint8_t *pdu, struct pv2_reply *rp)
{
        size_t hdr = DCERPC_CALL_HDR_SIZE;

        if (!c->bound || h->auth_len > 0)
                return fault_and_close(c, h->call_id, PV2_NCA_S_PROTO_ERROR, rp);
        if (h->flags & DCERPC_PFC_OBJECT_UUID)
                hdr += 16;
        /* Longer fragments than max_recv are tolerated: 64 KiB bounds them anyway. */
        if (h->frag_len < hdr)
                return fault_and_close(c, h->call_id, PV2_NCA_S_PROTO_ERROR, rp);
        return request_stub(c, h, pdu, hdr, h->frag_len - hdr, rp);
}

/*
 * A request fragment of an authenticated association: checked and
 * unsealed first.  Nothing is served before the context is established,
 * and a fragment that fails its check ends the connection.
 */
static int sealed_request(struct pv2_server_conn *c, const struct dcerpc_hdr *h,
                          const uint8_t *pdu, struct pv2_reply *rp)
{
        const uint8_t *clear;
        size_t off, len;
        int r = pv2_auth_open(&c->auth, pdu, h->frag_len, &clear, &off, &len);

        if (r == -ENOMEM)
                return fault_and_close(c, h->call_id, PV2_NCA_S_FAULT_REMOTE_NO_MEMORY, rp);
        if (r < 0)
                return fault_and_close(c, h->call_id, r == -EPERM ?
                                       PV2_NCA_S_FAULT_ACCESS_DENIED :
                                       PV2_NCA_S_FAULT_SEC_PKG_ERROR, rp);
        return request_stub(c, h, clear, off, len, rp);
}

/* ---- the PDU loop ---- */

/*
 * The last leg of the bind, which nothing answers: refused credentials
 * show as an access-denied fault on the first request.
 */
static int handle_auth3(struct pv2_server_conn *c, const struct dcerpc_hdr *h,
                        const uint8_t *pdu, struct pv2_reply *rp)
{
        uint8_t *tok = NULL;
        size_t tok_len = 0;
        int r;

        if (!pv2_auth_on(&c->auth) || !c->bound)
                return fault_and_close(c, h->call_id, PV2_NCA_S_PROTO_ERROR, rp);
        r = pv2_auth_leg(&c->auth, pdu, h->frag_len, &tok, &tok_len);
        free(tok);
        if (r == -EACCES || r == DCERPC_SEC_DONE)
                return 0;
        /* Out of turn, or a mechanism that wanted another leg: no answer fits. */
        return fault_and_close(c, h->call_id, r == -ENOMEM ? PV2_NCA_S_FAULT_REMOTE_NO_MEMORY :
                               PV2_NCA_S_PROTO_ERROR, rp);
}

static int handle_pdu(struct pv2_server_conn *c, const struct dcerpc_hdr *h,
                      const uint8_t *pdu, struct pv2_reply *rp)
{
        size_t body = h->frag_len - DCERPC_HDR_SIZE - h->auth_len;

        switch (h->ptype) {
        case DCERPC_BIND:
        case DCERPC_ALTER_CONTEXT:
                return handle_bind(c, h, pdu, body, rp);
        case DCERPC_REQUEST:
                if (pv2_auth_on(&c->auth))
                        return c->bound ? sealed_request(c, h, pdu, rp) :
                               fault_and_close(c, h->call_id, PV2_NCA_S_PROTO_ERROR, rp);
                return plain_request(c, h, pdu, rp);
        case DCERPC_CO_CANCEL:
                /* Calls run to completion as soon as they are whole: nothing to cancel. */
                return 0;
        case DCERPC_ORPHANED:
                /* The client gave up the call it was sending: forget its fragments. */
                if (c->in_call && h->call_id == c->call_id)
                        call_reset(c);
                return 0;
        case DCERPC_AUTH3:
                return handle_auth3(c, h, pdu, rp);
        default:
                /* Server-to-client types, shutdown included, and unknown ones. */
                return fault_and_close(c, h->call_id, PV2_NCA_S_PROTO_ERROR, rp);
        }
}

/*
 * Keeps an unparsed tail: never more than one partial PDU, so at most 64 KiB
 * (frag_len is 16 bits), paid for with the request buffer.
 */
static int in_append(struct pv2_server_conn *c, const uint8_t *b, size_t n)
{
        if (n > UINT16_MAX - c->in_len)
                return -EPROTO;
        if (c->in_len + n > c->in_cap) {
                size_t cap = c->in_len + n < 4096 ? 4096 : UINT16_MAX;
                uint8_t *d;

                if (conn_charge(c, c->req_cap, cap) < 0)
                        return -ENOMEM;
                d = realloc(c->in, cap);
                if (!d) {
                        (void) conn_charge(c, c->req_cap, c->in_cap);
                        return -ENOMEM;
                }
                c->in = d;
                c->in_cap = cap;
        }
        if (n)
                memcpy(c->in + c->in_len, b, n);
        c->in_len += n;
        return 0;
}

/*
 * The answer to a PDU whose common header is wrong: a bind (or anything
 * before the bind) gets a bind_nak, protocol_version_not_supported for a
 * version other than 5.0; anything else a fault.  Either way the stream
 * cannot be trusted any further.
 */
static int bad_header(struct pv2_server_conn *c, const uint8_t *b, int err,
                      struct pv2_reply *rp)
{
        uint32_t call_id = ndr_le32(b + 12);
        uint16_t reason = err == -EPROTONOSUPPORT ? DCERPC_NAK_PROTOCOL_VERSION
                                                  : DCERPC_NAK_NOT_SPECIFIED;

        if (!c->bound || b[2] == DCERPC_BIND)
                return closing(append_bind_nak(rp, call_id, reason));
        return fault_and_close(c, call_id, PV2_NCA_S_PROTO_ERROR, rp);
}

/* Handles the whole PDUs at the start of b; *ret_used: the bytes they took. */
static int pdus(struct pv2_server_conn *c, const uint8_t *b, size_t len, size_t *ret_used,
                struct pv2_reply *rp)
{
        size_t off = 0;
        int r = 0;

        while (len - off >= DCERPC_HDR_SIZE) {
                struct dcerpc_hdr h;

                r = dcerpc_parse_hdr(b + off, &h);
                if (r < 0)
                        return bad_header(c, b + off, r, rp);
                if (len - off < h.frag_len)
                        break;
                r = handle_pdu(c, &h, b + off, rp);
                off += h.frag_len;
                if (r < 0)
                        break;
        }
        *ret_used = off;
        return r;
}

/* An empty tail keeps at most a small buffer: large ones are paid for. */
static void in_shrink(struct pv2_server_conn *c)
{
        if (c->in_len || c->in_cap <= 4096)
                return;
        free(c->in);
        c->in = NULL;
        c->in_cap = 0;
        (void) conn_charge(c, c->req_cap, 0);   /* gives back: cannot fail */
}

/*
 * Completes the partial PDU kept from the last feed with the start of
 * *data, and handles it once whole.  Copies only what that PDU lacks.
 */
static int complete_tail(struct pv2_server_conn *c, const uint8_t **data, size_t *size,
                         struct pv2_reply *rp)
{
        for (;;) {
                size_t need = DCERPC_HDR_SIZE, used, take;
                struct dcerpc_hdr h;
                int r;

                if (c->in_len >= DCERPC_HDR_SIZE) {
                        r = dcerpc_parse_hdr(c->in, &h);
                        if (r < 0)
                                return bad_header(c, c->in, r, rp);
                        need = h.frag_len;
                        if (c->in_len == need) {
                                r = pdus(c, c->in, c->in_len, &used, rp);
                                c->in_len = 0;
                                in_shrink(c);
                                return r;
                        }
                }
                if (*size == 0)
                        return 0;
                take = need - c->in_len < *size ? need - c->in_len : *size;
                r = in_append(c, *data, take);
                if (r < 0)
                        return r;
                *data += take;
                *size -= take;
        }
}

/*
 * Whole PDUs are handled where they lie in data; only a partial one is
 * copied, to be completed by the next feed.
 */
static int feed(struct pv2_server_conn *c, const void *data, size_t size, struct pv2_reply *rp)
{
        const uint8_t *d = data;
        size_t used = 0;
        int r = 0;

        if (c->in_len) {
                r = complete_tail(c, &d, &size, rp);
                if (r < 0 || c->in_len)
                        goto out;
        }
        r = pdus(c, d, size, &used, rp);
        if (r == 0)
                r = in_append(c, d + used, size - used);
out:
        if (r < 0) {
                /* The connection is done: drop what is left. */
                c->in_len = 0;
                return r == -EPROTO || r == -ENOMEM ? r : -EPROTO;
        }
        return 0;
}

int pv2_server_conn_feed(struct pv2_server_conn *c, const void *data, size_t size,
                         uint8_t **out, size_t *out_len)
{
        struct pv2_reply rp = { out, out_len, NULL };

        if (!c || (!data && size) || !out || !out_len)
                return -EINVAL;
        return feed(c, data, size, &rp);
}

/* The slices as iovecs, the stretches of out by address now that it stopped moving. */
static int slices_iov(struct pv2_server_conn *c, size_t *ret_n)
{
        struct dcerpc_slices *sl = &c->sl;

        if (dcerpc_slices_close(sl, c->out_len) < 0)
                return -ENOMEM;
        if (sl->n > c->iov_cap) {
                struct iovec *v = realloc(c->iov, sl->n * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                c->iov = v;
                c->iov_cap = sl->n;
        }
        for (size_t i = 0; i < sl->n; i++)
                c->iov[i] = (struct iovec){
                        .iov_base = (void *) (sl->v[i].lent ? sl->v[i].lent : c->out + sl->v[i].off),
                        .iov_len = sl->v[i].len,
                };
        *ret_n = sl->n;
        return 0;
}

int pv2_server_conn_feed_iov(struct pv2_server_conn *c, const void *data, size_t size,
                             struct iovec **ret_iov, size_t *ret_n)
{
        struct pv2_reply rp;
        size_t n = 0;
        int r, k;

        if (!c || (!data && size) || !ret_iov || !ret_n)
                return -EINVAL;
        held_release(c);
        c->out_len = 0;
        c->n_seal = c->next_seal = 0;
        dcerpc_slices_reset(&c->sl);
        rp = (struct pv2_reply){ &c->out, &c->out_len, &c->sl };
        r = feed(c, data, size, &rp);
        /* Even a connection being closed sends what was queued (a fault, a bind_nak). */
        k = slices_iov(c, &n);
        if (k < 0) {
                n = 0;
                r = k;
        }
        *ret_iov = c->iov;
        *ret_n = n;
        return r;
}

void pv2_server_conn_defer_seal(struct pv2_server_conn *c)
{
        if (c)
                c->defer_seal = true;
}

/* The bytes of the last feed's iovecs that come before out[off]. */
static size_t iov_bytes_before(const struct pv2_server_conn *c, size_t off)
{
        size_t n = 0;

        for (size_t i = 0; i < c->sl.n; i++) {
                const struct dcerpc_slice *v = &c->sl.v[i];

                if (!v->lent && v->off + v->len > off)
                        return n + (off > v->off ? off - v->off : 0);
                n += v->len;
        }
        return n;
}

int pv2_server_conn_seal(struct pv2_server_conn *c, size_t min_bytes, size_t *ret_ready)
{
        size_t done = 0;

        if (!c || !ret_ready)
                return -EINVAL;
        while (c->next_seal < c->n_seal && (done < min_bytes || done == 0)) {
                size_t off = c->to_seal[c->next_seal];
                size_t len = (size_t)c->out[off + 8] | (size_t)c->out[off + 9] << 8;
                int r = dcerpc_auth_seal(&c->auth.auth, c->out + off, len);

                if (r < 0)
                        return r;
                done += len;
                c->next_seal++;
        }
        *ret_ready = c->next_seal < c->n_seal ? iov_bytes_before(c, c->to_seal[c->next_seal])
                                              : SIZE_MAX;
        return 0;
}
