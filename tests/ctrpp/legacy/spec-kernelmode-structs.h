/* SPDX-License-Identifier: MIT */
/*
 * The structs the spec's kernel-mode example manifest names, declared
 * before ctrpp's header is included (ctrpp(1), -legacy: "compile base.c
 * with -include of the header that declares them").  The counters'
 * fields, in the manifest's types: 32-bit for perf_counter_rawcount and
 * the average timer and its base, 64-bit for the elapsed time and its
 * PerfTime and PerfFreq.
 */
#ifndef SPEC_KERNELMODE_STRUCTS_H
#define SPEC_KERNELMODE_STRUCTS_H

#include <perflib.h>

typedef struct {
        ULONG FreeMegabytes;
        ULONG TransferTime;
        ULONG TransferCount;
} MY_LOGICALDISK_DATA;

typedef struct {
        ULONG ProcessCount;
        ULONG ThreadCount;
        ULONGLONG SystemElapsedTime;
        ULONGLONG PerfTime;
        ULONGLONG PerfFreq;
} MY_SYSTEMOBJECTS_DATA;

#endif
