/* SPDX-License-Identifier: MIT */
/*
 * remote-auth.h: who may query over TCP.  Every TCP connection must
 * authenticate at packet privacy (MS-PCQ 2.1), with NTLM, Kerberos (given
 * a keytab) or SPNEGO offering either, as an account of the accounts file
 * (accounts.h, edited by perflib-passwd),
 * which is reread whenever it changes; the answers to failed attempts
 * are slowed per address (auth-delay.h).  Internal to perflibd.
 */
#ifndef PERFLIBD_REMOTE_AUTH_H
#define PERFLIBD_REMOTE_AUTH_H

#include <sys/socket.h>

#include "ntlm.h"
#include "perflibv2.h"

/* The one domain the accounts form, named in the CHALLENGE (perflibd(8)). */
#define REMOTE_AUTH_DOMAIN "PERFLIB"

struct remote_auth;

/*
 * Reads path now (a missing or unreadable file is logged, and every logon
 * is refused until a good one appears).  With keytab, Kerberos is offered
 * too (alone, and in SPNEGO), once the keytab proved usable: -ENOKEY
 * otherwise.  *ret is the caller's.
 */
int remote_auth_new(const char *path, const char *keytab, struct remote_auth **ret);
void remote_auth_free(struct remote_auth *ra);

/* The policy to give each TCP connection (pv2_server_conn_set_auth); owned by ra. */
const struct pv2_auth_policy *remote_auth_policy(struct remote_auth *ra);

/*
 * Logons checked against the accounts file first, then, for a user it
 * does not list, by verify (Samba's winbind on its pipe): a
 * pv2_auth_policy new_sec whose userdata is a struct remote_verifier,
 * which must outlive every context made.
 */
struct remote_verifier {
        struct remote_auth *ra;
        ntlm_verify_fn verify;
        void *userdata;
};
int remote_auth_new_sec_verified(void *userdata, uint8_t auth_type, struct dcerpc_sec *ret);

/*
 * Logs what a connection's last feed decided about authentication, and
 * returns how long to hold its answer (µs): a failed logon from peer is
 * slowed, a good one forgives the address.
 */
uint64_t remote_auth_report(struct remote_auth *ra, enum pv2_auth_event e, const char *detail,
                            const struct sockaddr *peer, socklen_t len);

#endif /* PERFLIBD_REMOTE_AUTH_H */
