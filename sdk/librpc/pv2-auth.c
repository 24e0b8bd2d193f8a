/* SPDX-License-Identifier: MIT */
/*
 * The server's side of an association's authentication (pv2-auth.h).
 * Ours, on dcerpc-auth.c's verifiers and the mechanisms of dcerpc-sec.h.
 *
 * The legs, as Windows and Samba run them: the bind carries the client's
 * first token and the bind_ack ours; the client's last token comes in an
 * auth3 (NTLM; nothing answers it, and a refusal shows as an access-denied
 * fault on the first request) or in an alter_context (SPNEGO, whose
 * answer carries our mechListMIC).  Everything in a verifier is checked
 * against the bind's: its type, its level, its context id.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcerpc.h"
#include "ndr.h"
#include "pv2-auth.h"

void pv2_auth_done(struct pv2_assoc_auth *a)
{
        if (!a)
                return;
        dcerpc_sec_free(&a->sec);
        pv2_auth_trim(a);
        a->auth = (struct dcerpc_auth){ 0 };
}

void pv2_auth_trim(struct pv2_assoc_auth *a)
{
        free(a->scratch);
        a->scratch = NULL;
        a->scratch_cap = 0;
}

static void auth_event(struct pv2_assoc_auth *a, enum pv2_auth_event e, const char *fmt, ...)
{
        va_list ap;

        a->event = e;
        va_start(ap, fmt);
        vsnprintf(a->detail, sizeof(a->detail), fmt, ap);
        va_end(ap);
}

static const char *mech_name(const struct pv2_assoc_auth *a)
{
        return a->sec.ops && a->sec.ops->name ? a->sec.ops->name : "?";
}

static void establish(struct pv2_assoc_auth *a)
{
        const char *peer = a->sec.ops->peer(a->sec.ctx);

        a->auth.mech = a->sec.ops->mech;
        a->auth.ctx = a->sec.ops->mech_ctx(a->sec.ctx);
        a->state = PV2_AUTH_DONE;
        auth_event(a, PV2_AUTH_EVENT_OK, "%s (%s)", peer ? peer : "?", mech_name(a));
}

/* A step that failed: the association is refused for good. */
static int step_failed(struct pv2_assoc_auth *a, int r)
{
        a->state = PV2_AUTH_DENIED;
        if (r == -ENOMEM)
                return r;
        if (r == -EACCES)
                auth_event(a, PV2_AUTH_EVENT_DENIED, "wrong password or unknown user (%s)",
                           mech_name(a));
        else
                auth_event(a, PV2_AUTH_EVENT_REFUSED, "a malformed %s token: %s", mech_name(a),
                           strerror(-r));
        return -EACCES;
}

static int bind_refused(struct pv2_assoc_auth *a, uint16_t *nak, uint16_t reason,
                        const char *why, unsigned v)
{
        a->state = PV2_AUTH_DENIED;
        auth_event(a, PV2_AUTH_EVENT_REFUSED, why, v);
        *nak = reason;
        return -EACCES;
}

int pv2_auth_bind(struct pv2_assoc_auth *a, const uint8_t *pdu, size_t frag_len,
                  uint8_t **ret_tok, size_t *ret_tok_len, uint8_t *ret_flags, uint16_t *nak)
{
        struct dcerpc_auth_view v;
        uint8_t *tok = NULL;
        size_t tok_len = 0;
        int r;

        if (a->state != PV2_AUTH_NONE)
                return bind_refused(a, nak, DCERPC_NAK_NOT_SPECIFIED, "a second bind%.0u", 0);
        if (dcerpc_auth_parse(pdu, frag_len, &v) < 0)
                return bind_refused(a, nak, DCERPC_NAK_NOT_SPECIFIED,
                                    "a malformed auth verifier%.0u", 0);
        if (v.auth_len == 0)
                return bind_refused(a, nak, DCERPC_NAK_AUTH_TYPE,
                                    "an unauthenticated bind%.0u", 0);
        if (v.auth_level != DCERPC_AUTH_LEVEL_PRIVACY)
                return bind_refused(a, nak, DCERPC_NAK_AUTH_TYPE,
                                    "auth level %u; only 6 (packet privacy) is accepted",
                                    v.auth_level);
        r = a->policy->new_sec(a->policy->userdata, v.auth_type, &a->sec);
        if (r == -EPROTONOSUPPORT)
                return bind_refused(a, nak, DCERPC_NAK_AUTH_TYPE,
                                    "auth type %u, which is not offered", v.auth_type);
        if (r < 0)
                return r;
        a->bind_flags = pdu[3];
        a->auth = (struct dcerpc_auth){
                .auth_type = v.auth_type, .auth_level = v.auth_level,
                .context_id = v.auth_context_id,
                .header_sign = dcerpc_auth_header_sign(pdu[3],
                                                       dcerpc_auth_ack_flags(pdu[3], true)),
        };
        r = a->sec.ops->step(a->sec.ctx, pdu + v.auth_off, v.auth_len, &tok, &tok_len);
        if (r < 0) {
                *nak = DCERPC_NAK_NOT_SPECIFIED;
                return step_failed(a, r);
        }
        if (r == DCERPC_SEC_DONE)
                establish(a);
        else
                a->state = PV2_AUTH_PENDING;
        *ret_tok = tok;
        *ret_tok_len = tok_len;
        *ret_flags = dcerpc_auth_ack_flags(pdu[3], true);
        return 0;
}

bool pv2_auth_is_leg(const struct pv2_assoc_auth *a, const uint8_t *pdu, size_t frag_len)
{
        return a->policy && frag_len >= DCERPC_HDR_SIZE && ndr_le16(pdu + 10) > 0;
}

int pv2_auth_leg(struct pv2_assoc_auth *a, const uint8_t *pdu, size_t frag_len,
                 uint8_t **ret_tok, size_t *ret_tok_len)
{
        struct dcerpc_auth_view v;
        uint8_t *tok = NULL;
        size_t tok_len = 0;
        int r;

        if (a->state != PV2_AUTH_PENDING)
                return -EPROTO;
        if (dcerpc_auth_parse(pdu, frag_len, &v) < 0 || v.auth_len == 0 ||
            v.auth_type != a->auth.auth_type || v.auth_level != a->auth.auth_level ||
            v.auth_context_id != a->auth.context_id) {
                a->state = PV2_AUTH_DENIED;
                auth_event(a, PV2_AUTH_EVENT_REFUSED, "a verifier unlike the bind's");
                return -EPROTO;
        }
        r = a->sec.ops->step(a->sec.ctx, pdu + v.auth_off, v.auth_len, &tok, &tok_len);
        if (r < 0)
                return step_failed(a, r);
        if (r == DCERPC_SEC_DONE)
                establish(a);
        *ret_tok = tok;
        *ret_tok_len = tok_len;
        return r;
}

int pv2_auth_open(struct pv2_assoc_auth *a, const uint8_t *pdu, size_t frag_len,
                  const uint8_t **ret_pdu, size_t *ret_stub_off, size_t *ret_stub_len)
{
        struct dcerpc_auth_view v;
        int r;

        if (a->state != PV2_AUTH_DONE) {
                if (a->state != PV2_AUTH_DENIED)
                        auth_event(a, PV2_AUTH_EVENT_REFUSED, "a request before the "
                                   "authentication completed");
                a->state = PV2_AUTH_DENIED;
                return -EPERM;
        }
        if (frag_len > a->scratch_cap) {
                uint8_t *b = realloc(a->scratch, frag_len);

                if (!b)
                        return -ENOMEM;
                a->scratch = b;
                a->scratch_cap = frag_len;
        }
        memcpy(a->scratch, pdu, frag_len);
        r = dcerpc_auth_verify(&a->auth, a->scratch, frag_len, &v);
        if (r < 0) {
                a->state = PV2_AUTH_DENIED;
                auth_event(a, PV2_AUTH_EVENT_REFUSED, "a request %s",
                           r == -EKEYREJECTED ? "tampered with or replayed" :
                           r == -EACCES ? "without its verifier" : "with a malformed verifier");
                return r;
        }
        *ret_pdu = a->scratch;
        *ret_stub_off = v.stub_off;
        *ret_stub_len = v.stub_len;
        return 0;
}
