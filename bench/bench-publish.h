/* SPDX-License-Identifier: MIT */
/*
 * The shapes bench-perflibd measures, published the same way from a
 * provider process and from the bench plugin (bench-plugin.c), so that the
 * two are compared on equal terms.
 */
#ifndef PL_BENCH_PUBLISH_H
#define PL_BENCH_PUBLISH_H

#include <stdint.h>

#include "perflib.h"

/* The bench plugin's: 1,000 instances x 1 counter, and one with a collect callback. */
#define BENCH_PLUGIN_PROV   { 0xbe2c0101, 0x1, 0x2, { 0xb, 0xe, 0x2, 0xc, 1, 2, 3, 4 } }
#define BENCH_PLUGIN_CSET   { 0xbe2c0102, 0x1, 0x2, { 0xb, 0xe, 0x2, 0xc, 1, 2, 3, 4 } }
#define BENCH_PLUGIN_CB_PROV { 0xbe2c0103, 0x1, 0x2, { 0xb, 0xe, 0x2, 0xc, 1, 2, 3, 4 } }
#define BENCH_PLUGIN_CB_CSET { 0xbe2c0104, 0x1, 0x2, { 0xb, 0xe, 0x2, 0xc, 1, 2, 3, 4 } }
#define BENCH_PLUGIN_INSTANCES 1000u

struct bench_shape {
        GUID prov, cset;
        uint32_t instances, counters;
        /* With one, every query is a PERF_COLLECT_START and END round trip to the provider. */
        PERFLIBREQUEST callback;
};

/*
 * Starts s->prov publishing s->cset: instances i0 ... iN-1, each with
 * counters 1 ... C (64-bit bulk counts, instance i's counter k+1 = i * k).
 * *ret is the caller's, for PerfStopProvider; a Win32 error otherwise.
 */
ULONG bench_publish(const struct bench_shape *s, HANDLE *ret);

/* A collect callback that only answers: what the round trip costs, not a collection. */
ULONG WINAPI bench_answer(ULONG request, PVOID buffer, ULONG size);

#endif
