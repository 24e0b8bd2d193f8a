/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness of the server side of the wire: whatever the bytes, feeding
 * them to pv2_server_conn_feed must not crash, leak or read out of bounds,
 * and freeing the connection must release every query it opened.
 *
 * Each input also goes, interleaved, to a twin connection that receives it
 * a byte at a time (a slow writer, partial binds and fragments), sharing a
 * request budget big enough for both: the state machine must reach the
 * same state whatever the chunking (bound, calls answered, bytes sent,
 * queries open, dead or not).  A third connection gets it under a budget
 * too small for anything beyond the free share and a low request cap, the
 * paths a hostile client takes to make the server hold memory: every byte
 * it took must be back in the budget when it is freed.
 *
 * The same bytes, read as back-to-back fragments, go through the auth
 * verifier's parser and dcerpc_auth_verify with a mechanism that touches
 * every byte it is given: the views must stay inside their fragment.  And
 * they go to a connection that requires authentication, as TCP does (NTLM
 * and SPNEGO acceptors, every account's password known): binds with
 * verifiers, the NTLM and SPNEGO tokens in them, auth3, alter_context and
 * requests before the logon, all refused without a crash or a leak.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dcerpc-auth.h"
#include "dcerpc-ntlm.h"
#include "spnego-sec.h"
#include "spnego.h"
#include "fuzz-rpc.h"
#include "perflibv2.h"
#include "pv2-fake.h"

/* ---- input builders ---- */

struct fz_buf {
        uint8_t *b;
        size_t n;
};

static void fz_put(struct fz_buf *f, const void *b, size_t n)
{
        uint8_t *d = realloc(f->b, f->n + n + 1);

        if (!d)
                abort();
        f->b = d;
        if (n)
                memcpy(f->b + f->n, b, n);
        f->n += n;
}

static void fz_put32(struct fz_buf *f, uint32_t v)
{
        static const uint8_t zero[4];
        uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

        fz_put(f, zero, (4 - (f->n & 3)) & 3);
        fz_put(f, b, 4);
}

#define FZ_PV2 0xc5, 0x86, 0x5a, 0xda, 0xc2, 0x12, 0x43, 0x49, \
               0xab, 0x30, 0x7f, 0x74, 0xa8, 0x13, 0xd8, 0x53, 1, 0, 0, 0
#define FZ_NDR 0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11, \
               0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60, 2, 0, 0, 0
#define FZ_BTFN 0x2c, 0x1c, 0xb7, 0x6c, 0x12, 0x98, 0x40, 0x45, \
                0x03, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0

static const uint8_t fz_bind[] = {
        5, 0, 11, 3, 0x10, 0, 0, 0, 72, 0, 0, 0, 1, 0, 0, 0,
        0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 1, 0, 0, 0,
        0, 0, 1, 0, FZ_PV2, FZ_NDR,
};

static const uint8_t fz_bind_many[] = {
        5, 0, 11, 3, 0x10, 0, 0, 0, 136, 0, 0, 0, 1, 0, 0, 0,
        0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 2, 0, 0, 0,
        0, 0, 2, 0, FZ_PV2, FZ_BTFN, FZ_NDR,
        1, 0, 1, 0, FZ_PV2, FZ_BTFN,
};

static const uint8_t fz_alter[] = {
        5, 0, 14, 3, 0x10, 0, 0, 0, 72, 0, 0, 0, 2, 0, 0, 0,
        0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 1, 0, 0, 0,
        2, 0, 1, 0, FZ_PV2, FZ_NDR,
};

_Static_assert(sizeof(fz_bind) == 72, "frag_length of fz_bind");
_Static_assert(sizeof(fz_bind_many) == 136, "frag_length of fz_bind_many");
_Static_assert(sizeof(fz_alter) == 72, "frag_length of fz_alter");

static void fz_request(struct fz_buf *f, uint32_t call_id, uint16_t ctx, uint16_t opnum,
                       uint8_t flags, const struct fz_buf *stub)
{
        size_t len = 24 + stub->n;
        uint8_t h[24] = {
                5, 0, 0, flags, 0x10, 0, 0, 0, (uint8_t)len, (uint8_t)(len >> 8), 0, 0,
                (uint8_t)call_id, 0, 0, 0, (uint8_t)stub->n, (uint8_t)(stub->n >> 8), 0, 0,
                (uint8_t)ctx, 0, (uint8_t)opnum, 0,
        };
        fz_put(f, h, sizeof(h));
        fz_put(f, stub->b, stub->n);
}

/* One stub per opnum, as a well-behaved client sends them (handles null). */
static void fz_stub(struct fz_buf *t, uint16_t opnum)
{
        static const uint8_t machine[] = {
                3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 'p', 0, 'c', 0, 0, 0,
        };
        static const uint8_t guid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
        static const uint8_t handle[20];

        t->n = 0;
        if (opnum <= 3) {
                fz_put(t, machine, sizeof(machine));
                if (opnum == 1 || opnum == 2) {
                        fz_put32(t, 0);
                        t->n -= 4;
                        fz_put(t, guid, sizeof(guid));
                }
                if (opnum == 1) {
                        fz_put32(t, 1);
                        fz_put32(t, 0x409);
                }
                if (opnum != 3)
                        fz_put32(t, 64);
                return;
        }
        fz_put(t, handle, sizeof(handle));
        if (opnum == 4)
                return;
        fz_put32(t, 16);
        if (opnum == 7) {
                fz_put32(t, 16);
                fz_put(t, guid, 16);
                fz_put32(t, 1);
        }
}

static void fz_all_opnums(struct fz_buf *f, uint16_t ctx)
{
        struct fz_buf t = { 0 };

        for (uint16_t op = 0; op <= 8; op++) {
                fz_stub(&t, op);
                fz_request(f, 2u + op, ctx, op, 3, &t);
        }
        free(t.b);
}

int fz_rpc_seed(unsigned i, uint8_t **ret, size_t *ret_size)
{
        struct fz_buf f = { 0 }, t = { 0 };
        uint8_t ctl = 0;

        switch (i) {
        case 0:                         /* a whole session, in one piece */
                fz_put(&f, &ctl, 1);
                fz_put(&f, fz_bind, sizeof(fz_bind));
                fz_all_opnums(&f, 0);
                break;
        case 1:                         /* the same, the bind supplied by the harness */
                ctl = 1;
                fz_put(&f, &ctl, 1);
                fz_all_opnums(&f, 0);
                break;
        case 2:                         /* contexts, negotiation, alter_context */
                ctl = 2 << 1;
                fz_put(&f, &ctl, 1);
                fz_put(&f, fz_bind_many, sizeof(fz_bind_many));
                fz_put(&f, fz_alter, sizeof(fz_alter));
                fz_all_opnums(&f, 2);
                break;
        case 3: {                       /* fragments, cancel, orphaned */
                static const uint8_t cancel[16] = { 5, 0, 18, 3, 0x10, 0, 0, 0, 16, 0, 0, 0, 9 };
                static const uint8_t orphaned[16] = { 5, 0, 19, 3, 0x10, 0, 0, 0, 16, 0, 0, 0, 9 };
                ctl = 1 | 5 << 1;
                fz_put(&f, &ctl, 1);
                fz_stub(&t, 7);
                struct fz_buf part = { .b = t.b, .n = 16 };
                fz_request(&f, 9, 0, 7, 1, &part);
                fz_put(&f, cancel, sizeof(cancel));
                part = (struct fz_buf){ .b = t.b + 16, .n = t.n - 16 };
                fz_request(&f, 9, 0, 7, 2, &part);
                fz_request(&f, 10, 0, 7, 1, &part);
                fz_put(&f, orphaned, sizeof(orphaned));
                break;
        }
        case 4: {                       /* a bind with an auth verifier */
                uint8_t b[sizeof(fz_bind) + 16] = { 0 };
                memcpy(b, fz_bind, sizeof(fz_bind));
                b[8] = sizeof(b);
                b[10] = 8;
                b[sizeof(fz_bind)] = 10;
                fz_put(&f, &ctl, 1);
                fz_put(&f, b, sizeof(b));
                break;
        }
        case 7:                         /* NTLM's NEGOTIATE in a bind, then a request */
        case 8: {                       /* the same in SPNEGO */
                struct fz_buf b = { 0 };
                uint8_t *tok = NULL;
                size_t tok_len = 0;
                struct dcerpc_sec ntlm, sec;
                static const uint8_t hash[NTLM_HASH_SIZE];

                if (dcerpc_sec_ntlm_client("alice", "PERFLIB", hash, &ntlm) < 0)
                        abort();
                if (i == 7)
                        sec = ntlm;
                else if (dcerpc_sec_spnego_client(SPNEGO_MECH_NTLM, &ntlm, &sec) < 0)
                        abort();
                if (sec.ops->step(sec.ctx, NULL, 0, &tok, &tok_len) < 0)
                        abort();
                fz_put(&b, fz_bind, sizeof(fz_bind));
                b.b[3] |= DCERPC_PFC_SUPPORT_HEADER_SIGN;
                if (dcerpc_auth_append_token(&b.b, &b.n, 0, i == 8 ? DCERPC_AUTH_TYPE_SPNEGO :
                                             DCERPC_AUTH_TYPE_NTLM, DCERPC_AUTH_LEVEL_PRIVACY,
                                             1, tok, tok_len) < 0)
                        abort();
                fz_put(&f, &ctl, 1);
                fz_put(&f, b.b, b.n);
                fz_stub(&t, 0);
                fz_request(&f, 2, 0, 0, 3, &t);
                free(b.b);
                free(tok);
                dcerpc_sec_free(&sec);
                break;
        }
        case 6: {                       /* a request with a verifier: stub, pad, trailer, signature */
                static const uint8_t sec[40] = { 1, 2, 3, 4, 5, 6, 7, 8, 0xee, 0xee, 0xee, 0xee,
                                                 0xee, 0xee, 0xee, 0xee, 10, 6, 8, 0, 1, 0, 0, 0,
                                                 1, 0, 0, 0, 0x5a };
                ctl = 1;
                fz_put(&f, &ctl, 1);
                fz_put(&t, sec, sizeof(sec));
                fz_request(&f, 2, 0, 4, 3, &t);
                f.b[f.n - sizeof(sec) - 24 + 10] = 16;
                break;
        }
        default: {                      /* out-of-range sizes and bad strings */
                static const uint8_t bad[] = { 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 'x', 0, 0, 0 };
                ctl = 1 | 1 << 1;
                fz_put(&f, &ctl, 1);
                fz_put(&t, bad, sizeof(bad));
                fz_put32(&t, 0xffffffffu);
                fz_request(&f, 2, 0, 0, 3, &t);
                fz_request(&f, 3, 0, 6, 3, &t);
                fz_request(&f, 4, 0, 7, 3, &t);
                break;
        }
        }
        free(t.b);
        *ret = f.b;
        *ret_size = f.n;
        return 0;
}

/* ---- the auth verifier ---- */

static size_t fz_sig_size(void *ctx)
{
        (void)ctx;
        return 16;
}

/* Reads every signed and signature byte, writes every sealed one. */
static int fz_check_unseal(void *ctx, const uint8_t *sign, size_t sign_len, uint8_t *seal,
                           size_t seal_len, const uint8_t *sig, size_t sig_len)
{
        unsigned sum = 0;

        (void)ctx;
        for (size_t i = 0; i < sign_len; i++)
                sum += sign[i];
        for (size_t i = 0; i < seal_len; i++)
                seal[i] ^= 0x55;
        for (size_t i = 0; i < sig_len; i++)
                sum += sig[i];
        return sum & 1 ? -EKEYREJECTED : 0;
}

static const struct dcerpc_auth_mech fz_mech = {
        .sig_size = fz_sig_size,
        .check_unseal = fz_check_unseal,
};

static void fz_auth(const uint8_t *data, size_t size)
{
        struct dcerpc_auth_view v, w;

        for (size_t off = 0; off < size; off += v.frag_len) {
                if (dcerpc_auth_parse(data + off, size - off, &v) < 0)
                        return;
                if (v.frag_len > size - off || v.pad_len > DCERPC_AUTH_PAD_MAX ||
                    v.stub_off + v.stub_len + v.pad_len != v.trailer_off ||
                    v.auth_off + v.auth_len != v.frag_len ||
                    (v.auth_len && v.trailer_off + DCERPC_AUTH_TRAILER_SIZE != v.auth_off))
                        abort();
                /* A copy of the fragment's exact size, for ASan to watch its ends. */
                uint8_t *c = malloc(v.frag_len);
                if (!c)
                        abort();
                memcpy(c, data + off, v.frag_len);
                struct dcerpc_auth a = { &fz_mech, NULL, v.auth_type, v.auth_level,
                                         v.auth_context_id, v.call_id & 1 };
                (void)dcerpc_auth_verify(&a, c, v.frag_len, &w);
                free(c);
        }
}

/* SPNEGO's tokens: whatever is read points inside the input. */
static void fz_within(const uint8_t *data, size_t size, const uint8_t *p, size_t len)
{
        if (p && (p < data || len > size || (size_t) (p - data) > size - len))
                abort();
}

static void fz_spnego(const uint8_t *data, size_t size)
{
        struct spnego_init init;
        struct spnego_resp resp;

        if (spnego_parse_init(data, size, &init) == 0) {
                fz_within(data, size, init.mech_list, init.mech_list_len);
                fz_within(data, size, init.mech_token, init.mech_token_len);
                fz_within(data, size, init.mic, init.mic_len);
                if (init.n_mechs == 0)
                        abort();
        }
        if (spnego_parse_resp(data, size, &resp) == 0) {
                fz_within(data, size, resp.token, resp.token_len);
                fz_within(data, size, resp.mic, resp.mic_len);
        }
}

/* ---- the target ---- */

/* One connection's run: what must not depend on how its bytes were cut. */
struct fz_conn {
        struct pv2_server_conn *c;
        int dead;
        size_t sent;                    /* reply bytes */
};

static void fz_feed(struct fz_conn *z, const uint8_t *b, size_t n)
{
        uint8_t *out = NULL;
        size_t out_len = 0;

        if (z->dead)
                return;
        if (pv2_server_conn_feed(z->c, b, n, &out, &out_len) < 0)
                z->dead = 1;
        z->sent += out_len;
        free(out);
}

/* A connection under the budget b and the request cap max_request. */
static int fz_open(struct fz_conn *z, struct pv2_budget *b, size_t max_request, bool bind)
{
        *z = (struct fz_conn){ 0 };
        if (pv2_server_conn_new(&fake_handlers, NULL, &z->c) < 0)
                return -1;
        if (pv2_server_conn_set_budget(z->c, b) < 0 ||
            pv2_server_conn_set_max_request(z->c, max_request) < 0 ||
            pv2_server_conn_set_max_queries(z->c, 8) < 0)
                abort();
        if (bind)
                fz_feed(z, fz_bind, sizeof(fz_bind));
        return 0;
}

/* The twins ended in the same state: the chunking changed nothing. */
static void fz_same(const struct fz_conn *a, const struct fz_conn *b)
{
        if (a->dead != b->dead || a->sent != b->sent ||
            pv2_server_conn_bound(a->c) != pv2_server_conn_bound(b->c) ||
            pv2_server_conn_calls(a->c) != pv2_server_conn_calls(b->c) ||
            pv2_server_conn_queries(a->c) != pv2_server_conn_queries(b->c))
                abort();
}

/* Frees z; every query it still held is released exactly once. */
static void fz_close(struct fz_conn *z)
{
        unsigned open = (unsigned)pv2_server_conn_queries(z->c);
        unsigned closed_before = fake.closed;

        pv2_server_conn_free(z->c);
        if (fake.closed - closed_before != open)
                abort();
}

/* ---- a connection that requires authentication ---- */

static int fz_lookup(void *userdata, const char *user, const char *domain,
                     uint8_t ret_hash[NTLM_HASH_SIZE])
{
        (void)userdata;
        (void)domain;
        memset(ret_hash, user[0], NTLM_HASH_SIZE);
        return 0;
}

static int fz_inner(void *userdata, enum spnego_mech mech, struct dcerpc_sec *ret)
{
        if (mech != SPNEGO_MECH_NTLM)
                return -EPROTONOSUPPORT;
        return dcerpc_sec_ntlm_server("PERFLIB", fz_lookup, userdata, ret);
}

static int fz_new_sec(void *userdata, uint8_t auth_type, struct dcerpc_sec *ret)
{
        if (auth_type == DCERPC_AUTH_TYPE_NTLM)
                return dcerpc_sec_ntlm_server("PERFLIB", fz_lookup, userdata, ret);
        if (auth_type == DCERPC_AUTH_TYPE_SPNEGO)
                return dcerpc_sec_spnego_server(fz_inner, userdata, ret);
        return -EPROTONOSUPPORT;
}

static const struct pv2_auth_policy fz_policy = { .new_sec = fz_new_sec };

static void fz_authenticated(const uint8_t *data, size_t size)
{
        struct fz_conn z = { 0 };
        const char *detail;

        struct iovec *iov;
        size_t n_iov, ready;

        if (pv2_server_conn_new(&fake_handlers, NULL, &z.c) < 0 ||
            pv2_server_conn_set_auth(z.c, &fz_policy) < 0)
                abort();
        /* As perflibd feeds a TCP peer: replies sealed after the feed. */
        pv2_server_conn_defer_seal(z.c);
        (void)pv2_server_conn_feed_iov(z.c, data, size, &iov, &n_iov);
        do {
                if (pv2_server_conn_seal(z.c, 16384, &ready) < 0)
                        break;
        } while (ready != SIZE_MAX);
        (void)pv2_server_conn_auth_event(z.c, &detail);
        /* Nothing gets past a logon that random bytes cannot make. */
        if (pv2_server_conn_calls(z.c) != 0)
                abort();
        fz_close(&z);
}

#define FZ_REQUEST_CAP (256u * 1024u)
#define FZ_SMALL_CAP (PV2_BUDGET_FREE_BYTES + 8192u)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct pv2_budget *roomy = NULL, *tight = NULL;
        struct fz_conn a, b, t;

        if (size < 1)
                return 0;
        fake_reset();
        if (pv2_budget_new(2 * FZ_REQUEST_CAP, &roomy) < 0 || pv2_budget_new(4096, &tight) < 0)
                abort();
        uint8_t ctl = data[0];
        size_t chunk = (size_t)(ctl >> 1) * 7;
        data++;
        size--;
        fz_auth(data, size);
        fz_spnego(data, size);
        fz_authenticated(data, size);
        if (fz_open(&a, roomy, FZ_REQUEST_CAP, ctl & 1) < 0 ||
            fz_open(&b, roomy, FZ_REQUEST_CAP, ctl & 1) < 0 ||
            fz_open(&t, tight, FZ_SMALL_CAP, ctl & 1) < 0)
                abort();
        if (chunk == 0)
                chunk = size ? size : 1;
        for (size_t off = 0; off < size; off += chunk) {
                size_t n = size - off < chunk ? size - off : chunk;

                fz_feed(&a, data + off, n);
                for (size_t i = 0; i < n; i++)
                        fz_feed(&b, data + off + i, 1);
                fz_feed(&t, data + off, n);
        }
        fz_same(&a, &b);
        fz_close(&a);
        fz_close(&b);
        fz_close(&t);
        if (fake.opened != fake.closed || pv2_budget_used(roomy) || pv2_budget_used(tight))
                abort();
        pv2_budget_free(roomy);
        pv2_budget_free(tight);
        return 0;
}

/* ---- deterministic mutations ---- */

/* splitmix64 */
static uint64_t fz_next(uint64_t *s)
{
        uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));

        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        return z ^ (z >> 31);
}

static void fz_mutate(uint8_t *b, size_t *n, uint64_t *rng)
{
        static const uint32_t extremes[] = { 0, 1, 0xff, 0xffff, 0x7fffffff, 0xffffffff, 16, 24 };
        unsigned k = 1 + (unsigned)(fz_next(rng) % 4);

        for (unsigned i = 0; i < k && *n > 1; i++) {
                size_t at = 1 + (size_t)(fz_next(rng) % (*n - 1));
                uint64_t how = fz_next(rng) % 4;
                if (how == 0) {
                        b[at] ^= (uint8_t)(1u << (fz_next(rng) % 8));
                } else if (how == 1) {
                        *n = at;                /* truncate */
                } else {
                        uint32_t v = extremes[fz_next(rng) % 8];
                        for (size_t j = 0; j < (how == 2 ? 2u : 4u) && at + j < *n; j++)
                                b[at + j] = (uint8_t)(v >> (8 * j));
                }
        }
}

unsigned fz_rpc_mutations(unsigned iterations, int (*fn)(const uint8_t *data, size_t size))
{
        uint8_t *seeds[FZ_RPC_N_SEEDS];
        size_t sizes[FZ_RPC_N_SEEDS];
        uint64_t rng = 0x5043515750435157u;
        unsigned n = 0;

        for (unsigned i = 0; i < FZ_RPC_N_SEEDS; i++) {
                fz_rpc_seed(i, &seeds[i], &sizes[i]);
                fn(seeds[i], sizes[i]);
                n++;
        }
        for (unsigned it = 0; it < iterations; it++) {
                unsigned i = it % FZ_RPC_N_SEEDS;
                size_t len = sizes[i];
                uint8_t *b = malloc(len);
                if (!b)
                        abort();
                memcpy(b, seeds[i], len);
                fz_mutate(b, &len, &rng);
                fn(b, len);
                free(b);
                n++;
        }
        for (unsigned i = 0; i < FZ_RPC_N_SEEDS; i++)
                free(seeds[i]);
        return n;
}
