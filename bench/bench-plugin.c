/* SPDX-License-Identifier: MIT */
/*
 * The plugin bench-perflibd --plugin measures: BENCH_PLUGIN_INSTANCES
 * instances x 1 counter, and one instance of a provider with a collect
 * callback, published by bench_publish as the provider processes it is
 * compared with publish theirs.
 */
#include "bench-publish.h"
#include "perflib-plugin.h"

struct handles {
        HANDLE plain, callback;
};

static uint32_t start(const struct perflib_plugin_services *svc, void **state)
{
        static const struct bench_shape plain = {
                BENCH_PLUGIN_PROV, BENCH_PLUGIN_CSET, BENCH_PLUGIN_INSTANCES, 1, NULL,
        };
        static const struct bench_shape callback = {
                BENCH_PLUGIN_CB_PROV, BENCH_PLUGIN_CB_CSET, 1, 1, bench_answer,
        };
        static struct handles h;
        ULONG status;

        (void) svc;
        status = bench_publish(&plain, &h.plain);
        if (status != ERROR_SUCCESS)
                return status;
        status = bench_publish(&callback, &h.callback);
        if (status != ERROR_SUCCESS) {
                (void) PerfStopProvider(h.plain);
                return status;
        }
        *state = &h;
        return ERROR_SUCCESS;
}

static void stop(void *state)
{
        struct handles *h = state;

        (void) PerfStopProvider(h->callback);
        (void) PerfStopProvider(h->plain);
}

PERFLIB_PLUGIN_EXPORT const struct perflib_plugin *perflib_plugin_entry_v1(void)
{
        static const struct perflib_plugin plugin = {
                .abi = PERFLIB_PLUGIN_ABI,
                .size = sizeof(plugin),
                .name = "bench-plugin",
                .start = start,
                .stop = stop,
        };

        return &plugin;
}
