/* SPDX-License-Identifier: MIT */
/*
 * rrp-perf.h: what a performance client reads through MS-RRP on
 * \PIPE\winreg when no registry stands behind perflibd: the Perflib V1
 * view of the namespace under HKEY_PERFORMANCE_DATA (and the names under
 * HKEY_PERFORMANCE_TEXT and _NLSTEXT).
 *
 *   "Counter 009", "Help 009" (HKPD); "Counter", "Help" (HKPT, HKPN):
 *       REG_MULTI_SZ pairs "index\0text\0", after "1\0<last index>\0".
 *   "Global", "" : REG_BINARY, a PERF_DATA_BLOCK (winperf.h) of every live
 *       counterset; "Costly": one with no objects; "238 2 ...": the
 *       objects of those title indexes.
 *   anything else, and every name under HKEY_LOCAL_MACHINE:
 *       ERROR_FILE_NOT_FOUND.
 *
 * Title indexes are handed out when a counterset is first seen: an even
 * index for its name (the next odd one for its help), then one per
 * counter in its order.  They hold for the life of perflibd, so a client
 * that read "Counter 009" once keeps naming "Global"'s objects right while
 * providers come and go.
 */
#ifndef PERFLIBD_RRP_PERF_H
#define PERFLIBD_RRP_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns.h"
#include "rrp.h"

/* The title indexes handed out: one table per server, used under the namespace lock. */
struct rrp_titles;

/* Owned by the caller (rrp_titles_free).  0 or -ENOMEM. */
int rrp_titles_new(struct rrp_titles **ret);
void rrp_titles_free(struct rrp_titles *t);

/* The most countersets given indexes; past it the table starts over (logged by the caller). */
#define RRP_TITLES_MAX 65536u

struct rrp_perf_session {
        struct ns *ns;                  /* borrowed */
        struct rrp_titles *titles;      /* borrowed */
        bool allowed;                   /* else every value is ERROR_ACCESS_DENIED */
        const char *system_name;        /* UTF-8, borrowed: PERF_DATA_BLOCK's SystemName */
};

/*
 * The rrp_handlers.query_value of a struct rrp_perf_session (ctx); runs
 * under the namespace lock, as the PerflibV2 handlers do.
 */
uint32_t rrp_perf_query_value(void *ctx, enum rrp_hive hive, const uint8_t *name, size_t units,
                              struct rrp_value *ret);
/*
 * The rrp_handlers.release of the same: a value is paid from the query
 * memory (ns_mem_take, perflibd's --query-memory) while it is held, as
 * the PerflibV2 replies are, so that no number of clients reading
 * "Global" can grow the server past it.
 */
void rrp_perf_release(void *ctx, struct rrp_value *v);

#endif /* PERFLIBD_RRP_PERF_H */
