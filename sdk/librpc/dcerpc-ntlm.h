/* SPDX-License-Identifier: MIT */
/*
 * dcerpc-ntlm.h: NTLM (ntlm.h) as a DCE/RPC security mechanism
 * (dcerpc-auth.h): an established session signs and seals fragments, at
 * PKT_INTEGRITY (sign only) or PKT_PRIVACY (the stub sealed, the signed
 * range as the association negotiated header signing).  The ctx of the
 * struct dcerpc_auth is the struct ntlm_session.  Internal to librpc,
 * libpcq and perflibd.
 */
#ifndef PCQ_DCERPC_NTLM_H
#define PCQ_DCERPC_NTLM_H

#include "dcerpc-auth.h"

/*
 * A refused fragment (bad signature, replay, reordering) is -EKEYREJECTED,
 * and the session refuses everything after it: NTLM's RC4 stream has moved
 * on, so the association must end, as a tampered PDU ends it anyway.
 */
extern const struct dcerpc_auth_mech dcerpc_ntlm_mech;

#endif /* PCQ_DCERPC_NTLM_H */
