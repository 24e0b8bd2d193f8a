/* SPDX-License-Identifier: MIT */
/* The provider runtime's private state, shared by provider.c and service.c. */
#ifndef PL_PROVIDER_H
#define PL_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "internal.h"

#define PL_PROVIDER_MAGIC UINT64_C(0x5256504c52455650)
#define PL_SVC_MAX_CLIENTS 64

/* A counter as the update path needs it. */
struct pl_counter {
        uint32_t id;
        uint32_t size;          /* 0 (no data), 4, 8, or a text length */
        uint32_t offset;        /* from the PERF_COUNTERSET_INSTANCE, not the data */
        uint32_t ref_index;     /* PL_SEG_NO_REF unless by reference */
};

struct pl_cset {
        GUID guid;
        uint32_t index;
        uint32_t instance_type;
        uint32_t num_counters;
        uint32_t num_refs;
        uint32_t data_size;
        uint32_t live;                  /* live instances */
        struct pl_counter *counters;
        uint32_t *ref_counters;         /* counter index of each by-reference counter */
        uint32_t id_mask;
        uint32_t *id_table;             /* counter index + 1, 0 = empty; keyed by id */
};

struct pl_free_class {
        uint32_t block_size;
        uint64_t head;                  /* offset of the first free block, 0 = none */
};

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

void pl_cset_free(struct pl_provider *p, struct pl_cset *c);

/*
 * The block of an instance pointer the API handed out; NULL when it cannot
 * be one.  Bounded by the constant heap end so the update path reads nothing
 * that changes.
 */
static inline struct pl_seg_instance *pl_instance_block(struct pl_provider *p,
                                                        PPERF_COUNTERSET_INSTANCE inst)
{
        uintptr_t a = (uintptr_t) inst, b = (uintptr_t) p->base;

        if (a < b + p->heap_lo + sizeof(struct pl_seg_instance) || a >= b + p->heap_hi ||
            (a - b) % PL_SEG_ALIGN != 0)
                return NULL;
        return (struct pl_seg_instance *) inst - 1;
}

/* Copies every referenced value into its slot; takes p->lock. */
void pl_provider_collect(struct pl_provider *p);

/* registry.c: every provider of this process, for in-process readers and fork. */
void pl_registry_add(struct pl_provider *p);
void pl_registry_remove(struct pl_provider *p);

/* service.c */
int pl_service_start(struct pl_provider *p, const char *runtime_dir);
void pl_service_stop(struct pl_provider *p);
/* In a forked child: the service belongs to the parent, drop every descriptor of it. */
void pl_service_forget(struct pl_provider *p);

#endif /* PL_PROVIDER_H */
