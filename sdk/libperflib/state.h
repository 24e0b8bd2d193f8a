/* SPDX-License-Identifier: MIT */
/*
 * A provider's state (struct pl_provider, behind its HANDLE), which every
 * part of the provider runtime works on, and the allocators of its memory
 * (state.c).  The types hanging off it belong to the parts that own them:
 * struct pl_cset to cset.h, struct pl_free_class to instance.c.  Hidden.
 */
#ifndef PL_STATE_H
#define PL_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "perflib.h"
#include "segment.h"

struct pl_cset;
struct pl_free_class;

#define PL_PROVIDER_MAGIC UINT64_C(0x5256504c52455650)
#define PL_SVC_MAX_CLIENTS 64

struct pl_provider {
        uint64_t magic;
        GUID guid;
        PERFLIBREQUEST callback;
        PERF_MEM_ALLOC mem_alloc;
        PERF_MEM_FREE mem_free;
        void *mem_ctx;

        pthread_mutex_t lock;           /* everything below but the update path */

        int memfd;
        int ro_fd;                      /* read-only reopen handed to readers */
        uint64_t dev, ino;
        uint8_t *base;
        uint64_t size;
        struct pl_seg_header *hdr;
        uint64_t *dir;                  /* in the segment */
        uint64_t *cset_table;           /* in the segment */
        uint64_t heap_lo, heap_hi, heap_top;

        struct pl_cset **csets;         /* PL_SEG_MAX_COUNTERSETS entries */
        uint32_t n_csets;

        uint32_t *free_slots;
        uint32_t n_free_slots, cap_free_slots;
        struct pl_free_class *classes;
        uint32_t n_classes, cap_classes;

        uint32_t *index;                /* dir slot + 1, 0 = empty */
        uint32_t index_mask, index_count;

        void ***refs;                   /* per dir slot: addresses of by-ref counters */
        uint32_t cap_refs;

        /* collect service; clients[] changes under lock */
        char *sock_path;
        int leftover_slot;              /* pl_leftover_remember's, or -1 */
        int listen_fd;
        int wake_fd;
        int clients[PL_SVC_MAX_CLIENTS];
        uint32_t n_clients;
        pthread_t thread;
        bool thread_started;

        struct pl_provider *next;       /* process-wide list, for in-process readers */
};

void *pl_alloc(struct pl_provider *p, size_t n);
void *pl_alloc0(struct pl_provider *p, size_t n);
void pl_free(struct pl_provider *p, void *ptr);

/* Bump-allocates n bytes (rounded to 8) of segment heap; 0 when full. */
uint64_t pl_heap_take(struct pl_provider *p, uint64_t n);

#endif /* PL_STATE_H */
