/* SPDX-License-Identifier: MIT */
/*
 * client-cred.h: the credentials of a TCP link (client-cred.c): a
 * pcq_credentials and the environment's fallbacks made into what the bind
 * needs, the account's NT hash rather than its password, and the security
 * context built from it.  Hidden symbols, cl_ prefix.
 */
#ifndef PCQ_CLIENT_CRED_H
#define PCQ_CLIENT_CRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dcerpc-sec.h"
#include "ntlm.h"
#include "pcq.h"

struct cl_cred {
        uint8_t auth_type;              /* DCERPC_AUTH_TYPE_NONE: no user, no authentication */
        bool kerberos;                  /* SPNEGO offering Kerberos: the ticket, no password */
        char user[NTLM_NAME_MAX + 1];
        char domain[NTLM_NAME_MAX + 1];
        uint8_t nt_hash[NTLM_HASH_SIZE];
};

/*
 * Fills *ret from given (NULL: none) and PERFLIB_USER, PERFLIB_PASSWORD
 * and PERFLIB_AUTH.  On failure why (why_size bytes) says what is wrong.
 * Whatever the outcome, cl_cred_wipe ends it.
 */
uint32_t cl_cred_get(const struct pcq_credentials *given, struct cl_cred *ret, char *why,
                     size_t why_size);
void cl_cred_wipe(struct cl_cred *c);

/* The mechanism's name, for messages: "NTLM", "SPNEGO", "Kerberos". */
const char *cl_cred_mech(const struct cl_cred *c);

/*
 * The client security context of c for host, not yet stepped, into *ret
 * (the caller's: pv2_client_connect_tcp_sec takes it).  0 or -errno:
 * -ENOKEY for Kerberos without a ticket, with why saying so.
 */
int cl_cred_sec(const struct cl_cred *c, const char *host, struct dcerpc_sec *ret, char *why,
                size_t why_size);

/*
 * Why the bind of c to host failed with err, into why, when c's mechanism
 * can say more than the status (Kerberos without a ticket for the
 * service); otherwise why is left alone.
 */
void cl_cred_explain(const struct cl_cred *c, const char *host, int err, char *why,
                     size_t size);

#endif /* PCQ_CLIENT_CRED_H */
