/* SPDX-License-Identifier: MIT */
/*
 * pcq_conn and the eight PerflibV2 calls of pcq.h section 1.  A
 * connection is a link to a server (client-link.c, which does the
 * connecting and the sizing rule), the host name the caller gave, and the
 * catalog of the server's countersets (client-catalog.c) that paths are
 * resolved against; this file owns their lifetime and checks the
 * arguments of the public calls.  A query handle borrows its connection's
 * link.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client-conn.h"

struct pcq_handle {
        struct cl_link *link;           /* borrowed, the connection's */
        struct pv2_handle h;
};

/* ---- the connection ---- */

/* Why this thread's last pcq_connect failed: there is no pcq_conn to hold it. */
static __thread char connect_error[1024];

PCQ_API uint32_t pcq_connect(const char *host, int timeout_ms, pcq_conn **ret)
{
        return pcq_connect_as(host, NULL, timeout_ms, ret);
}

PCQ_API uint32_t pcq_connect_as(const char *host, const struct pcq_credentials *cred,
                                int timeout_ms, pcq_conn **ret)
{
        pcq_conn *c;
        uint32_t e;

        connect_error[0] = 0;
        if (!ret || timeout_ms < 0) {
                snprintf(connect_error, sizeof(connect_error), "pcq_connect: invalid argument");
                return PDH_INVALID_ARGUMENT;
        }
        if (host && !strncmp(host, "\\\\", 2))
                host += 2;
        c = calloc(1, sizeof(*c));
        if (!c)
                goto oom;
        c->host = strdup(cl_host_is_local(host) ? "" : host);
        if (!c->host)
                goto oom;
        e = cl_link_open(&c->link, host, cred, timeout_ms, connect_error, sizeof(connect_error));
        if (e) {
                pcq_conn_free(c);
                return e;
        }
        *ret = c;
        return ERROR_SUCCESS;
oom:
        pcq_conn_free(c);
        snprintf(connect_error, sizeof(connect_error), "cannot connect: out of memory");
        return PDH_MEMORY_ALLOCATION_FAILURE;
}

PCQ_API const char *pcq_connect_error(void)
{
        return connect_error;
}

PCQ_API void pcq_conn_free(pcq_conn *c)
{
        if (!c)
                return;
        cl_catalog_clear(&c->catalog);
        cl_link_close(&c->link);
        free(c->host);
        free(c->error);
        free(c);
}

PCQ_API const char *pcq_conn_host(const pcq_conn *c)
{
        return c ? c->host : "";
}

PCQ_API const char *pcq_conn_error(const pcq_conn *c)
{
        return c && c->error ? c->error : "";
}

/* ---- the eight calls ---- */

PCQ_API uint32_t pcq_enum_countersets(pcq_conn *c, GUID **ret_guids, size_t *ret_n)
{
        if (!c || !ret_guids || !ret_n)
                return PDH_INVALID_ARGUMENT;
        return cl_link_enum_countersets(&c->link, ret_guids, ret_n);
}

PCQ_API uint32_t pcq_registration_info(pcq_conn *c, const GUID *counterset,
                                       uint32_t request_code, uint32_t lcid,
                                       struct pcq_buf *ret)
{
        if (!c || !counterset || !ret)
                return PDH_INVALID_ARGUMENT;
        return cl_link_registration_info(&c->link, counterset, request_code, lcid, ret);
}

PCQ_API uint32_t pcq_enum_instances(pcq_conn *c, const GUID *counterset, struct pcq_buf *ret)
{
        if (!c || !counterset || !ret)
                return PDH_INVALID_ARGUMENT;
        return cl_link_enum_instances(&c->link, counterset, ret);
}

PCQ_API uint32_t pcq_open(pcq_conn *c, pcq_handle **ret)
{
        pcq_handle *h;
        uint32_t e;

        if (!c || !ret)
                return PDH_INVALID_ARGUMENT;
        h = calloc(1, sizeof(*h));
        if (!h)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        h->link = &c->link;
        e = pv2_open_query(c->link.client, c->link.machine, &h->h);
        if (e) {
                free(h);
                return e;
        }
        *ret = h;
        return ERROR_SUCCESS;
}

PCQ_API void pcq_close(pcq_handle *h)
{
        if (!h)
                return;
        (void) pv2_close_query(h->link->client, &h->h);
        free(h);
}

PCQ_API uint32_t pcq_validate(pcq_handle *h, struct pcq_buf *ids, bool add)
{
        if (!h || !ids || !ids->data || ids->size > PV2_MAX_VALIDATE_BYTES)
                return PDH_INVALID_ARGUMENT;
        return pv2_validate_counters(h->link->client, &h->h, ids->data, ids->size, add);
}

PCQ_API uint32_t pcq_counter_info(pcq_handle *h, struct pcq_buf *ret)
{
        if (!h || !ret)
                return PDH_INVALID_ARGUMENT;
        return cl_link_counter_info(h->link, &h->h, ret);
}

PCQ_API uint32_t pcq_counter_data(pcq_handle *h, struct pcq_buf *ret)
{
        if (!h || !ret)
                return PDH_INVALID_ARGUMENT;
        return cl_link_counter_data(h->link, &h->h, ret);
}
