/* SPDX-License-Identifier: MIT */
/*
 * A provider's lifetime (PerfStartProvider[Ex], PerfStopProvider) and its
 * segment: a sealed memfd, laid out once at start.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "align.h"
#include "cset.h"
#include "proclist.h"
#include "runtime.h"
#include "service.h"
#include "state.h"

#define DEFAULT_SEGMENT_SIZE (UINT64_C(256) << 20)
#define MIN_SEGMENT_SIZE (UINT64_C(1) << 20)

/* Parses $PERFLIB_SEGMENT_SIZE ("64M", "1G", bytes); the default when unset or bad. */
static uint64_t segment_size_from_env(void)
{
        const char *e = getenv("PERFLIB_SEGMENT_SIZE");
        char *end;
        unsigned long long v;

        if (!e || !*e)
                return DEFAULT_SEGMENT_SIZE;
        errno = 0;
        v = strtoull(e, &end, 10);
        if (errno || end == e)
                return DEFAULT_SEGMENT_SIZE;
        switch (*end) {
        case 'G': case 'g': v <<= 10; /* fall through */
        case 'M': case 'm': v <<= 10; /* fall through */
        case 'K': case 'k': v <<= 10; end++; break;
        case '\0': break;
        default: return DEFAULT_SEGMENT_SIZE;
        }
        if (*end || v < MIN_SEGMENT_SIZE || v > PL_SEG_MAX_SIZE)
                return DEFAULT_SEGMENT_SIZE;
        return pl_align_up(v, 4096);
}

/*
 * A sealed memfd: readers can neither shrink it under us nor see it shrink,
 * so a mapping of it never faults.  Its pages are allocated on first touch.
 */
static int segment_create(struct pl_provider *p)
{
        char path[64];
        struct stat st;

        p->size = segment_size_from_env();
        p->memfd = memfd_create("perflib-segment", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (p->memfd < 0)
                return -errno;
        if (ftruncate(p->memfd, (off_t) p->size) < 0 ||
            fcntl(p->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0 ||
            fstat(p->memfd, &st) < 0)
                return -errno;
        p->dev = (uint64_t) st.st_dev;
        p->ino = (uint64_t) st.st_ino;
        snprintf(path, sizeof(path), "/proc/self/fd/%d", p->memfd);
        p->ro_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (p->ro_fd < 0)
                return -errno;
        p->base = mmap(NULL, p->size, PROT_READ | PROT_WRITE, MAP_SHARED, p->memfd, 0);
        if (p->base == MAP_FAILED) {
                p->base = NULL;
                return -errno;
        }
        return 0;
}

static void segment_layout(struct pl_provider *p)
{
        struct pl_seg_header *h = (struct pl_seg_header *) p->base;
        struct timespec ts;
        uint64_t dir_cap = p->size / 256;

        if (dir_cap > PL_SEG_MAX_INSTANCES)
                dir_cap = PL_SEG_MAX_INSTANCES;
        clock_gettime(CLOCK_REALTIME, &ts);
        h->magic = PL_SEG_MAGIC;
        h->version = PL_SEG_VERSION;
        h->header_size = sizeof(*h);
        h->segment_size = p->size;
        memcpy(h->provider_guid, &p->guid, 16);
        h->pid = (uint32_t) getpid();
        h->flags = p->callback ? PL_SEG_F_CALLBACK : 0;
        h->created_realtime_ns = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
        h->cset_table_off = sizeof(*h);
        h->cset_capacity = PL_SEG_MAX_COUNTERSETS;
        h->dir_off = pl_align_up(h->cset_table_off + 8u * PL_SEG_MAX_COUNTERSETS, 4096);
        h->dir_capacity = (uint32_t) dir_cap;
        h->heap_off = pl_align_up(h->dir_off + 8u * dir_cap, 4096);
        h->desc_off = 0;

        p->hdr = h;
        p->cset_table = (uint64_t *) (p->base + h->cset_table_off);
        p->dir = (uint64_t *) (p->base + h->dir_off);
        p->heap_lo = h->heap_off;
        p->heap_hi = p->size;
        p->heap_top = p->heap_lo;
}

static void provider_free(struct pl_provider *p)
{
        if (!p)
                return;
        for (uint32_t i = 0; i < p->n_csets; i++)
                pl_cset_free(p, p->csets[i]);
        for (uint32_t i = 0; p->refs && i < p->cap_refs; i++)
                pl_free(p, p->refs[i]);
        pl_free(p, p->refs);
        pl_free(p, p->csets);
        pl_free(p, p->free_slots);
        pl_free(p, p->classes);
        pl_free(p, p->index);
        pl_free(p, p->sock_path);
        if (p->base)
                munmap(p->base, p->size);
        if (p->ro_fd >= 0)
                close(p->ro_fd);
        if (p->memfd >= 0)
                close(p->memfd);
        pthread_mutex_destroy(&p->lock);
        p->magic = 0;
        pl_free(p, p);
}

static ULONG win32_from_errno(int r)
{
        switch (r) {
        case -ENOMEM: case -ENOSPC: case -EMFILE: case -ENFILE:
                return ERROR_OUTOFMEMORY;
        case -EACCES: case -EPERM: case -EROFS:
                return ERROR_ACCESS_DENIED;
        case -EINVAL:
                return ERROR_INVALID_PARAMETER;
        default:
                return ERROR_GEN_FAILURE;
        }
}

static ULONG provider_start(struct pl_provider *p)
{
        char *dir = NULL;
        int r;

        r = segment_create(p);
        if (r < 0)
                return win32_from_errno(r);
        segment_layout(p);
        p->csets = pl_alloc0(p, sizeof(*p->csets) * PL_SEG_MAX_COUNTERSETS);
        if (!p->csets)
                return ERROR_OUTOFMEMORY;
        r = pl_runtime_dir(&dir);
        if (r >= 0)
                r = pl_service_start(p, dir);
        free(dir);
        return r < 0 ? win32_from_errno(r) : ERROR_SUCCESS;
}

static ULONG check_context(PPERF_PROVIDER_CONTEXT ctx)
{
        if (!ctx)
                return ERROR_SUCCESS;
        if (ctx->ContextSize < sizeof(PERF_PROVIDER_CONTEXT))
                return ERROR_INVALID_PARAMETER;
        /* Both or neither: memory from one allocator must go back to it. */
        if (!ctx->MemAllocRoutine != !ctx->MemFreeRoutine)
                return ERROR_INVALID_PARAMETER;
        return ERROR_SUCCESS;
}

ULONG PerfStartProviderEx(LPGUID ProviderGuid, PPERF_PROVIDER_CONTEXT ProviderContext,
                          HANDLE *Provider)
{
        struct pl_provider *p;
        PERF_MEM_ALLOC ma = NULL;
        ULONG err;

        if (!ProviderGuid || !Provider)
                return ERROR_INVALID_PARAMETER;
        err = check_context(ProviderContext);
        if (err != ERROR_SUCCESS)
                return err;
        if (ProviderContext)
                ma = ProviderContext->MemAllocRoutine;
        p = ma ? ma(sizeof(*p), ProviderContext->pMemContext) : malloc(sizeof(*p));
        if (!p)
                return ERROR_OUTOFMEMORY;
        memset(p, 0, sizeof(*p));
        p->magic = PL_PROVIDER_MAGIC;
        p->guid = *ProviderGuid;
        p->memfd = p->ro_fd = p->listen_fd = p->wake_fd = p->leftover_slot = -1;
        if (ProviderContext) {
                p->callback = ProviderContext->ControlCallback;
                p->mem_alloc = ma;
                p->mem_free = ProviderContext->MemFreeRoutine;
                p->mem_ctx = ProviderContext->pMemContext;
        }
        pthread_mutex_init(&p->lock, NULL);
        err = provider_start(p);
        if (err != ERROR_SUCCESS) {
                pl_service_stop(p);
                provider_free(p);
                return err;
        }
        pl_proclist_add(p);
        *Provider = p;
        return ERROR_SUCCESS;
}

ULONG PerfStartProvider(LPGUID ProviderGuid, PERFLIBREQUEST ControlCallback, HANDLE *phProvider)
{
        PERF_PROVIDER_CONTEXT ctx = {
                .ContextSize = sizeof(ctx),
                .ControlCallback = ControlCallback,
        };
        return PerfStartProviderEx(ProviderGuid, &ctx, phProvider);
}

ULONG PerfStopProvider(HANDLE ProviderHandle)
{
        struct pl_provider *p = ProviderHandle;

        if (!p || p->magic != PL_PROVIDER_MAGIC)
                return ERROR_INVALID_PARAMETER;
        __atomic_or_fetch(&p->hdr->flags, PL_SEG_F_STOPPING, __ATOMIC_RELEASE);
        pl_proclist_remove(p);
        pl_service_stop(p);
        provider_free(p);
        return ERROR_SUCCESS;
}
