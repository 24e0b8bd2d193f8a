/* SPDX-License-Identifier: MIT */
/*
 * The plugin glue every Linux provider shares (plugin.h).  The callback has
 * no context argument (Windows' PERFLIBREQUEST), so the state is this
 * file's: each plugin is its own shared object with its own copy.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "perflib-plugin.h"
#include "plugin.h"

static const struct perflib_plugin_services *services;
/* Serialises collections (the provider's service thread) against start and stop. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool running;
static int last_error;

void pv_log(int priority, const char *format, ...)
{
        char text[1024];
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(text, sizeof(text), format, ap);
        va_end(ap);
        if (services && services->log)
                services->log(services, priority, "%s", text);
        else
                fprintf(stderr, "%s: %s\n", pv_provider.name, text);
}

/* Caller holds lock.  A failure is logged when it starts, not on every query. */
static void collect_locked(void)
{
        int r = pv_provider.collect();

        if (r < 0 && r != last_error)
                pv_log(LOG_WARNING, "collection failed: %s", strerror(-r));
        last_error = r;
}

static ULONG WINAPI callback(ULONG code, PVOID buffer, ULONG size)
{
        if (code != PERF_COLLECT_START && code != PERF_ENUMERATE_INSTANCES)
                return ERROR_SUCCESS;
        pthread_mutex_lock(&lock);
        if (running)
                collect_locked();
        pthread_mutex_unlock(&lock);
        return ERROR_SUCCESS;
}

static uint32_t start(const struct perflib_plugin_services *svc, void **state)
{
        ULONG status;

        pthread_mutex_lock(&lock);
        services = svc;
        last_error = 0;
        status = pv_provider.start(callback);
        if (status == ERROR_SUCCESS) {
                running = true;
                collect_locked();
        }
        pthread_mutex_unlock(&lock);
        *state = NULL;
        return status;
}

static void stop(void *state)
{
        pthread_mutex_lock(&lock);
        running = false;
        pthread_mutex_unlock(&lock);
        /* Stops the service thread first: no callback runs once this returns. */
        pv_provider.stop();
        services = NULL;
}

PERFLIB_PLUGIN_EXPORT const struct perflib_plugin *perflib_plugin_entry_v1(void)
{
        static const struct perflib_plugin plugin = {
                .abi = PERFLIB_PLUGIN_ABI,
                .size = sizeof(plugin),
                .start = start,
                .stop = stop,
        };

        return &plugin;
}
