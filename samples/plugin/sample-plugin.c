/* SPDX-License-Identifier: MIT */
/*
 * sample-plugin: a provider in the style of Microsoft's user-mode counter
 * sample, built as a plugin that perflibd loads from its plugin directory.
 *
 * Its manifest, sample-plugin.man, has callback="custom": ctrpp's
 * CounterInitialize takes a notification callback, and perflibd tells the
 * provider what its consumers do.  The provider does no work in the
 * background: values are computed when a consumer collects
 * (PERF_COLLECT_START), from the time since the previous collection.
 *
 *   "Sample Plugin Workers" (multiple instances, worker-1 .. worker-4):
 *       Requests/sec, Bytes/sec   set with PerfSet...CounterValue on collection
 *       Queue Length              a reference counter: perflibd reads it from
 *                                 struct worker in this plugin's memory
 *   "Sample Plugin Collector" (single instance), all reference counters:
 *       Collections               PERF_COLLECT_START requests seen
 *       Counters In Use           PERF_ADD_COUNTER less PERF_REMOVE_COUNTER
 *       Instance Enumerations     PERF_ENUMERATE_INSTANCES requests seen
 *
 * Build and install (see samples/README.md):
 *      ctrpp sample-plugin.man
 *      cc -shared -fPIC -fvisibility=hidden -o sample-plugin.so sample-plugin.c \
 *         sample-plugin_strings.c $(pkg-config --cflags --libs perflib) -lm
 *      install -m 644 sample-plugin.so PLUGIN_DIR/
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <wchar.h>

#include <perflib.h>
#include <perflib-plugin.h>

#include "sample-plugin.h"

#define N_WORKERS 4
#define PI 3.14159265358979323846

struct worker {
        const wchar_t *name;
        PPERF_COUNTERSET_INSTANCE instance;
        double requests_per_s;          /* the worker's mean load */
        double backlog;                 /* fractional requests left over */
        ULONG queue_length;             /* Queue Length, by reference */
};

/*
 * One provider per loaded plugin, so the state is static, as in Windows'
 * samples: the notification callback has no context argument.  start()
 * sets it up afresh each time perflibd loads the plugin.
 */
static struct {
        const struct perflib_plugin_services *svc;
        struct worker workers[N_WORKERS];
        PPERF_COUNTERSET_INSTANCE collector;
        /* The collector's reference counters: read by perflibd at any time. */
        ULONGLONG collections;
        ULONG counters_in_use;
        ULONG enumerations;
        /* Guards the simulation: notifications may come from several queries. */
        pthread_mutex_t lock;
        double last_collect;            /* CLOCK_MONOTONIC seconds, 0: never */
} plugin = { .lock = PTHREAD_MUTEX_INITIALIZER };

static double monotonic_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/*
 * Moves one worker's simulated load on by dt seconds: its request rate
 * swings around its mean with a period of a minute, each request is about
 * 4 KiB, and the queue follows how far the rate is above the mean.
 */
static void worker_advance(struct worker *w, double now, double dt)
{
        double rate = w->requests_per_s * (1.0 + 0.5 * sin(now / 60.0 * 2.0 * PI));
        double requests = rate * dt + w->backlog;
        ULONG done = (ULONG) requests;

        w->backlog = requests - done;
        PerfIncrementULongCounterValue(SamplePlugin, w->instance, PLUGIN_WORKER_REQUESTS, done);
        PerfIncrementULongLongCounterValue(SamplePlugin, w->instance, PLUGIN_WORKER_BYTES,
                                           (ULONGLONG) done * 4096u);
        __atomic_store_n(&w->queue_length,
                         rate > w->requests_per_s ? (ULONG) (rate - w->requests_per_s) : 0,
                         __ATOMIC_RELAXED);
}

/* PERF_COLLECT_START: bring every value up to now, once per collection. */
static void collect(void)
{
        double now = monotonic_s(), dt;

        __atomic_fetch_add(&plugin.collections, 1, __ATOMIC_RELAXED);
        pthread_mutex_lock(&plugin.lock);
        dt = plugin.last_collect > 0.0 ? now - plugin.last_collect : 0.0;
        plugin.last_collect = now;
        for (int i = 0; i < N_WORKERS; i++)
                worker_advance(&plugin.workers[i], now, dt);
        pthread_mutex_unlock(&plugin.lock);
}

/* PERF_ADD_COUNTER / PERF_REMOVE_COUNTER: which counter of which instance. */
static void counter_changed(const char *what, const void *buffer, ULONG size, int delta)
{
        const PERF_COUNTER_IDENTITY *id = buffer;
        const wchar_t *instance = L"";

        if (delta > 0)
                __atomic_fetch_add(&plugin.counters_in_use, 1, __ATOMIC_RELAXED);
        else if (__atomic_load_n(&plugin.counters_in_use, __ATOMIC_RELAXED) > 0)
                __atomic_fetch_sub(&plugin.counters_in_use, 1, __ATOMIC_RELAXED);
        if (!buffer || size < sizeof(*id))
                return;
        /* The name follows the identity; the buffer is only trusted as far as size says. */
        if (id->NameOffset >= sizeof(*id) && id->NameOffset < size &&
            (size - id->NameOffset) % sizeof(wchar_t) == 0 &&
            wmemchr((const wchar_t *) ((const char *) buffer + id->NameOffset), L'\0',
                    (size - id->NameOffset) / sizeof(wchar_t)))
                instance = (const wchar_t *) ((const char *) buffer + id->NameOffset);
        plugin.svc->log(plugin.svc, LOG_DEBUG, "%s: counter %lu, instance \"%ls\"", what,
                        (unsigned long) id->CounterId, instance);
}

/*
 * The notification callback named in CounterInitialize.  perflibd calls it
 * on the provider's service thread, around each consumer request that
 * reaches this provider's countersets.
 */
static ULONG WINAPI notification_callback(ULONG RequestCode, PVOID Buffer, ULONG BufferSize)
{
        switch (RequestCode) {
        case PERF_ADD_COUNTER:
                counter_changed("PERF_ADD_COUNTER", Buffer, BufferSize, +1);
                break;
        case PERF_REMOVE_COUNTER:
                counter_changed("PERF_REMOVE_COUNTER", Buffer, BufferSize, -1);
                break;
        case PERF_ENUMERATE_INSTANCES:
                /* A provider whose instances come and go would refresh them here. */
                __atomic_fetch_add(&plugin.enumerations, 1, __ATOMIC_RELAXED);
                break;
        case PERF_COLLECT_START:
                collect();
                break;
        case PERF_COLLECT_END:
                /* Nothing was held for the collection, so nothing to release. */
                break;
        default:
                return ERROR_NOT_SUPPORTED;
        }
        return ERROR_SUCCESS;
}

static ULONG create_instances(void)
{
        static const wchar_t *const names[N_WORKERS] = {
                L"worker-1", L"worker-2", L"worker-3", L"worker-4",
        };
        ULONG status;

        for (ULONG i = 0; i < N_WORKERS; i++) {
                struct worker *w = &plugin.workers[i];

                w->name = names[i];
                w->requests_per_s = 25.0 * (i + 1);
                w->instance = PerfCreateInstance(SamplePlugin, &PluginWorkersGuid, w->name, i);
                if (!w->instance)
                        return GetLastError();
                status = PerfSetCounterRefValue(SamplePlugin, w->instance,
                                                PLUGIN_WORKER_QUEUE_LENGTH, &w->queue_length);
                if (status != ERROR_SUCCESS)
                        return status;
        }
        plugin.collector = PerfCreateInstance(SamplePlugin, &PluginCollectorGuid, L"_Default", 0);
        if (!plugin.collector)
                return GetLastError();
        status = PerfSetCounterRefValue(SamplePlugin, plugin.collector, PLUGIN_COLLECTIONS,
                                        &plugin.collections);
        if (status == ERROR_SUCCESS)
                status = PerfSetCounterRefValue(SamplePlugin, plugin.collector,
                                                PLUGIN_COUNTERS_IN_USE, &plugin.counters_in_use);
        if (status == ERROR_SUCCESS)
                status = PerfSetCounterRefValue(SamplePlugin, plugin.collector,
                                                PLUGIN_ENUMERATIONS, &plugin.enumerations);
        return status;
}

static uint32_t start(const struct perflib_plugin_services *svc, void **state)
{
        ULONG status;

        memset(plugin.workers, 0, sizeof(plugin.workers));
        plugin.svc = svc;
        plugin.collector = NULL;
        plugin.collections = 0;
        plugin.counters_in_use = 0;
        plugin.enumerations = 0;
        plugin.last_collect = 0.0;

        status = CounterInitialize(notification_callback, NULL, NULL, NULL);
        if (status != ERROR_SUCCESS) {
                svc->log(svc, LOG_ERR, "CounterInitialize failed: Win32 error %lu",
                         (unsigned long) status);
                return status;
        }
        status = create_instances();
        if (status != ERROR_SUCCESS) {
                svc->log(svc, LOG_ERR, "creating the instances failed: Win32 error %lu",
                         (unsigned long) status);
                /* Stopping the provider deletes the instances made so far. */
                CounterCleanup();
                return status;
        }
        svc->log(svc, LOG_INFO, "publishing \"Sample Plugin Workers\" (%d instances) and "
                 "\"Sample Plugin Collector\"", N_WORKERS);
        *state = NULL;
        return ERROR_SUCCESS;
}

static void stop(void *state)
{
        (void) state;
        /* Returns once no notification runs any more; the references are unused after. */
        CounterCleanup();
}

PERFLIB_PLUGIN_EXPORT const struct perflib_plugin *perflib_plugin_entry_v1(void)
{
        static const struct perflib_plugin descriptor = {
                .abi = PERFLIB_PLUGIN_ABI,
                .size = sizeof(descriptor),
                .name = "sample-plugin",
                .start = start,
                .stop = stop,
        };

        return &descriptor;
}
