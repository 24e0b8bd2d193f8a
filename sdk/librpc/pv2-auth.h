/* SPDX-License-Identifier: MIT */
/*
 * pv2-auth.h: the server's side of one association's authentication
 * (pv2-server.c's helper): the three legs of the bind (bind, then auth3 or
 * alter_context), and, once established, the check and unsealing of
 * every request fragment and the protection of every response.  The rule
 * of MS-PCQ 2.1 lives here: with a policy set, only PKT_PRIVACY is
 * accepted, and no request is served before the context is established.
 * Internal to librpc.
 */
#ifndef PCQ_PV2_AUTH_H
#define PCQ_PV2_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dcerpc-auth.h"
#include "dcerpc-sec.h"
#include "perflibv2.h"

enum { PV2_AUTH_NONE, PV2_AUTH_PENDING, PV2_AUTH_DONE, PV2_AUTH_DENIED };

struct pv2_assoc_auth {
        const struct pv2_auth_policy *policy;   /* borrowed; NULL: no authentication */
        int state;
        struct dcerpc_sec sec;                  /* owned */
        struct dcerpc_auth auth;                /* once DONE */
        uint8_t bind_flags;
        enum pv2_auth_event event;              /* not yet collected */
        char detail[160];                       /* the event's user or reason */
        uint8_t *scratch;                       /* one request fragment, unsealed */
        size_t scratch_cap;
};

void pv2_auth_done(struct pv2_assoc_auth *a);
/* Gives back the scratch buffer, for a connection gone quiet. */
void pv2_auth_trim(struct pv2_assoc_auth *a);

/*
 * The first leg, on a bind of frag_len bytes at pdu: *ret_tok (the
 * caller's, maybe NULL) goes into the bind_ack's verifier, *ret_flags into
 * its header.  -EACCES when refused, with the bind_nak's reason in *nak
 * and the event saying why; -ENOMEM.
 */
int pv2_auth_bind(struct pv2_assoc_auth *a, const uint8_t *pdu, size_t frag_len,
                  uint8_t **ret_tok, size_t *ret_tok_len, uint8_t *ret_flags, uint16_t *nak);

/*
 * The third leg, an auth3 (no answer) or an alter_context (its answer's
 * verifier gets *ret_tok).  0 or -EACCES when the credentials were
 * refused (the association is then DENIED), -EPROTO for a leg out of
 * turn or a verifier that does not match the bind's.
 */
int pv2_auth_leg(struct pv2_assoc_auth *a, const uint8_t *pdu, size_t frag_len,
                 uint8_t **ret_tok, size_t *ret_tok_len);

/* Whether an alter_context carries a verifier (and is a leg of the bind). */
bool pv2_auth_is_leg(const struct pv2_assoc_auth *a, const uint8_t *pdu, size_t frag_len);

/*
 * A request fragment, checked and unsealed into the association's scratch
 * buffer: *ret_pdu and *ret_stub_off/len (the stub only).  -EPERM for a
 * request before the context is established (or after it was refused),
 * -EKEYREJECTED and dcerpc_auth_verify's others for a fragment that is
 * not what the peer's key made.
 */
int pv2_auth_open(struct pv2_assoc_auth *a, const uint8_t *pdu, size_t frag_len,
                  const uint8_t **ret_pdu, size_t *ret_stub_off, size_t *ret_stub_len);

/* Whether calls must go through pv2_auth_open and responses be protected. */
static inline bool pv2_auth_on(const struct pv2_assoc_auth *a)
{
        return a->policy != NULL;
}

#endif /* PCQ_PV2_AUTH_H */
