/* SPDX-License-Identifier: MIT */
/*
 * What the test plugins and test-plugins.c agree on: the good plugin's
 * provider, counterset and the values it publishes.
 */
#ifndef PL_TEST_PLUGIN_H
#define PL_TEST_PLUGIN_H

#include "perflib.h"

/*
 * good.c is built as variant 1 ("good") and 2 ("good2"); as "good-cset",
 * variant 3's provider publishing variant 1's counterset; as "good-stamp",
 * variant 1 with stamp 1 (its instance id tells the builds apart); and as
 * "big" and "big-stamp", "good" and "good-stamp" with 4 MiB of bulk.
 */
#define TP_PROVIDER_GUID(v) { 0x9106e001, 0x7e57, 0x4a11, { 1, 2, 3, 4, 5, 6, 7, (v) } }
#define TP_CSET_GUID(v)     { 0x9106e002, 0x7e57, 0x4a11, { 1, 2, 3, 4, 5, 6, 7, (v) } }
/* How the loader names them in its logs. */
#define TP_PROVIDER_TEXT(v) "{9106e001-7e57-4a11-0102-03040506070" #v "}"
#define TP_CSET_TEXT(v)     "{9106e002-7e57-4a11-0102-03040506070" #v "}"

#define TP_INSTANCE_NAME L"plugin-instance"
#define TP_INSTANCE_ID   7u
#define TP_STAMPED_ID(s) (TP_INSTANCE_ID + (s))

/* When set, the file the good plugins append their name to at every start. */
#define TP_STARTS_ENV    "PERFLIB_TEST_PLUGIN_STARTS"

/* Counter 1 (ULONG), 2 (ULONGLONG), 3 (ULONGLONG by reference). */
#define TP_VALUE_1(v)    (1000u + (v))
#define TP_VALUE_2       UINT64_C(0x123456789abc)
/* Stored in the referenced variable after PerfSetCounterRefValue. */
#define TP_VALUE_REF     UINT64_C(0xfeedface0042)

/* What the good plugin logs from start, and the bad "start" one. */
#define TP_HELLO         "hello from the good plugin"
#define TP_START_FAILS   "failing on purpose"

#endif
