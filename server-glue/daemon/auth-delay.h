/* SPDX-License-Identifier: MIT */
/*
 * auth-delay.h: the answers to failed authentications are slowed per peer
 * address, a growing delay capped at AUTH_DELAY_MAX_USEC, so that guessing
 * passwords over the network costs time, while a client that
 * authenticates correctly is never delayed (only failures are).  A good
 * logon does not forgive its address: whoever holds one account could
 * otherwise reset the delay between guesses at another's.  IPv6 peers are counted per /64, the block one host usually
 * holds: otherwise one host could change addresses at every guess.
 *
 * The table is bounded (AUTH_DELAY_MAX_PEERS by default): a flood of
 * addresses evicts the peers quiet the longest, never grows memory.  A
 * peer's failures are forgotten AUTH_DELAY_FORGET_USEC after its last
 * one.  Thread-safe: every connection thread reports to one table.
 * Internal to perflibd.
 */
#ifndef PERFLIBD_AUTH_DELAY_H
#define PERFLIBD_AUTH_DELAY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define AUTH_DELAY_FIRST_USEC   (UINT64_C(100) * 1000u)
#define AUTH_DELAY_MAX_USEC     (UINT64_C(2) * 1000000u)
#define AUTH_DELAY_FORGET_USEC  (UINT64_C(15) * 60 * 1000000u)
#define AUTH_DELAY_MAX_PEERS    4096u

struct auth_delay;

/* A table of at most max_peers addresses (0: AUTH_DELAY_MAX_PEERS); *ret is the caller's. */
int auth_delay_new(size_t max_peers, struct auth_delay **ret);
/* Accepts NULL. */
void auth_delay_free(struct auth_delay *t);

/*
 * A failed authentication from peer at now (µs, monotonic): how long to
 * wait before answering it: AUTH_DELAY_FIRST_USEC for a peer's first
 * failure, doubling with each further one, at most AUTH_DELAY_MAX_USEC.
 * A peer that is not AF_INET or AF_INET6 (a Unix socket) is not slowed: 0.
 */
uint64_t auth_delay_failed(struct auth_delay *t, const struct sockaddr *peer, socklen_t len,
                           uint64_t now);


/* How many peers the table holds (for tests and the status). */
size_t auth_delay_peers(struct auth_delay *t);

#endif /* PERFLIBD_AUTH_DELAY_H */
