/* SPDX-License-Identifier: MIT */
/*
 * dcerpc-krb5.h: Kerberos (RPC_C_AUTHN_GSS_KERBEROS, and SPNEGO's
 * Kerberos) as a DCE/RPC security mechanism, through MIT's GSS-API in DCE
 * style: the three-leg AP-REQ, AP-REP, AP-REP exchange Windows and Samba
 * use for DCE/RPC.  Internal to librpc, libpcq and perflibd.
 *
 * The step counts, as dcerpc-sec.h's ops see them:
 *   initiator: step(NULL)   -> AP-REQ, CONTINUE
 *              step(AP-REP) -> AP-REP, DONE
 *   acceptor:  step(AP-REQ) -> AP-REP, CONTINUE
 *              step(AP-REP) -> no token, DONE
 *
 * Only AES session keys are accepted (RFC 4121 tokens; DES and RC4 are
 * refused), so SPNEGO's mechListMIC is always required once established.
 *
 * Constructors write *ret only on success; the struct dcerpc_sec is then
 * the caller's, freed with dcerpc_sec_free.  -ENOKEY when there are no
 * credentials to start from (no keytab, no credential cache), -EINVAL for
 * an unusable name, -ENOMEM.
 */
#ifndef PCQ_DCERPC_KRB5_H
#define PCQ_DCERPC_KRB5_H

#include "dcerpc-auth.h"
#include "dcerpc-sec.h"

/*
 * The server's side: keys from the keytab at that path (NULL: KRB5_KTNAME,
 * else the system's default); any service principal it holds is accepted.
 * peer() is the client's principal: "user" for one of the realm of the
 * service key that accepted it, "user@REALM" for any other realm.
 */
int dcerpc_sec_krb5_acceptor(const char *keytab, struct dcerpc_sec *ret);

/*
 * The client's side, to the service target ("host@hostname", a
 * GSS_C_NT_HOSTBASED_SERVICE name), with the credentials of the default
 * credential cache (KRB5CCNAME).  peer() is NULL: the server proves
 * itself in the exchange (mutual authentication), or step fails -EACCES.
 * The first step fails -ENOKEY when no ticket for target can be had (no
 * ticket-granting ticket, a service the KDC does not know, no KDC).
 */
int dcerpc_sec_krb5_initiator(const char *target, struct dcerpc_sec *ret);

/*
 * ops->mech protects PDUs at PKT_PRIVACY (GSS wrap tokens, the stub sealed;
 * with header signing the header and sec_trailer signed too), and refuses
 * (-EACCES) a context whose initiator did not ask for confidentiality.  At
 * PKT_INTEGRITY use this one with the same mech_ctx instead: its
 * signature is a GSS MIC over the signed bytes, and it refuses to seal.
 * The sizes differ, so the level picks the mechanism, not the call.
 */
extern const struct dcerpc_auth_mech dcerpc_krb5_integrity_mech;

#endif /* PCQ_DCERPC_KRB5_H */
