/* SPDX-License-Identifier: MIT */
/*
 * client-conn.h: what pcq_conn is (client-conn.c), for the libpcq code
 * above it, listing and queries: the link its calls go over, the host the
 * caller named and the catalog paths are resolved against.
 */
#ifndef PCQ_CLIENT_CONN_H
#define PCQ_CLIENT_CONN_H

#include "client-catalog.h"
#include "client-link.h"

struct pcq_conn {
        struct cl_link link;            /* owned */
        char *host;                     /* owned; "" for local */
        struct cl_catalog catalog;      /* owned, loaded from link */
        char *error;                    /* owned; why the last call naming a path failed */
};

#endif /* PCQ_CLIENT_CONN_H */
