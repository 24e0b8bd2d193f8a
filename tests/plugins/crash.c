/* SPDX-License-Identifier: MIT */
/*
 * Test plugins that kill their host from start, for test-plugin-host (the
 * fault suite against perflibd is fault.c's), chosen at build time:
 *   CRASH_SEGV     writes to a page it may not write: SIGSEGV, a real
 *                  fault (not raise(3)), and not a NULL pointer, which
 *                  UBSan would turn into an abort
 *   CRASH_LEAK     allocates until malloc fails, then aborts, as a
 *                  program that cannot go on without memory does
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perflib-plugin.h"

#define CHUNK (1u << 20)

static uint32_t start(const struct perflib_plugin_services *svc, void **state)
{
#ifdef CRASH_SEGV
        volatile char *page = mmap(NULL, (size_t) sysconf(_SC_PAGESIZE), PROT_READ,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (page != MAP_FAILED)
                page[0] = 1;
#else
        /* Chained, so that nothing can tell the blocks are never used. */
        static void *chain;

        for (;;) {
                void **block = malloc(CHUNK);

                if (!block)
                        break;
                *block = chain;
                chain = block;
        }
#endif
        (void) svc, (void) state;
        abort();
}

static void stop(void *state)
{
        (void) state;
        abort();
}

PERFLIB_PLUGIN_EXPORT const struct perflib_plugin *perflib_plugin_entry_v1(void)
{
        static const struct perflib_plugin plugin = {
                .abi = PERFLIB_PLUGIN_ABI,
                .size = sizeof(plugin),
                .name = "crash",
                .start = start,
                .stop = stop,
        };

        return &plugin;
}
