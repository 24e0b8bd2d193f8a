/* SPDX-License-Identifier: MIT */
/*
 * The client's authenticated binds and sealed calls (pv2-client.c)
 * against a scripted peer: a thread on a TCP loopback socket that plays
 * the server's part PDU by PDU, stepping a server security context with
 * the client's tokens, and checks what the client sends.  With scripted
 * contexts on both ends (tokens in, tokens out) over the toy mechanism of
 * toy-mech.h it tests the client's exchange and protection alone: NTLM's
 * auth3, SPNEGO's alter_context, header signing as negotiated, fragments
 * reassembled once unsealed, and every refusal (bind_nak, access denied,
 * a server that fails to prove itself, a tampered or unsigned response).
 * With librpc's own NTLM and SPNEGO on both ends it checks that the
 * client drives the real ones: right and wrong passwords.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "dcerpc.h"
#include "dcerpc-auth.h"
#include "dcerpc-ntlm.h"
#include "dcerpc-sec.h"
#include "ndr.h"
#include "perflibv2.h"
#include "spnego-sec.h"
#include "toy-mech.h"

#define KEY 0x5a

/* ---- a scripted security context ---- */

struct step {
        const char *in;                 /* the token expected, NULL: none */
        const char *out;                /* the token given, NULL: none */
        int ret;
};

struct script_sec {
        const struct step *steps;
        size_t n, at;
        struct toy toy;
};

static int script_step(void *ctx, const uint8_t *in, size_t in_len, uint8_t **ret_out,
                       size_t *ret_out_len)
{
        struct script_sec *s = ctx;

        if (s->at == s->n)
                return -EPROTO;
        const struct step *st = &s->steps[s->at++];
        if (st->in ? !in || in_len != strlen(st->in) || memcmp(in, st->in, in_len) : !!in)
                return -EBADMSG;
        if (st->ret < 0)
                return st->ret;
        *ret_out = st->out ? (uint8_t *)strdup(st->out) : NULL;
        *ret_out_len = st->out ? strlen(st->out) : 0;
        return st->ret;
}

static void *script_mech_ctx(void *ctx)
{
        struct script_sec *s = ctx;

        return s->at == s->n ? &s->toy : NULL;
}

static void script_free(void *ctx)
{
        free(ctx);
}

static const struct dcerpc_sec_ops script_ops = {
        .name = "script",
        .step = script_step,
        .mech = &toy_mech,
        .mech_ctx = script_mech_ctx,
        .free = script_free,
};

static struct dcerpc_sec script(const struct step *steps, size_t n)
{
        struct script_sec *s = calloc(1, sizeof(*s));

        assert_non_null(s);
        *s = (struct script_sec){ .steps = steps, .n = n, .toy.key = KEY };
        return (struct dcerpc_sec){ .ops = &script_ops, .ctx = s };
}

static const struct step ntlm_steps[] = {
        { NULL, "NEGOTIATE", DCERPC_SEC_CONTINUE },
        { "CHALLENGE", "AUTHENTICATE", DCERPC_SEC_DONE },
};
static const struct step ntlm_server[] = {
        { "NEGOTIATE", "CHALLENGE", DCERPC_SEC_CONTINUE },
        { "AUTHENTICATE", NULL, DCERPC_SEC_DONE },
};
static const struct step spnego_steps[] = {
        { NULL, "INIT", DCERPC_SEC_CONTINUE },
        { "RESP1", "RESP2", DCERPC_SEC_CONTINUE },
        { "FINAL", NULL, DCERPC_SEC_DONE },
};
static const struct step spnego_server[] = {
        { "INIT", "RESP1", DCERPC_SEC_CONTINUE },
        { "RESP2", "FINAL", DCERPC_SEC_DONE },
};
/* The server's last token does not prove it (its mechListMIC is wrong). */
static const struct step spnego_bad_mic[] = {
        { NULL, "INIT", DCERPC_SEC_CONTINUE },
        { "RESP1", "RESP2", DCERPC_SEC_CONTINUE },
        { "FINAL", NULL, -EACCES },
};

/* ---- the peer ---- */

enum peer_mode {
        PEER_SERVE,                     /* authenticates, answers two calls */
        PEER_NO_HEADER_SIGN,            /* the same, declining header signing */
        PEER_NAK,                       /* bind_nak */
        PEER_DENY_CALL,                 /* authenticates, faults the call with access denied */
        PEER_TAMPER,                    /* flips a sealed byte of the first response */
        PEER_UNSIGNED,                  /* answers the first call without a verifier */
        PEER_NO_AUTH,                   /* binds without a verifier, as an old server would */
        PEER_NAK_PLAIN,                 /* naks any bind, for nak_reason */
};

struct peer {
        enum peer_mode mode;
        uint16_t nak_reason;
        uint8_t auth_type;
        int lfd;
        char port[16];
        pthread_t thread;
        const char *error;              /* what the peer found wrong, NULL: nothing */
        unsigned calls;                 /* requests it verified */
        struct dcerpc_sec sec;          /* the server's context, owned */
        bool refused;                   /* sec refused the client: calls get access denied */
        struct dcerpc_auth auth;
        uint8_t pdu[65536];
        size_t pdu_len;
};

#define PEER_CHECK(p, cond) \
        do { if (!(cond)) { (p)->error = #cond; return -1; } } while (0)

static int read_full(int fd, uint8_t *b, size_t n)
{
        while (n > 0) {
                ssize_t k = read(fd, b, n);
                if (k <= 0)
                        return -1;
                b += k;
                n -= (size_t)k;
        }
        return 0;
}

static int write_full(int fd, const uint8_t *b, size_t n)
{
        ssize_t k = write(fd, b, n);

        return k == (ssize_t)n ? 0 : -1;
}

/* One PDU into p->pdu; its view (verifier included).  -1 also when the client hung up. */
static int read_pdu(struct peer *p, int fd, struct dcerpc_auth_view *ret)
{
        struct dcerpc_hdr h;

        if (read_full(fd, p->pdu, DCERPC_HDR_SIZE) < 0)
                return -1;
        PEER_CHECK(p, dcerpc_parse_hdr(p->pdu, &h) == 0);
        PEER_CHECK(p, read_full(fd, p->pdu + 16, h.frag_len - 16u) == 0);
        p->pdu_len = h.frag_len;
        PEER_CHECK(p, dcerpc_auth_parse(p->pdu, p->pdu_len, ret) == 0);
        return 0;
}

/* Reads a PDU with a verifier of the peer's auth_type at PKT_PRIVACY. */
static int read_token(struct peer *p, int fd, struct dcerpc_auth_view *ret)
{
        if (read_pdu(p, fd, ret) < 0)
                return -1;
        PEER_CHECK(p, ret->auth_len > 0);
        PEER_CHECK(p, ret->auth_type == p->auth_type);
        PEER_CHECK(p, ret->auth_level == DCERPC_AUTH_LEVEL_PRIVACY);
        return 0;
}

/* Steps the server's context with the token v views; *ret_out is the caller's. */
static int peer_step(struct peer *p, const struct dcerpc_auth_view *v, uint8_t **ret_out,
                     size_t *ret_out_len)
{
        *ret_out = NULL;
        *ret_out_len = 0;
        return p->sec.ops->step(p->sec.ctx, p->pdu + v->auth_off, v->auth_len, ret_out,
                                ret_out_len);
}

/* A bind_ack or alter_context_resp accepting PerflibV2 over NDR, with token. */
static int send_ack(struct peer *p, int fd, uint8_t ptype, uint8_t flags, uint32_t call_id,
                    const uint8_t *token, size_t token_len)
{
        uint8_t *b = NULL, *at;
        size_t n = 0;

        PEER_CHECK(p, dcerpc_grow(&b, &n, 56, &at) == 0);
        memset(b, 0, n);
        dcerpc_put_hdr(b, ptype, DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG | flags, 56,
                       call_id);
        ndr_put_le16(b + 16, DCERPC_SERVER_MAX_FRAG);
        ndr_put_le16(b + 18, DCERPC_SERVER_MAX_FRAG);
        b[28] = 1;
        memcpy(b + 36, dcerpc_ndr_syntax, DCERPC_SYNTAX_SIZE);
        int r = !token ? 0 :
                dcerpc_auth_append_token(&b, &n, 0, p->auth_type, DCERPC_AUTH_LEVEL_PRIVACY,
                                         p->auth.context_id, token, token_len);
        if (r == 0)
                r = write_full(fd, b, n);
        free(b);
        PEER_CHECK(p, r == 0);
        return 0;
}

static int send_nak(struct peer *p, int fd, uint32_t call_id)
{
        uint8_t b[18] = { 0 };

        dcerpc_put_hdr(b, DCERPC_BIND_NAK, DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG,
                       sizeof(b), call_id);
        ndr_put_le16(b + 16, p->nak_reason);
        PEER_CHECK(p, write_full(fd, b, sizeof(b)) == 0);
        return 0;
}

/*
 * After the bind_ack: NTLM's auth3 (of the bind's call_id, unanswered) or
 * SPNEGO's alter_contexts (new call_ids, each answered), until the
 * server's context is established or refuses the client.
 */
static int peer_legs(struct peer *p, int fd, uint32_t bind_id)
{
        for (uint32_t call_id = bind_id;;) {
                struct dcerpc_auth_view v;
                uint8_t *tok;
                size_t len;

                if (read_token(p, fd, &v) < 0)
                        return -1;
                int st = peer_step(p, &v, &tok, &len);
                if (v.ptype == DCERPC_AUTH3) {
                        free(tok);
                        PEER_CHECK(p, p->auth_type == DCERPC_AUTH_TYPE_NTLM);
                        PEER_CHECK(p, v.call_id == bind_id);
                        p->refused = st < 0;
                        PEER_CHECK(p, st == DCERPC_SEC_DONE || p->refused);
                        return 0;
                }
                PEER_CHECK(p, v.ptype == DCERPC_ALTER_CONTEXT);
                PEER_CHECK(p, v.call_id == ++call_id);
                if (st < 0)
                        return send_nak(p, fd, v.call_id) < 0 ? -1 : 1;
                int r = send_ack(p, fd, DCERPC_ALTER_CONTEXT_RESP, 0, v.call_id, tok, len);
                free(tok);
                if (r < 0 || st == DCERPC_SEC_DONE)
                        return r;
        }
}

/* The server's half of the bind; 1 when the client was refused there. */
static int peer_bind(struct peer *p, int fd)
{
        struct dcerpc_auth_view v;
        uint8_t sign = p->mode == PEER_NO_HEADER_SIGN ? 0 : DCERPC_PFC_SUPPORT_HEADER_SIGN;
        uint8_t *tok;
        size_t len;

        if (p->mode == PEER_NAK_PLAIN)
                return read_pdu(p, fd, &v) < 0 || send_nak(p, fd, v.call_id) < 0 ? -1 : 1;
        if (read_token(p, fd, &v) < 0)
                return -1;
        PEER_CHECK(p, v.ptype == DCERPC_BIND);
        PEER_CHECK(p, v.flags & DCERPC_PFC_SUPPORT_HEADER_SIGN);
        p->auth = (struct dcerpc_auth){ NULL, NULL, p->auth_type, DCERPC_AUTH_LEVEL_PRIVACY,
                                        v.auth_context_id, sign != 0 };
        if (p->mode == PEER_NAK)
                return send_nak(p, fd, v.call_id) < 0 ? -1 : 1;
        if (p->mode == PEER_NO_AUTH)
                return send_ack(p, fd, DCERPC_BIND_ACK, 0, v.call_id, NULL, 0) < 0 ? -1 : 1;
        int st = peer_step(p, &v, &tok, &len);
        PEER_CHECK(p, st == DCERPC_SEC_CONTINUE && tok);
        int r = send_ack(p, fd, DCERPC_BIND_ACK, sign, v.call_id, tok, len);
        free(tok);
        if (r == 0)
                r = peer_legs(p, fd, v.call_id);
        if (r != 0 || p->refused)
                return r;
        p->auth.mech = p->sec.ops->mech;
        p->auth.ctx = p->sec.ops->mech_ctx(p->sec.ctx);
        PEER_CHECK(p, p->auth.ctx);
        return 0;
}

/* Reads a sealed request, checks it and answers its in_size (EnumerateCounterSet). */
static int peer_call(struct peer *p, int fd)
{
        struct dcerpc_auth_view v;
        uint8_t *out = NULL;
        size_t n = 0;

        if (read_pdu(p, fd, &v) < 0)
                return -1;
        PEER_CHECK(p, v.ptype == DCERPC_REQUEST && (v.flags & DCERPC_PFC_LAST_FRAG));
        if (p->refused) {
                PEER_CHECK(p, dcerpc_append_fault(&out, &n, v.call_id, 0,
                                                  PV2_NCA_S_FAULT_ACCESS_DENIED, 0) == 0);
                goto send;
        }
        PEER_CHECK(p, dcerpc_auth_verify(&p->auth, p->pdu, p->pdu_len, &v) == 0);
        PEER_CHECK(p, ndr_le16(p->pdu + 22) == PV2_ENUMERATE_COUNTERSET);
        p->calls++;
        /* dwInSize comes last, after szMachine. */
        uint32_t guids = ndr_le32(p->pdu + v.stub_off + v.stub_len - 4);
        if (p->mode == PEER_DENY_CALL) {
                PEER_CHECK(p, dcerpc_append_fault(&out, &n, v.call_id, 0,
                                                  PV2_NCA_S_FAULT_ACCESS_DENIED, 0) == 0);
                goto send;
        }
        /* pdwOutSize, pdwRtnSize, max, offset, actual, the GUIDs, the status. */
        size_t len = 24 + 16 * (size_t)guids;
        uint8_t *stub = calloc(1, len);
        PEER_CHECK(p, stub);
        for (int i = 0; i < 5; i++)
                ndr_put_le32(stub + 4 * i, i == 3 ? 0 : guids);
        for (size_t i = 0; i < 16 * (size_t)guids; i++)
                stub[20 + i] = (uint8_t)(i * 7);
        int r = p->mode == PEER_UNSIGNED && p->calls == 1 ?
                dcerpc_append_call(&out, &n, DCERPC_RESPONSE, v.call_id, 0, 0, stub, len,
                                   DCERPC_SERVER_MAX_FRAG) :
                dcerpc_auth_append_call(&p->auth, &out, &n, DCERPC_RESPONSE, v.call_id, 0, 0,
                                        stub, len, DCERPC_SERVER_MAX_FRAG);
        free(stub);
        PEER_CHECK(p, r == 0);
        if (p->mode == PEER_TAMPER && p->calls == 1)
                out[DCERPC_CALL_HDR_SIZE + 21] ^= 1;
send:
        r = write_full(fd, out, n);
        free(out);
        PEER_CHECK(p, r == 0);
        return 0;
}

static void *peer_main(void *arg)
{
        struct peer *p = arg;
        int fd = accept(p->lfd, NULL, NULL);

        if (fd < 0) {
                p->error = "accept";
                return NULL;
        }
        if (peer_bind(p, fd) == 0)
                for (int i = 0; i < 2 && peer_call(p, fd) == 0; i++)
                        ;
        close(fd);
        return NULL;
}

/*
 * Listens and serves one client as init says (copied, its sec taken as
 * the server's context), in a thread of its own.
 */
static void peer_start_as(struct peer *p, const struct peer *init)
{
        struct sockaddr_in sa = { .sin_family = AF_INET,
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(sa);

        *p = (struct peer){ .mode = init->mode, .auth_type = init->auth_type,
                            .nak_reason = init->nak_reason, .sec = init->sec };
        p->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(p->lfd >= 0);
        assert_int_equal(bind(p->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(getsockname(p->lfd, (struct sockaddr *)&sa, &len), 0);
        snprintf(p->port, sizeof(p->port), "%u", ntohs(sa.sin_port));
        assert_int_equal(listen(p->lfd, 1), 0);
        assert_int_equal(pthread_create(&p->thread, NULL, peer_main, p), 0);
}

static void peer_start_sec(struct peer *p, enum peer_mode mode, uint8_t auth_type,
                           struct dcerpc_sec sec)
{
        peer_start_as(p, &(struct peer){ .mode = mode, .auth_type = auth_type, .sec = sec });
}

/* A peer with the scripted server context of auth_type. */
static void peer_start(struct peer *p, enum peer_mode mode, uint8_t auth_type)
{
        bool ntlm = auth_type == DCERPC_AUTH_TYPE_NTLM;

        peer_start_sec(p, mode, auth_type, ntlm ? script(ntlm_server, 2) : script(spnego_server, 2));
}

/* Joins the peer; what it expected is what the client sent. */
static void peer_stop(struct peer *p, unsigned calls)
{
        assert_int_equal(pthread_join(p->thread, NULL), 0);
        close(p->lfd);
        dcerpc_sec_free(&p->sec);
        if (p->error)
                fail_msg("peer: %s", p->error);
        assert_int_equal(p->calls, calls);
}

static int connect_as(struct peer *p, const struct step *steps, size_t n, struct pv2_client **ret)
{
        struct dcerpc_sec sec = script(steps, n);
        int r = pv2_client_connect_tcp_sec("127.0.0.1", p->port, 5000, p->auth_type, &sec, ret);

        assert_null(sec.ops);           /* taken, whatever the outcome */
        return r;
}

/* ---- the tests ---- */

/* A small answer, then one of several sealed fragments, each reassembled. */
static void two_calls(struct pv2_client *c)
{
        struct pv2_out o = { 0 };

        assert_int_equal(pv2_enumerate_counterset(c, NULL, 1, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, 1);
        pv2_out_done(&o);
        assert_int_equal(pv2_enumerate_counterset(c, NULL, 1000, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, 1000);
        for (size_t i = 0; i < 16000; i++)
                assert_int_equal(o.data[i], (uint8_t)(i * 7));
        pv2_out_done(&o);
}

static void serve_and_call(enum peer_mode mode, uint8_t type, const struct step *steps, size_t n)
{
        struct pv2_client *c = NULL;
        struct peer p;

        peer_start(&p, mode, type);
        assert_int_equal(connect_as(&p, steps, n, &c), 0);
        two_calls(c);
        pv2_client_free(c);
        peer_stop(&p, 2);
}

static void ntlm_auth3_then_sealed_calls(void **state)
{
        (void)state;
        serve_and_call(PEER_SERVE, DCERPC_AUTH_TYPE_NTLM, ntlm_steps, 2);
}

static void spnego_alter_context_then_sealed_calls(void **state)
{
        (void)state;
        serve_and_call(PEER_SERVE, DCERPC_AUTH_TYPE_SPNEGO, spnego_steps, 3);
}

/* The server declines header signing: both ends sign the stub alone. */
static void header_signing_as_negotiated(void **state)
{
        (void)state;
        serve_and_call(PEER_NO_HEADER_SIGN, DCERPC_AUTH_TYPE_NTLM, ntlm_steps, 2);
}

static void bind_nak_is_access_denied(void **state)
{
        struct pv2_client *c = NULL;
        struct peer p;

        (void)state;
        peer_start(&p, PEER_NAK, DCERPC_AUTH_TYPE_NTLM);
        assert_int_equal(connect_as(&p, ntlm_steps, 2, &c), -EACCES);
        assert_null(c);
        peer_stop(&p, 0);
}

/*
 * Without credentials, a nak for the authentication is a refusal of this
 * client; a nak for no stated reason stays a protocol error, as on the
 * Unix socket before.
 */
static void plain_bind_nak(void **state)
{
        static const struct { uint16_t reason; int want; } cases[] = {
                { DCERPC_NAK_AUTH_TYPE, -EACCES },
                { DCERPC_NAK_NOT_SPECIFIED, -EPROTO },
                { DCERPC_NAK_PROTOCOL_VERSION, -EPROTO },
        };

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct pv2_client *c = NULL;
                struct peer p;

                peer_start_as(&p, &(struct peer){ .mode = PEER_NAK_PLAIN,
                                                  .nak_reason = cases[i].reason });
                assert_int_equal(pv2_client_connect_tcp("127.0.0.1", p.port, 5000, &c),
                                 cases[i].want);
                assert_null(c);
                peer_stop(&p, 0);
        }
}

static void server_without_authentication(void **state)
{
        struct pv2_client *c = NULL;
        struct peer p;

        (void)state;
        peer_start(&p, PEER_NO_AUTH, DCERPC_AUTH_TYPE_NTLM);
        assert_int_equal(connect_as(&p, ntlm_steps, 2, &c), -EPROTONOSUPPORT);
        assert_null(c);
        peer_stop(&p, 0);
}

static void server_that_fails_its_proof_is_refused(void **state)
{
        struct pv2_client *c = NULL;
        struct peer p;

        (void)state;
        peer_start(&p, PEER_SERVE, DCERPC_AUTH_TYPE_SPNEGO);
        assert_int_equal(connect_as(&p, spnego_bad_mic, 3, &c), -EACCES);
        assert_null(c);
        assert_int_equal(pthread_join(p.thread, NULL), 0);
        close(p.lfd);
        dcerpc_sec_free(&p.sec);
        assert_int_equal(p.calls, 0);
}

static void access_denied_fault(void **state)
{
        struct pv2_client *c = NULL;
        struct pv2_out o = { 0 };
        struct peer p;

        (void)state;
        peer_start(&p, PEER_DENY_CALL, DCERPC_AUTH_TYPE_NTLM);
        assert_int_equal(connect_as(&p, ntlm_steps, 2, &c), 0);
        assert_int_equal(pv2_enumerate_counterset(c, NULL, 1, &o), ERROR_ACCESS_DENIED);
        assert_int_equal(pv2_client_last_fault(c), PV2_NCA_S_FAULT_ACCESS_DENIED);
        assert_null(o.data);
        pv2_client_free(c);
        peer_stop(&p, 1);
}

/* A response that fails its check ends the connection: nothing later is sent. */
static void refused_response(enum peer_mode mode)
{
        struct pv2_client *c = NULL;
        struct pv2_out o = { 0 };
        struct peer p;

        peer_start(&p, mode, DCERPC_AUTH_TYPE_NTLM);
        assert_int_equal(connect_as(&p, ntlm_steps, 2, &c), 0);
        assert_int_equal(pv2_enumerate_counterset(c, NULL, 4, &o), PV2_ERROR_CONNECTION_ABORTED);
        assert_null(o.data);
        assert_int_equal(pv2_enumerate_counterset(c, NULL, 4, &o), PV2_ERROR_CONNECTION_ABORTED);
        pv2_client_free(c);
        peer_stop(&p, 1);
}

static void tampered_response_breaks(void **state)
{
        (void)state;
        refused_response(PEER_TAMPER);
}

static void unsigned_response_breaks(void **state)
{
        (void)state;
        refused_response(PEER_UNSIGNED);
}

/* ---- librpc's NTLM and SPNEGO on both ends ---- */

static int lookup(void *userdata, const char *user, const char *domain,
                  uint8_t ret_hash[NTLM_HASH_SIZE])
{
        (void)userdata;
        (void)domain;
        return strcmp(user, "alice") ? -ENOENT : ntlm_nt_hash("Password", ret_hash);
}

static int new_inner(void *userdata, enum spnego_mech mech, struct dcerpc_sec *ret)
{
        if (mech != SPNEGO_MECH_NTLM)
                return -EPROTONOSUPPORT;
        return dcerpc_sec_ntlm_server((const char *)userdata, lookup, NULL, ret);
}

static void real_peer(struct peer *p, uint8_t auth_type)
{
        struct dcerpc_sec sec;

        if (auth_type == DCERPC_AUTH_TYPE_NTLM)
                assert_int_equal(dcerpc_sec_ntlm_server("PEER", lookup, NULL, &sec), 0);
        else
                assert_int_equal(dcerpc_sec_spnego_server(new_inner, "PEER", &sec), 0);
        peer_start_sec(p, PEER_SERVE, auth_type, sec);
}

static int real_connect(struct peer *p, const char *password, struct pv2_client **ret)
{
        uint8_t hash[NTLM_HASH_SIZE];
        struct dcerpc_sec sec, ntlm;

        assert_int_equal(ntlm_nt_hash(password, hash), 0);
        assert_int_equal(dcerpc_sec_ntlm_client("alice", "PERFLIB", hash, &ntlm), 0);
        if (p->auth_type == DCERPC_AUTH_TYPE_NTLM)
                sec = ntlm;
        else
                assert_int_equal(dcerpc_sec_spnego_client(SPNEGO_MECH_NTLM, &ntlm, &sec), 0);
        return pv2_client_connect_tcp_sec("127.0.0.1", p->port, 5000, p->auth_type, &sec, ret);
}

static void real_mechanism(uint8_t auth_type)
{
        struct pv2_client *c = NULL;
        struct peer p;

        real_peer(&p, auth_type);
        assert_int_equal(real_connect(&p, "Password", &c), 0);
        two_calls(c);
        pv2_client_free(c);
        peer_stop(&p, 2);
}

static void real_ntlm(void **state)
{
        (void)state;
        real_mechanism(DCERPC_AUTH_TYPE_NTLM);
}

static void real_spnego(void **state)
{
        (void)state;
        real_mechanism(DCERPC_AUTH_TYPE_SPNEGO);
}

/* NTLM's auth3 has no answer: a wrong password shows at the first call. */
static void real_ntlm_wrong_password(void **state)
{
        struct pv2_client *c = NULL;
        struct pv2_out o = { 0 };
        struct peer p;

        (void)state;
        real_peer(&p, DCERPC_AUTH_TYPE_NTLM);
        assert_int_equal(real_connect(&p, "wrong", &c), 0);
        assert_int_equal(pv2_enumerate_counterset(c, NULL, 1, &o), ERROR_ACCESS_DENIED);
        pv2_client_free(c);
        peer_stop(&p, 0);
        assert_true(p.refused);
}

/* SPNEGO's alter_context is answered: a wrong password fails the connect. */
static void real_spnego_wrong_password(void **state)
{
        struct pv2_client *c = NULL;
        struct peer p;

        (void)state;
        real_peer(&p, DCERPC_AUTH_TYPE_SPNEGO);
        assert_int_equal(real_connect(&p, "wrong", &c), -EACCES);
        assert_null(c);
        peer_stop(&p, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(ntlm_auth3_then_sealed_calls),
                cmocka_unit_test(spnego_alter_context_then_sealed_calls),
                cmocka_unit_test(header_signing_as_negotiated),
                cmocka_unit_test(bind_nak_is_access_denied),
                cmocka_unit_test(server_without_authentication),
                cmocka_unit_test(plain_bind_nak),
                cmocka_unit_test(server_that_fails_its_proof_is_refused),
                cmocka_unit_test(access_denied_fault),
                cmocka_unit_test(tampered_response_breaks),
                cmocka_unit_test(unsigned_response_breaks),
                cmocka_unit_test(real_ntlm),
                cmocka_unit_test(real_spnego),
                cmocka_unit_test(real_ntlm_wrong_password),
                cmocka_unit_test(real_spnego_wrong_password),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
