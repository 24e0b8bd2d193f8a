/* SPDX-License-Identifier: MIT */
/*
 * SPNEGO around an inner mechanism (spnego-sec.h).  Ours, on spnego.c's
 * DER: the exchange is four states on each side.
 *
 * Acceptor: the NegTokenInit names the client's mechanisms; the first we
 * offer is chosen, with its optimistic token when it is the client's
 * first choice, and named in our first answer.  Each NegTokenResp's token
 * then goes to the inner mechanism.  Once it is established the client's
 * mechListMIC is checked when sent, and is a must when the inner exchange
 * asks for it or the client's first choice was not taken (RFC 4178 5);
 * whenever the client sent one we answer with ours.
 *
 * Initiator: NegTokenInit with one mechanism; the inner tokens both ways;
 * with the inner context established it sends its mechListMIC, and it is
 * done once the acceptor said accept-completed with a mechListMIC that
 * checks out.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "spnego-sec.h"

enum { SP_START, SP_INNER, SP_FINAL, SP_DONE, SP_FAILED };

struct spnego_sec {
        bool server;
        int state;
        struct dcerpc_sec inner;        /* owned; ops NULL until chosen (acceptor) */
        enum spnego_mech mech;
        bool mic_needed;                /* RFC 4178: the first choice was not taken */
        uint8_t *mech_list;             /* the client's mechTypes, DER, owned */
        size_t mech_list_len;
        spnego_inner_fn new_inner;
        void *userdata;
};

static bool same_mech(enum spnego_mech a, enum spnego_mech b)
{
        bool ka = a == SPNEGO_MECH_KRB5 || a == SPNEGO_MECH_MS_KRB5;
        bool kb = b == SPNEGO_MECH_KRB5 || b == SPNEGO_MECH_MS_KRB5;

        return a == b || (ka && kb);
}

static int keep_mech_list(struct spnego_sec *s, const uint8_t *der, size_t len)
{
        s->mech_list = malloc(len ? len : 1);
        if (!s->mech_list)
                return -ENOMEM;
        memcpy(s->mech_list, der, len);
        s->mech_list_len = len;
        return 0;
}

/* Builds a NegTokenResp into *ret_out; mic, when given, is taken. */
static int answer(const struct spnego_resp *resp, uint8_t *mic, size_t mic_len,
                  uint8_t **ret_out, size_t *ret_out_len)
{
        struct spnego_resp r = *resp;
        int k;

        r.mic = mic;
        r.mic_len = mic ? mic_len : 0;
        k = spnego_build_resp(&r, ret_out, ret_out_len);
        free(mic);
        return k;
}

/* The inner token step, its output handed back in *tok (the caller frees it). */
static int inner_step(struct spnego_sec *s, const uint8_t *in, size_t in_len, uint8_t **tok,
                      size_t *tok_len)
{
        *tok = NULL;
        *tok_len = 0;
        return s->inner.ops->step(s->inner.ctx, in, in_len, tok, tok_len);
}

/* ---- acceptor ---- */

/* Chooses from the client's list; *ret_first: it was the client's first choice. */
static int server_choose(struct spnego_sec *s, const struct spnego_init *init, bool *ret_first)
{
        for (size_t i = 0; i < init->n_mechs && i < SPNEGO_MAX_MECHS; i++) {
                int r = s->new_inner(s->userdata, init->mechs[i], &s->inner);

                if (r == -EPROTONOSUPPORT)
                        continue;
                if (r < 0)
                        return r;
                s->mech = init->mechs[i];
                *ret_first = i == 0;
                return 0;
        }
        return -EPROTONOSUPPORT;
}

/* The inner context is established: the mechListMICs, and the last answer. */
static int server_finish(struct spnego_sec *s, const struct spnego_resp *in, uint8_t *tok,
                         size_t tok_len, bool first, uint8_t **ret_out, size_t *ret_out_len)
{
        struct spnego_resp out = { .state = SPNEGO_ACCEPT_COMPLETED, .has_mech = first,
                                   .mech = s->mech, .token = tok, .token_len = tok_len };
        const struct dcerpc_sec_ops *o = s->inner.ops;
        uint8_t *mic = NULL;
        size_t mic_len = 0;
        int r = 0;

        if (in && in->mic)
                r = o->verify_mic(s->inner.ctx, s->mech_list, s->mech_list_len, in->mic,
                                  in->mic_len);
        else if (s->mic_needed || o->mic_required(s->inner.ctx))
                r = -EACCES;
        if (r == -EKEYREJECTED)
                r = -EACCES;
        if (r == 0 && in && in->mic)
                r = o->get_mic(s->inner.ctx, s->mech_list, s->mech_list_len, &mic, &mic_len);
        if (r == 0)
                r = answer(&out, mic, mic_len, ret_out, ret_out_len);
        return r;
}

static int server_init(struct spnego_sec *s, const uint8_t *in, size_t in_len,
                       uint8_t **ret_out, size_t *ret_out_len)
{
        struct spnego_init init;
        struct spnego_resp out = { .state = SPNEGO_ACCEPT_INCOMPLETE, .has_mech = 1 };
        uint8_t *tok = NULL;
        size_t tok_len = 0;
        bool first = false;
        int r = spnego_parse_init(in, in_len, &init);

        if (r == 0)
                r = server_choose(s, &init, &first);
        if (r == -EPROTONOSUPPORT)
                return -EACCES;         /* nothing we speak: refused, as a bad password is */
        if (r == 0)
                r = keep_mech_list(s, init.mech_list, init.mech_list_len);
        if (r < 0)
                return r;
        s->mic_needed = !first;
        out.mech = s->mech;
        s->state = SP_INNER;
        if (!first || !init.mech_token)
                return answer(&out, NULL, 0, ret_out, ret_out_len);
        r = inner_step(s, init.mech_token, init.mech_token_len, &tok, &tok_len);
        if (r == DCERPC_SEC_DONE)
                r = server_finish(s, init.mic ? &(struct spnego_resp){ .mic = init.mic,
                                  .mic_len = init.mic_len } : NULL, tok, tok_len, true,
                                  ret_out, ret_out_len) ?: DCERPC_SEC_DONE;
        else if (r == DCERPC_SEC_CONTINUE) {
                out.token = tok;
                out.token_len = tok_len;
                r = answer(&out, NULL, 0, ret_out, ret_out_len) ?: DCERPC_SEC_CONTINUE;
        }
        free(tok);
        return r;
}

static int server_next(struct spnego_sec *s, const uint8_t *in, size_t in_len,
                       uint8_t **ret_out, size_t *ret_out_len)
{
        struct spnego_resp resp;
        struct spnego_resp out = { .state = SPNEGO_ACCEPT_INCOMPLETE };
        uint8_t *tok = NULL;
        size_t tok_len = 0;
        int r = spnego_parse_resp(in, in_len, &resp);

        if (r < 0)
                return r;
        if (resp.state == SPNEGO_REJECT)
                return -EACCES;
        if ((resp.has_mech && !same_mech(resp.mech, s->mech)) || !resp.token)
                return -EBADMSG;
        r = inner_step(s, resp.token, resp.token_len, &tok, &tok_len);
        if (r == DCERPC_SEC_DONE)
                r = server_finish(s, &resp, tok, tok_len, false, ret_out, ret_out_len) ?:
                    DCERPC_SEC_DONE;
        else if (r == DCERPC_SEC_CONTINUE) {
                out.token = tok;
                out.token_len = tok_len;
                r = answer(&out, NULL, 0, ret_out, ret_out_len) ?: DCERPC_SEC_CONTINUE;
        }
        free(tok);
        return r;
}

/* ---- initiator ---- */

static int client_init(struct spnego_sec *s, uint8_t **ret_out, size_t *ret_out_len)
{
        uint8_t *tok = NULL, *list = NULL;
        size_t tok_len = 0, list_len = 0;
        int r = inner_step(s, NULL, 0, &tok, &tok_len);

        if (r == DCERPC_SEC_CONTINUE)
                r = spnego_build_mech_list(&s->mech, 1, &list, &list_len);
        if (r == 0) {
                s->mech_list = list;
                s->mech_list_len = list_len;
                r = spnego_build_init(&s->mech, 1, tok, tok_len, ret_out, ret_out_len);
        }
        free(tok);
        if (r == 0)
                s->state = SP_INNER;
        return r < 0 ? r : r == 0 ? DCERPC_SEC_CONTINUE : -EPROTO;
}

static int client_next(struct spnego_sec *s, const uint8_t *in, size_t in_len,
                       uint8_t **ret_out, size_t *ret_out_len)
{
        struct spnego_resp resp;
        struct spnego_resp out = { .state = SPNEGO_STATE_ABSENT };
        uint8_t *tok = NULL, *mic = NULL;
        size_t tok_len = 0, mic_len = 0;
        int r = spnego_parse_resp(in, in_len, &resp);

        if (r < 0)
                return r;
        if (resp.state == SPNEGO_REJECT)
                return -EACCES;
        if ((resp.has_mech && !same_mech(resp.mech, s->mech)) || !resp.token ||
            resp.state != SPNEGO_ACCEPT_INCOMPLETE)
                return -EBADMSG;
        r = inner_step(s, resp.token, resp.token_len, &tok, &tok_len);
        if (r == DCERPC_SEC_DONE) {
                r = s->inner.ops->get_mic(s->inner.ctx, s->mech_list, s->mech_list_len, &mic,
                                          &mic_len);
                s->state = SP_FINAL;
        }
        if (r >= 0) {
                out.token = tok;
                out.token_len = tok_len;
                r = answer(&out, mic, mic_len, ret_out, ret_out_len);
                mic = NULL;
        }
        free(tok);
        free(mic);
        return r < 0 ? r : DCERPC_SEC_CONTINUE;
}

/* The acceptor's last word: accept-completed, and a mechListMIC that checks out. */
static int client_final(struct spnego_sec *s, const uint8_t *in, size_t in_len)
{
        struct spnego_resp resp;
        int r = spnego_parse_resp(in, in_len, &resp);

        if (r < 0)
                return r;
        if (resp.state == SPNEGO_REJECT)
                return -EACCES;
        if (resp.state != SPNEGO_ACCEPT_COMPLETED || resp.token || !resp.mic)
                return -EBADMSG;
        r = s->inner.ops->verify_mic(s->inner.ctx, s->mech_list, s->mech_list_len, resp.mic,
                                     resp.mic_len);
        /* A server that cannot sign our list did not prove it knows the key. */
        return r == -EKEYREJECTED ? -EACCES : r < 0 ? r : DCERPC_SEC_DONE;
}

/* ---- the table ---- */

static int spnego_sec_step(void *ctx, const uint8_t *in, size_t in_len, uint8_t **ret_out,
                           size_t *ret_out_len)
{
        struct spnego_sec *s = ctx;
        uint8_t *out = NULL;
        size_t out_len = 0;
        int r;

        if (s->state == SP_START && s->server)
                r = in_len ? server_init(s, in, in_len, &out, &out_len) : -EPROTO;
        else if (s->state == SP_START)
                r = in_len ? -EPROTO : client_init(s, &out, &out_len);
        else if (s->state == SP_INNER)
                r = s->server ? server_next(s, in, in_len, &out, &out_len) :
                    client_next(s, in, in_len, &out, &out_len);
        else if (s->state == SP_FINAL)
                r = client_final(s, in, in_len);
        else
                r = -EPROTO;
        if (r < 0) {
                free(out);
                s->state = SP_FAILED;
                return r;
        }
        if (r == DCERPC_SEC_DONE)
                s->state = SP_DONE;
        *ret_out = out;
        *ret_out_len = out ? out_len : 0;
        return r;
}

static const char *spnego_sec_peer(void *ctx)
{
        struct spnego_sec *s = ctx;

        return s->state == SP_DONE && s->inner.ops ? s->inner.ops->peer(s->inner.ctx) : NULL;
}

static int spnego_sec_get_mic(void *ctx, const uint8_t *data, size_t len, uint8_t **ret_mic,
                              size_t *ret_mic_len)
{
        struct spnego_sec *s = ctx;

        if (s->state != SP_DONE)
                return -EPROTO;
        return s->inner.ops->get_mic(s->inner.ctx, data, len, ret_mic, ret_mic_len);
}

static int spnego_sec_verify_mic(void *ctx, const uint8_t *data, size_t len, const uint8_t *mic,
                                 size_t mic_len)
{
        struct spnego_sec *s = ctx;

        if (s->state != SP_DONE)
                return -EPROTO;
        return s->inner.ops->verify_mic(s->inner.ctx, data, len, mic, mic_len);
}

static int spnego_sec_mic_required(void *ctx)
{
        (void) ctx;
        return 0;       /* SPNEGO inside SPNEGO is not a thing */
}

/* spnego_mech's functions take the spnego_sec and hand on to the inner mechanism's. */
static void *spnego_sec_mech_ctx(void *ctx)
{
        struct spnego_sec *s = ctx;

        return s->state == SP_DONE ? s : NULL;
}

static void spnego_sec_free(void *ctx)
{
        struct spnego_sec *s = ctx;

        if (!s)
                return;
        dcerpc_sec_free(&s->inner);
        free(s->mech_list);
        free(s);
}

/* The inner mechanism protects PDUs, and says what it signs. */
static bool spnego_mech_whole(void *ctx)
{
        struct spnego_sec *s = ctx;
        const struct dcerpc_auth_mech *m = s->inner.ops->mech;

        return m->sign_whole_pdu && m->sign_whole_pdu(s->inner.ops->mech_ctx(s->inner.ctx));
}

static size_t spnego_mech_sig_size(void *ctx)
{
        struct spnego_sec *s = ctx;

        return s->inner.ops->mech->sig_size(s->inner.ops->mech_ctx(s->inner.ctx));
}

static int spnego_mech_sign_seal(void *ctx, const uint8_t *sign, size_t sign_len, uint8_t *seal,
                                 size_t seal_len, uint8_t *ret_sig)
{
        struct spnego_sec *s = ctx;

        return s->inner.ops->mech->sign_seal(s->inner.ops->mech_ctx(s->inner.ctx), sign,
                                             sign_len, seal, seal_len, ret_sig);
}

static int spnego_mech_check_unseal(void *ctx, const uint8_t *sign, size_t sign_len,
                                    uint8_t *seal, size_t seal_len, const uint8_t *sig,
                                    size_t sig_len)
{
        struct spnego_sec *s = ctx;

        return s->inner.ops->mech->check_unseal(s->inner.ops->mech_ctx(s->inner.ctx), sign,
                                                sign_len, seal, seal_len, sig, sig_len);
}

static const struct dcerpc_auth_mech spnego_mech = {
        .sign_whole_pdu = spnego_mech_whole,
        .sig_size = spnego_mech_sig_size,
        .sign_seal = spnego_mech_sign_seal,
        .check_unseal = spnego_mech_check_unseal,
};

static const struct dcerpc_sec_ops spnego_sec_ops = {
        .name = "SPNEGO",
        .step = spnego_sec_step,
        .peer = spnego_sec_peer,
        .get_mic = spnego_sec_get_mic,
        .verify_mic = spnego_sec_verify_mic,
        .mic_required = spnego_sec_mic_required,
        .mech = &spnego_mech,
        .mech_ctx = spnego_sec_mech_ctx,
        .free = spnego_sec_free,
};

int dcerpc_sec_spnego_server(spnego_inner_fn new_inner, void *userdata, struct dcerpc_sec *ret)
{
        struct spnego_sec *s;

        if (!new_inner || !ret)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->server = true;
        s->new_inner = new_inner;
        s->userdata = userdata;
        *ret = (struct dcerpc_sec){ &spnego_sec_ops, s };
        return 0;
}

int dcerpc_sec_spnego_client(enum spnego_mech mech, struct dcerpc_sec *inner,
                             struct dcerpc_sec *ret)
{
        struct spnego_sec *s;

        if (!inner || !inner->ops || !ret || mech == SPNEGO_MECH_OTHER) {
                dcerpc_sec_free(inner);
                return -EINVAL;
        }
        s = calloc(1, sizeof(*s));
        if (!s) {
                dcerpc_sec_free(inner);
                return -ENOMEM;
        }
        s->mech = mech;
        s->inner = *inner;
        *inner = (struct dcerpc_sec){ 0 };
        *ret = (struct dcerpc_sec){ &spnego_sec_ops, s };
        return 0;
}
