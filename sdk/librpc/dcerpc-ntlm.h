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
#include "dcerpc-sec.h"
#include "ntlm.h"

/*
 * A refused fragment (bad signature, replay, reordering) is -EKEYREJECTED,
 * and the session refuses everything after it: NTLM's RC4 stream has moved
 * on, so the association must end, as a tampered PDU ends it anyway.
 */
extern const struct dcerpc_auth_mech dcerpc_ntlm_mech;

/*
 * NTLM as a security context being built: the server's, checking
 * AUTHENTICATE against lookup (ntlm_server_new), and the client's, with an
 * account's NT hash (ntlm_client_new).  *ret is the caller's
 * (dcerpc_sec_free).
 */
int dcerpc_sec_ntlm_server(const char *target, ntlm_lookup_fn lookup, void *userdata,
                           struct dcerpc_sec *ret);
/* The same, asking verify about the accounts lookup does not know (ntlm_server_set_verify). */
int dcerpc_sec_ntlm_server_verify(const char *target, ntlm_lookup_fn lookup, void *userdata,
                                  ntlm_verify_fn verify, void *verify_userdata,
                                  struct dcerpc_sec *ret);
int dcerpc_sec_ntlm_client(const char *user, const char *domain,
                           const uint8_t nt_hash[NTLM_HASH_SIZE], struct dcerpc_sec *ret);

#endif /* PCQ_DCERPC_NTLM_H */
