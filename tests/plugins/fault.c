/* SPDX-License-Identifier: MIT */
/*
 * The faulty test plugins, one fault per module, chosen at build time with
 * -DFAULT=FP_... (fault-plugin.h).  Each is a complete provider with GUIDs
 * of its own, publishing one instance whose counter 2 is by reference and
 * whose provider has a ControlCallback, so that every query of its
 * counterset reaches the plugin's code (PERF_COLLECT_START, then the
 * dereference): a fault "in collect" happens at the first query.  The
 * faults are written as naive plugin code writes them, and kept from the
 * optimiser, which would otherwise prove them away.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perflib-plugin.h"
#include "fault-plugin.h"

#if FAULT == FP_SEGV
#define NAME "fault-segv"
#elif FAULT == FP_ABORT
#define NAME "fault-abort"
#elif FAULT == FP_EXIT
#define NAME "fault-exit"
#elif FAULT == FP_STACK
#define NAME "fault-stack"
#elif FAULT == FP_HANG_START
#define NAME "fault-hang-start"
#elif FAULT == FP_HANG_COLLECT
#define NAME "fault-hang-collect"
#elif FAULT == FP_LEAK
#define NAME "fault-leak"
#elif FAULT == FP_SPIN
#define NAME "fault-spin"
#elif FAULT == FP_BAD_REF
#define NAME "fault-bad-ref"
#elif FAULT == FP_OOB
#define NAME "fault-oob"
#elif FAULT == FP_CRASH_FIRST
#define NAME "fault-crash-first"
#else
#error "FAULT must be one of fault-plugin.h's FP_*"
#endif

static const GUID provider = FP_PROVIDER_GUID(FAULT);

static struct {
        PERF_COUNTERSET_INFO set;
        PERF_COUNTER_INFO counters[2];
} template = {
        .set = {
                .CounterSetGuid = FP_CSET_GUID(FAULT),
                .ProviderGuid = FP_PROVIDER_GUID(FAULT),
                .NumCounters = 2,
                .InstanceType = PERF_COUNTERSET_MULTI_INSTANCES,
        },
        .counters = {
                { .CounterId = 1, .Type = PERF_COUNTER_LARGE_RAWCOUNT, .Size = 8 },
                { .CounterId = 2, .Type = PERF_COUNTER_LARGE_RAWCOUNT, .Size = 8,
                  .Attrib = PERF_ATTRIB_BY_REFERENCE },
        },
};

static ULONGLONG referenced = FP_VALUE_REF;

/* Read through a volatile object, so the compiler cannot see what it holds. */
static void *volatile leaked;

/*
 * A page no access reaches (kept mapped, so that nothing readable lands
 * there later); NULL if there is none.
 */
static void *no_access_page(void)
{
        static void *page;

        if (!page) {
                page = mmap(NULL, (size_t) sysconf(_SC_PAGESIZE), PROT_NONE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (page == MAP_FAILED)
                        page = NULL;
        }
        return page;
}

/* A real fault: not through NULL, which UBSan would turn into an exit of its own. */
static void segv(void)
{
        volatile int *p = no_access_page();

        if (p)
                *p = 1;
        else
                abort();
}

/* Each frame is used after the call returns: no tail call turns this into a loop. */
static __attribute__((noinline)) size_t recurse(volatile char *up, size_t depth)
{
        volatile char frame[1024];

        if (depth == 0)                 /* never: depth only grows */
                return 0;
        frame[0] = (char) (up[0] + 1);
        return recurse(frame, depth + 1) + (size_t) frame[0];
}

/* What a naive collector that buffers everything does. */
static void leak(void)
{
        void **p = malloc(FP_LEAK_BYTES);

        memset(p, 1, FP_LEAK_BYTES);    /* and crashes on NULL, once out of memory */
        *p = leaked;
        leaked = p;
}

/* Writes past a block larger than the thread caches take, then frees it. */
static void overrun(void)
{
        static volatile size_t past = 256;
        unsigned char *p = malloc(4096);

        memset(p, 0x41, 4096 + past);
        /* As if the block were read: writes to memory about to be freed are otherwise dropped. */
        __asm__ volatile("" : : "r"(p) : "memory");
        free(p);
}

/* The collects so far, this one included, across restarts; 0 without the file. */
static off_t count_collect(void)
{
        const char *path = getenv(FP_COUNT_ENV);
        int fd = path ? open(path, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;
        struct stat st = { 0 };

        if (fd < 0)
                return 0;
        if (write(fd, "c", 1) != 1 || fstat(fd, &st) < 0)
                st.st_size = 0;
        close(fd);
        return st.st_size;
}

static void collect_fault(void)
{
        char top = 0;

        switch (FAULT) {
        case FP_SEGV: segv(); break;
        case FP_ABORT: abort();
        case FP_EXIT: exit(FP_EXIT_STATUS);
        case FP_STACK: (void) recurse(&top, 1); break;
        case FP_HANG_COLLECT: for (;;) pause();
        case FP_LEAK: leak(); break;
        case FP_OOB: overrun(); break;
        case FP_CRASH_FIRST:
                if (count_collect() <= FP_CRASHES)
                        segv();
                break;
        default: break;
        }
}

static ULONG WINAPI control(ULONG request, PVOID buffer, ULONG size)
{
        (void) buffer, (void) size;
        if (request == PERF_COLLECT_START)
                collect_fault();
        return ERROR_SUCCESS;
}

static void *spin(void *arg)
{
        for (volatile unsigned long n = 0;; n++)
                ;
        return arg;
}

/* Where counter 2 points: its variable, or nowhere it can be read. */
static void *ref_target(void)
{
        return FAULT == FP_BAD_REF ? no_access_page() : &referenced;
}

static ULONG publish(HANDLE h)
{
        PPERF_COUNTERSET_INSTANCE inst;
        void *target = ref_target();
        ULONG status;

        if (!target)
                return ERROR_OUTOFMEMORY;
        status = PerfSetCounterSetInfo(h, &template.set, sizeof(template));
        if (status != ERROR_SUCCESS)
                return status;
        inst = PerfCreateInstanceUtf8(h, &template.set.CounterSetGuid, FP_INSTANCE, 1);
        if (!inst)
                return GetLastError();
        status = PerfSetULongLongCounterValue(h, inst, 1, FP_VALUE);
        return status == ERROR_SUCCESS ? PerfSetCounterRefValue(h, inst, 2, target) : status;
}

static uint32_t start(const struct perflib_plugin_services *svc, void **state)
{
        PERF_PROVIDER_CONTEXT ctx = { .ContextSize = sizeof(ctx), .ControlCallback = control };
        pthread_t t;
        HANDLE h;
        ULONG status;

        (void) svc;
        while (FAULT == FP_HANG_START)
                pause();
        status = PerfStartProviderEx((LPGUID) &provider, &ctx, &h);
        if (status != ERROR_SUCCESS)
                return status;
        status = publish(h);
        if (status == ERROR_SUCCESS && FAULT == FP_SPIN &&
            pthread_create(&t, NULL, spin, NULL) != 0)
                status = ERROR_OUTOFMEMORY;
        if (status != ERROR_SUCCESS) {
                (void) PerfStopProvider(h);
                return status;
        }
        *state = h;
        return ERROR_SUCCESS;
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
