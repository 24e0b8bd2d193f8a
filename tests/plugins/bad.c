/* SPDX-License-Identifier: MIT */
/*
 * The bad test plugins, one per flaw, chosen at build time:
 *   BAD_ABI        a descriptor of another ABI
 *   BAD_SIZE       a descriptor smaller than ABI 1's
 *   BAD_NO_ENTRY   no PERFLIB_PLUGIN_ENTRY_SYMBOL (a near miss instead)
 *   BAD_NULL       the entry point returns NULL
 *   BAD_NO_STOP    no stop function
 *   BAD_START      start fails (after starting and stopping a provider,
 *                  and logging at LOG_EMERG)
 *   BAD_UNDEFINED  calls a function that no library defines
 * The first two place their 8-byte descriptor right before an unmapped
 * page: a loader that reads past abi and size crashes the test.  The
 * others' stop aborts, and so does their start unless it is the flaw.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <syslog.h>
#include <unistd.h>

#include "perflib-plugin.h"
#include "test-plugin.h"

#if defined(BAD_ABI) || defined(BAD_SIZE)
struct header {
        uint32_t abi;
        uint32_t size;
};

static void *pages;
static size_t page_size;

static struct header *guarded_header(void)
{
        page_size = (size_t) sysconf(_SC_PAGESIZE);
        pages = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (pages == MAP_FAILED || mprotect((char *) pages + page_size, page_size, PROT_NONE) < 0)
                abort();
        return (struct header *) ((char *) pages + page_size - sizeof(struct header));
}

static void __attribute__((destructor)) unmap_header(void)
{
        if (pages && pages != MAP_FAILED)
                (void) munmap(pages, 2 * page_size);
}

PERFLIB_PLUGIN_EXPORT const struct perflib_plugin *perflib_plugin_entry_v1(void)
{
        struct header *h = guarded_header();

#ifdef BAD_ABI
        *h = (struct header) {
                .abi = PERFLIB_PLUGIN_ABI + 1, .size = sizeof(struct perflib_plugin),
        };
#else
        *h = (struct header) { .abi = PERFLIB_PLUGIN_ABI, .size = sizeof(struct header) };
#endif
        return (const struct perflib_plugin *) (void *) h;
}

#else /* the flaws past the header */

static const GUID provider = { 0x9106e0ff, 0x7e57, 0x4a11, { 1, 2, 3, 4, 5, 6, 7, 8 } };

#ifdef BAD_UNDEFINED
void tp_no_such_function(void);
#endif

static uint32_t start(const struct perflib_plugin_services *svc, void **state)
{
#ifdef BAD_START
        HANDLE h;

        if (PerfStartProvider((LPGUID) &provider, NULL, &h) != ERROR_SUCCESS)
                return ERROR_INVALID_PARAMETER;
        (void) PerfStopProvider(h);
        /* The server keeps the priority below LOG_ALERT and drops the facility. */
        svc->log(svc, LOG_DAEMON | LOG_EMERG, "%s", TP_START_FAILS);
        return ERROR_ACCESS_DENIED;
#else
#ifdef BAD_UNDEFINED
        tp_no_such_function();
#endif
        (void) provider, (void) svc, (void) state;
        abort();
#endif
}

#ifndef BAD_NO_STOP
static void stop(void *state)
{
        (void) state;
        abort();
}
#endif

#ifdef BAD_NO_ENTRY
PERFLIB_PLUGIN_EXPORT const struct perflib_plugin *perflib_plugin_entry_v0(void);
PERFLIB_PLUGIN_EXPORT const struct perflib_plugin *perflib_plugin_entry_v0(void)
#else
PERFLIB_PLUGIN_EXPORT const struct perflib_plugin *perflib_plugin_entry_v1(void)
#endif
{
        static const struct perflib_plugin plugin = {
                .abi = PERFLIB_PLUGIN_ABI,
                .size = sizeof(plugin),
                .name = "bad",
                .start = start,
#ifndef BAD_NO_STOP
                .stop = stop,
#endif
        };

#ifdef BAD_NULL
        (void) plugin;
        return NULL;
#else
        return &plugin;
#endif
}
#endif
