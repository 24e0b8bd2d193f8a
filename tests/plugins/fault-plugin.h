/* SPDX-License-Identifier: MIT */
/*
 * What the faulty test plugins (fault.c) and test-plugin-faults.c agree
 * on.  Each fault module is a provider of its own, with GUIDs of its own
 * (variant FP_*), so that it runs beside the good plugin.
 */
#ifndef PL_FAULT_PLUGIN_H
#define PL_FAULT_PLUGIN_H

#include "perflib.h"

/* The faults, one per module (fault.c is built with -DFAULT=FP_...). */
#define FP_SEGV         1       /* a store to a page it may not write, in PERF_COLLECT_START */
#define FP_ABORT        2       /* abort() in PERF_COLLECT_START */
#define FP_EXIT         3       /* exit(FP_EXIT_STATUS) in PERF_COLLECT_START */
#define FP_STACK        4       /* unbounded recursion in PERF_COLLECT_START */
#define FP_HANG_START   5       /* start never returns */
#define FP_HANG_COLLECT 6       /* PERF_COLLECT_START never returns */
#define FP_LEAK         7       /* FP_LEAK_BYTES kept at every PERF_COLLECT_START */
#define FP_SPIN         8       /* a thread of its own spins from start on */
#define FP_BAD_REF      9       /* a reference counter points at no readable page */
#define FP_OOB          10      /* a heap block overrun, then freed, at every collect */
#define FP_CRASH_FIRST  11      /* FP_SEGV's fault at the first FP_CRASHES collects only */

#define FP_PROVIDER_GUID(v) { 0x9106f001, 0x7e57, 0x4a11, { 1, 2, 3, 4, 5, 6, 7, (v) } }
#define FP_CSET_GUID(v)     { 0x9106f002, 0x7e57, 0x4a11, { 1, 2, 3, 4, 5, 6, 7, (v) } }

/* One instance; counter 1 (ULONGLONG) set, counter 2 (ULONGLONG) by reference. */
#define FP_INSTANCE      "fault"
#define FP_VALUE         UINT64_C(0xfa0171)
#define FP_VALUE_REF     UINT64_C(0xfa0172)

#define FP_EXIT_STATUS   3
#define FP_LEAK_BYTES    (8u << 20)
#define FP_CRASHES       2
/* The file crash-first appends a byte to at every collect: its collects so far. */
#define FP_COUNT_ENV     "PERFLIB_TEST_FAULT_COUNT"

#endif
