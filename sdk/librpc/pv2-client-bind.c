/* SPDX-License-Identifier: MIT */
/*
 * The client's bind (pv2-client.h): PerflibV2 over NDR as context 0, and
 * over TCP the security context driven through it (MS-PCQ 2.1: NTLM or
 * SPNEGO at PKT_PRIVACY): the bind carries the context's first token, the
 * bind_ack the server's answer, and an auth3 (NTLM) or alter_context
 * (SPNEGO, whose answer proves the server through mechListMIC) completes
 * it.  A bind_nak or an access-denied fault is a refusal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ndr.h"
#include "perflibv2.h"
#include "pv2-client.h"

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
        r = pv2c_send_all(c->fd, b, len, deadline);
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
 * A refusal of a bind or alter_context.  The server will not have us
 * (-EACCES) when it faults with nca_s_fault_access_denied, naks for the
 * authentication (none over TCP, a level or mechanism it does not take),
 * or naks a bind that carried credentials for no other stated reason (a
 * token it refused); other naks, such as the protocol version or a plain
 * bind the Unix socket cannot place, are protocol errors as before.
 */
static int refusal(const struct pv2_client *c, const struct dcerpc_hdr *h)
{
        if (h->ptype == DCERPC_BIND_NAK && h->frag_len >= DCERPC_HDR_SIZE + 2) {
                uint16_t reason = ndr_le16(c->frag + DCERPC_HDR_SIZE);

                if (reason == DCERPC_NAK_AUTH_TYPE ||
                    (reason == DCERPC_NAK_NOT_SPECIFIED && c->sec.ops))
                        return -EACCES;
                return -EPROTO;
        }
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
        int r = pv2c_recv_pdu(c, &h, deadline);

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
                r = pv2c_send_all(c->fd, b, len, deadline);
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
int pv2c_bind(struct pv2_client *c)
{
        int64_t deadline = pv2c_deadline(c);
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
