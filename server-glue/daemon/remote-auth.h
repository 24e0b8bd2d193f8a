/* SPDX-License-Identifier: MIT */
/*
 * remote-auth.h: who may query over TCP.  Every TCP connection must
 * authenticate at packet privacy (MS-PCQ 2.1), with NTLM or SPNEGO,
 * against the accounts file (accounts.h, edited by perflib-passwd),
 * which is reread whenever it changes; the answers to failed attempts
 * are slowed per address (auth-delay.h).  Internal to perflibd.
 */
#ifndef PERFLIBD_REMOTE_AUTH_H
#define PERFLIBD_REMOTE_AUTH_H

#include <sys/socket.h>

#include "perflibv2.h"

/* The one domain the accounts form, named in the CHALLENGE (perflibd(8)). */
#define REMOTE_AUTH_DOMAIN "PERFLIB"

struct remote_auth;

/*
 * Reads path now (a missing or unreadable file is logged, and every logon
 * is refused until a good one appears).  *ret is the caller's.
 */
int remote_auth_new(const char *path, struct remote_auth **ret);
void remote_auth_free(struct remote_auth *ra);

/* The policy to give each TCP connection (pv2_server_conn_set_auth); owned by ra. */
const struct pv2_auth_policy *remote_auth_policy(struct remote_auth *ra);

/*
 * Logs what a connection's last feed decided about authentication, and
 * returns how long to hold its answer (µs): a failed logon from peer is
 * slowed, a good one forgives the address.
 */
uint64_t remote_auth_report(struct remote_auth *ra, enum pv2_auth_event e, const char *detail,
                            const struct sockaddr *peer, socklen_t len);

#endif /* PERFLIBD_REMOTE_AUTH_H */
