/* SPDX-License-Identifier: MIT */
/*
 * client-link.h: one link to a PerflibV2 server (client-link.c), what the
 * catalog and the connection of libpcq fetch through: connecting over the
 * local socket or TCP, and the five lpData calls with MS-PCQ's sizing
 * rule.  It knows nothing of paths, catalogs or queries.  Hidden symbols,
 * cl_ prefix.
 */
#ifndef PCQ_CLIENT_LINK_H
#define PCQ_CLIENT_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcq.h"
#include "perflibv2.h"

struct cl_link {
        struct pv2_client *client;      /* owned */
        char *machine;                  /* owned; szMachine sent: TCP's host name, else NULL */
        uint32_t size_hint[8];          /* last lpData size per opnum */
};

/* Whether host names this machine: NULL, "", "." or "localhost". */
bool cl_host_is_local(const char *host);

/*
 * Connects the zeroed l to host (local, "unix:PATH", "host[:port]" or
 * "[v6][:port]") and makes one cheap call, so that a server that refuses
 * this user says so now.  Over TCP it authenticates with cred (NULL: the
 * environment's, see pcq_connect_as); the local socket takes none.  On failure why (why_size bytes, at least 1)
 * gets the sentence pcq_connect_error() gives: what was tried, the
 * error and what to do.  Whatever the outcome, cl_link_close ends it.
 */
uint32_t cl_link_open(struct cl_link *l, const char *host, const struct pcq_credentials *cred,
                      int timeout_ms, char *why, size_t why_size);
void cl_link_close(struct cl_link *l);

/*
 * The lpData calls: each is retried with a larger buffer while the server
 * asks for one, and the answer (a pcq_buf, the caller's) is what pcq.h's
 * calls of the same names return.
 */
uint32_t cl_link_enum_countersets(struct cl_link *l, GUID **ret_guids, size_t *ret_n);
uint32_t cl_link_registration_info(struct cl_link *l, const GUID *counterset,
                                   uint32_t request_code, uint32_t lcid, struct pcq_buf *ret);
uint32_t cl_link_enum_instances(struct cl_link *l, const GUID *counterset, struct pcq_buf *ret);
uint32_t cl_link_counter_info(struct cl_link *l, const struct pv2_handle *h, struct pcq_buf *ret);
uint32_t cl_link_counter_data(struct cl_link *l, const struct pv2_handle *h, struct pcq_buf *ret);

#endif /* PCQ_CLIENT_LINK_H */
