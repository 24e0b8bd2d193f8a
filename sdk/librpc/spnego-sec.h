/* SPDX-License-Identifier: MIT */
/*
 * spnego-sec.h: SPNEGO (RFC 4178, MS-SPNG) as a security context being
 * built (dcerpc-sec.h), around an inner mechanism: NTLM, or Kerberos.
 * The tokens are spnego.h's; the mechListMIC is the inner mechanism's
 * MIC over the client's mechTypes, checked whenever it is sent, and
 * demanded when the inner exchange says so (NTLM with a MIC in its
 * AUTHENTICATE).  Once established, PDUs are protected by the inner
 * mechanism.  Internal to librpc, libpcq and perflibd.
 */
#ifndef PCQ_SPNEGO_SEC_H
#define PCQ_SPNEGO_SEC_H

#include "dcerpc-sec.h"
#include "spnego.h"

/*
 * The acceptor's inner mechanisms: new_inner makes the acceptor of mech,
 * or fails with -EPROTONOSUPPORT for one it does not offer.
 */
typedef int (*spnego_inner_fn)(void *userdata, enum spnego_mech mech, struct dcerpc_sec *ret);

/*
 * The acceptor picks the client's first mechanism it offers (and its
 * optimistic token when that is the client's first choice).  *ret is the
 * caller's (dcerpc_sec_free).
 */
int dcerpc_sec_spnego_server(spnego_inner_fn new_inner, void *userdata, struct dcerpc_sec *ret);

/*
 * The initiator offers one mechanism, mech, whose context inner is: taken
 * in every case (freed on failure).  It returns DCERPC_SEC_CONTINUE until
 * the acceptor's final token (accept-completed, its mechListMIC checked)
 * has been stepped through.
 */
int dcerpc_sec_spnego_client(enum spnego_mech mech, struct dcerpc_sec *inner,
                             struct dcerpc_sec *ret);

#endif /* PCQ_SPNEGO_SEC_H */
