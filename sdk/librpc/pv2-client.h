/* SPDX-License-Identifier: MIT */
/*
 * pv2-client.h: the PerflibV2 client's parts (perflibv2.h's client side),
 * private to them: the connection, its socket I/O under a deadline
 * (pv2-client-io.c) and its bind, authenticated or not
 * (pv2-client-bind.c); pv2-client.c connects and makes the calls.
 */
#ifndef PCQ_PV2_CLIENT_H
#define PCQ_PV2_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dcerpc.h"
#include "dcerpc-auth.h"
#include "dcerpc-sec.h"

#define PV2_CLIENT_FRAG DCERPC_SERVER_MAX_FRAG
/* A bind or alter_context of one context with one transfer syntax, before any verifier. */
#define PV2_BIND_SIZE 72u
/* Tokens a context may take after the bind_ack's (SPNEGO around NTLM needs one). */
#define PV2_AUTH_ROUNDS 4
/* Our auth_context_id: one security context per connection, any number does. */
#define PV2_AUTH_CONTEXT_ID 1u

/* One connection, bound once, calls one at a time; pv2_client_free ends it. */
struct pv2_client {
        int fd;
        int timeout_ms;
        uint32_t next_call_id;
        uint16_t max_xmit;              /* largest fragment we may send */
        uint32_t last_fault;
        bool broken;
        uint8_t bind_flags;             /* of the bind and alter_context */
        struct dcerpc_sec sec;          /* owned; ops NULL: unauthenticated */
        struct dcerpc_auth auth;        /* its protection, mech set once established */
        uint8_t frag[65536];            /* one received fragment */
};

/* Milliseconds of CLOCK_MONOTONIC. */
int64_t pv2c_now_ms(void);
/* Waits for events on fd until deadline (< 0: none); 0, -ETIMEDOUT or -errno. */
int pv2c_wait_fd(int fd, short events, int64_t deadline);
/* All n bytes, on a non-blocking socket, by the deadline. */
int pv2c_send_all(int fd, const uint8_t *b, size_t n, int64_t deadline);
int pv2c_recv_all(int fd, uint8_t *b, size_t n, int64_t deadline);
/* The deadline of a call starting now: c's timeout from now, -1 for none. */
int64_t pv2c_deadline(const struct pv2_client *c);
/* Reads one PDU into c->frag; -EPROTO for a header that does not parse. */
int pv2c_recv_pdu(struct pv2_client *c, struct dcerpc_hdr *ret, int64_t deadline);

/*
 * Binds c to PerflibV2, authenticating first when c->sec has a context:
 * on success with one, c->auth protects every later PDU.  -EACCES when
 * refused, -EPROTONOSUPPORT for a server that binds without a token.
 */
int pv2c_bind(struct pv2_client *c);

#endif /* PCQ_PV2_CLIENT_H */
