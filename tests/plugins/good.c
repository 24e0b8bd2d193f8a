/* SPDX-License-Identifier: MIT */
/*
 * The good test plugin (TP_VARIANT 1, 2 or 3; TP_CSET_VARIANT and TP_STAMP
 * optional): one provider with one counterset of three counters, the last
 * one by reference, and one instance with its values set.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "perflib-plugin.h"
#include "test-plugin.h"

#ifndef TP_CSET_VARIANT
#define TP_CSET_VARIANT TP_VARIANT
#endif
#ifndef TP_STAMP
#define TP_STAMP 0
#endif

#if TP_VARIANT == 1
#define NAME "good"
#elif TP_VARIANT == 2
#define NAME "good2"
#else
#define NAME "good-cset"
#endif

static const GUID provider = TP_PROVIDER_GUID(TP_VARIANT);

static struct {
        PERF_COUNTERSET_INFO set;
        PERF_COUNTER_INFO counters[3];
} template = {
        .set = {
                .CounterSetGuid = TP_CSET_GUID(TP_CSET_VARIANT),
                .ProviderGuid = TP_PROVIDER_GUID(TP_VARIANT),
                .NumCounters = 3,
                .InstanceType = PERF_COUNTERSET_MULTI_INSTANCES,
        },
        .counters = {
                { .CounterId = 1, .Type = PERF_COUNTER_RAWCOUNT, .Size = 4 },
                { .CounterId = 2, .Type = PERF_COUNTER_LARGE_RAWCOUNT, .Size = 8 },
                { .CounterId = 3, .Type = PERF_COUNTER_LARGE_RAWCOUNT, .Size = 8,
                  .Attrib = PERF_ATTRIB_BY_REFERENCE },
        },
};

static ULONGLONG referenced;

#ifdef TP_PAD_BYTES
/* Bulk, in the file: a copy of it takes long enough to be seen half done. */
__attribute__((used)) static const unsigned char pad[TP_PAD_BYTES] = { 1 };
#endif

/* Counts the starts across loads, which share nothing else. */
static void note_start(void)
{
        const char *path = getenv(TP_STARTS_ENV);
        int fd = path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;

        if (fd >= 0) {
                (void) !write(fd, NAME "\n", strlen(NAME "\n"));
                close(fd);
        }
}

static uint32_t start(const struct perflib_plugin_services *svc, void **state)
{
        PPERF_COUNTERSET_INSTANCE inst;
        HANDLE h;
        ULONG status;

        status = PerfStartProvider((LPGUID) &provider, NULL, &h);
        if (status != ERROR_SUCCESS)
                return status;
        status = PerfSetCounterSetInfo(h, &template.set, sizeof(template));
        if (status != ERROR_SUCCESS)
                goto fail;
        inst = PerfCreateInstance(h, &template.set.CounterSetGuid, TP_INSTANCE_NAME,
                                  TP_STAMPED_ID(TP_STAMP));
        if (!inst) {
                status = GetLastError();
                goto fail;
        }
        status = PerfSetULongCounterValue(h, inst, 1, TP_VALUE_1(TP_VARIANT));
        if (status == ERROR_SUCCESS)
                status = PerfSetULongLongCounterValue(h, inst, 2, TP_VALUE_2);
        if (status == ERROR_SUCCESS)
                status = PerfSetCounterRefValue(h, inst, 3, &referenced);
        if (status != ERROR_SUCCESS)
                goto fail;
        /* Only a reader that dereferences the counter sees this. */
        referenced = TP_VALUE_REF;
        svc->log(svc, LOG_NOTICE, "%s (runtime dir %s)", TP_HELLO, svc->runtime_dir);
        note_start();
        *state = h;
        return ERROR_SUCCESS;
fail:
        (void) PerfStopProvider(h);
        return status;
}

static void stop(void *state)
{
        (void) PerfStopProvider(state);
}

PERFLIB_PLUGIN_EXPORT const struct perflib_plugin *perflib_plugin_entry_v1(void)
{
        static const struct perflib_plugin plugin = {
                .abi = PERFLIB_PLUGIN_ABI,
                .size = sizeof(plugin),
                .name = NAME,
                .start = start,
                .stop = stop,
        };

        return &plugin;
}
