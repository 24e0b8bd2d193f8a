/* SPDX-License-Identifier: MIT */
/*
 * plugin.h: what the Linux providers share as perflibd plugins.  plugin.c
 * (compiled into each plugin) defines the plugin entry point and the
 * provider's ControlCallback; each plugin defines pv_provider.
 *
 * Values are collected only when a client asks: on PERF_COLLECT_START (one
 * per counterset per QueryCounterData, so at most once per collection)
 * and on PERF_ENUMERATE_INSTANCES (so that a listing shows the instances
 * that exist now), never by a thread of our own.  start collects once so
 * that the instances exist before the first request.
 */
#ifndef PV_PLUGIN_H
#define PV_PLUGIN_H

#include <syslog.h>

#include "perflib.h"

struct pv_provider {
        const char *name;
        /* CounterInitialize(callback, ...) and whatever the provider needs; a Win32 code. */
        ULONG (*start)(PERFLIBREQUEST callback);
        /* Reads the kernel's figures and sets the values; 0 or -errno. */
        int (*collect)(void);
        /* Frees what start made and stops the provider (CounterCleanup). */
        void (*stop)(void);
};

/* Defined by each plugin. */
extern const struct pv_provider pv_provider;

/* Logs through perflibd (stderr when run outside it). */
void pv_log(int priority, const char *format, ...) __attribute__((format(printf, 2, 3)));

#endif /* PV_PLUGIN_H */
