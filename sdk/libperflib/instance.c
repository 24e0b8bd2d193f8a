/* SPDX-License-Identifier: MIT */
/*
 * Instances: creating, finding and deleting instance blocks in the segment.
 * All of it runs under the provider lock; readers follow the publication
 * protocol of segment.h (seq, then the directory entry).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "cset.h"
#include "instance.h"
#include "state.h"
#include "utf.h"

/* The freed blocks of one size, in a list threaded through them. */
struct pl_free_class {
        uint32_t block_size;
        uint64_t head;                  /* offset of the first free block, 0 = none */
};

struct inst_key {
        uint32_t cset_index;
        uint32_t id;
        const wchar_t *name;
        uint32_t len;           /* characters, without the NUL */
};

static uint32_t key_hash(const struct inst_key *k)
{
        uint32_t h = 2166136261u ^ k->cset_index;

        h = (h ^ k->id) * 16777619u;
        for (uint32_t i = 0; i < k->len; i++)
                h = (h ^ (uint32_t) k->name[i]) * 16777619u;
        return h ^ (h >> 15);
}

static struct pl_seg_instance *slot_block(struct pl_provider *p, uint32_t slot)
{
        return (struct pl_seg_instance *) (p->base + (p->dir[slot] & PL_DIR_OFFSET_MASK));
}

static uint32_t slot_cset(struct pl_provider *p, uint32_t slot)
{
        return (uint32_t) (p->dir[slot] >> PL_DIR_CSET_SHIFT);
}

static uint32_t block_size_for(const struct pl_cset *c, uint32_t name_bytes)
{
        return (uint32_t) (sizeof(struct pl_seg_instance) + sizeof(PERF_COUNTERSET_INSTANCE) +
                           c->data_size + pl_align_up(name_bytes, PL_SEG_ALIGN));
}

static bool key_matches(struct pl_provider *p, uint32_t slot, const struct inst_key *k)
{
        struct pl_seg_instance *si = slot_block(p, slot);
        PERF_COUNTERSET_INSTANCE *ci = (PERF_COUNTERSET_INSTANCE *) (si + 1);

        return slot_cset(p, slot) == k->cset_index && ci->InstanceId == k->id &&
               ci->InstanceNameSize == (k->len + 1) * sizeof(wchar_t) &&
               wmemcmp((const wchar_t *) ((uint8_t *) ci + ci->InstanceNameOffset),
                       k->name, k->len) == 0;
}

static struct inst_key block_key(struct pl_provider *p, uint32_t slot)
{
        struct pl_seg_instance *si = slot_block(p, slot);
        PERF_COUNTERSET_INSTANCE *ci = (PERF_COUNTERSET_INSTANCE *) (si + 1);

        return (struct inst_key) {
                .cset_index = slot_cset(p, slot),
                .id = ci->InstanceId,
                .name = (const wchar_t *) ((uint8_t *) ci + ci->InstanceNameOffset),
                .len = ci->InstanceNameSize / sizeof(wchar_t) - 1,
        };
}

/* Linear probing; returns the index position holding k, or of the empty end. */
static uint32_t index_probe(struct pl_provider *p, const struct inst_key *k, bool *ret_found)
{
        uint32_t i = key_hash(k) & p->index_mask;

        for (;; i = (i + 1) & p->index_mask) {
                uint32_t e = p->index[i];
                if (e == 0 || key_matches(p, e - 1, k)) {
                        *ret_found = e != 0;
                        return i;
                }
        }
}

static int index_grow(struct pl_provider *p)
{
        uint32_t old_cap = p->index ? p->index_mask + 1 : 0;
        uint32_t cap = old_cap ? old_cap * 2 : 1024;
        uint32_t *old = p->index;

        p->index = pl_alloc0(p, sizeof(uint32_t) * cap);
        if (!p->index) {
                p->index = old;
                return -ENOMEM;
        }
        p->index_mask = cap - 1;
        for (uint32_t i = 0; i < old_cap; i++) {
                if (old[i] == 0)
                        continue;
                struct inst_key k = block_key(p, old[i] - 1);
                bool found;
                p->index[index_probe(p, &k, &found)] = old[i];
        }
        pl_free(p, old);
        return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void index_remove(struct pl_provider *p, uint32_t pos)
{
        uint32_t hole = pos;

        for (uint32_t i = (pos + 1) & p->index_mask; p->index[i]; i = (i + 1) & p->index_mask) {
                struct inst_key k = block_key(p, p->index[i] - 1);
                uint32_t home = key_hash(&k) & p->index_mask;
                if (((i - home) & p->index_mask) >= ((i - hole) & p->index_mask)) {
                        p->index[hole] = p->index[i];
                        hole = i;
                }
        }
        p->index[hole] = 0;
        p->index_count--;
}

static struct pl_free_class *free_class(struct pl_provider *p, uint32_t block_size, bool create)
{
        for (uint32_t i = 0; i < p->n_classes; i++)
                if (p->classes[i].block_size == block_size)
                        return &p->classes[i];
        if (!create)
                return NULL;
        if (p->n_classes == p->cap_classes) {
                uint32_t cap = p->cap_classes ? p->cap_classes * 2 : 8;
                struct pl_free_class *n = pl_alloc(p, sizeof(*n) * cap);
                if (!n)
                        return NULL;
                if (p->classes)
                        memcpy(n, p->classes, sizeof(*n) * p->n_classes);
                pl_free(p, p->classes);
                p->classes = n;
                p->cap_classes = cap;
        }
        p->classes[p->n_classes] = (struct pl_free_class) { .block_size = block_size };
        return &p->classes[p->n_classes++];
}

/* The smallest block an instance can have: header, 8 bytes of data, an empty name. */
#define PL_MIN_BLOCK_SIZE \
        (uint32_t) (sizeof(struct pl_seg_instance) + sizeof(PERF_COUNTERSET_INSTANCE) + 2 * PL_SEG_ALIGN)

static uint64_t class_pop(struct pl_provider *p, struct pl_free_class *fc)
{
        uint64_t off = fc->head;

        /* A free block's link lives where its instance header was. */
        memcpy(&fc->head, p->base + off + sizeof(struct pl_seg_instance), sizeof(uint64_t));
        return off;
}

static void block_give(struct pl_provider *p, uint64_t off, uint32_t block_size);

/*
 * The heap is exhausted: carve the block from the smallest free block that
 * leaves a remainder big enough to hold an instance, so that space freed by
 * instances of one size serves instances of another.  Blocks are never
 * merged, so an offset that was once a block start stays one, and readers
 * holding old directory entries still find a seq there.
 */
static uint64_t block_split(struct pl_provider *p, uint32_t block_size)
{
        struct pl_free_class *best = NULL;

        for (uint32_t i = 0; i < p->n_classes; i++) {
                struct pl_free_class *fc = &p->classes[i];
                if (fc->head && fc->block_size >= block_size + PL_MIN_BLOCK_SIZE &&
                    (!best || fc->block_size < best->block_size))
                        best = fc;
        }
        if (!best)
                return 0;
        uint32_t big = best->block_size;
        uint64_t off = class_pop(p, best);
        uint64_t rest = off + block_size;
        /* A new block start: odd seq, i.e. not live, before anyone can see it. */
        __atomic_store_n(&((struct pl_seg_instance *) (p->base + rest))->seq, 1, __ATOMIC_RELAXED);
        block_give(p, rest, big - block_size);
        return off;
}

/*
 * A block of exactly block_size bytes: a freed one of that size when there is
 * one (its seq is still odd from the deletion), else fresh heap, else part of
 * a bigger freed block.  0 = full.
 */
static uint64_t block_take(struct pl_provider *p, uint32_t block_size)
{
        struct pl_free_class *fc = free_class(p, block_size, false);

        if (fc && fc->head)
                return class_pop(p, fc);
        uint64_t off = pl_heap_take(p, block_size);
        if (off)
                __atomic_store_n(&((struct pl_seg_instance *) (p->base + off))->seq, 1,
                                 __ATOMIC_RELAXED);
        else
                off = block_split(p, block_size);
        return off;
}

static void block_give(struct pl_provider *p, uint64_t off, uint32_t block_size)
{
        struct pl_free_class *fc = free_class(p, block_size, true);

        /* Out of memory for the class table only leaks this block's space. */
        if (!fc)
                return;
        memcpy(p->base + off + sizeof(struct pl_seg_instance), &fc->head, sizeof(uint64_t));
        fc->head = off;
}

static int slot_take(struct pl_provider *p, uint32_t *ret)
{
        if (p->n_free_slots > 0) {
                *ret = p->free_slots[--p->n_free_slots];
                return 0;
        }
        uint32_t high = p->hdr->dir_high;
        if (high >= p->hdr->dir_capacity)
                return -ENOSPC;
        *ret = high;
        return 0;
}

static int slot_give(struct pl_provider *p, uint32_t slot)
{
        if (p->n_free_slots == p->cap_free_slots) {
                uint32_t cap = p->cap_free_slots ? p->cap_free_slots * 2 : 256;
                uint32_t *n = pl_alloc(p, sizeof(uint32_t) * cap);
                if (!n)
                        return -ENOMEM;
                if (p->free_slots)
                        memcpy(n, p->free_slots, sizeof(uint32_t) * p->n_free_slots);
                pl_free(p, p->free_slots);
                p->free_slots = n;
                p->cap_free_slots = cap;
        }
        p->free_slots[p->n_free_slots++] = slot;
        return 0;
}

/* Per-slot arrays of reference addresses, grown to cover slot. */
static int refs_reserve(struct pl_provider *p, uint32_t slot, uint32_t num_refs)
{
        if (slot >= p->cap_refs) {
                uint32_t cap = p->cap_refs ? p->cap_refs : 256;
                while (cap <= slot)
                        cap *= 2;
                void ***n = pl_alloc0(p, sizeof(*n) * cap);
                if (!n)
                        return -ENOMEM;
                if (p->refs)
                        memcpy(n, p->refs, sizeof(*n) * p->cap_refs);
                pl_free(p, p->refs);
                p->refs = n;
                p->cap_refs = cap;
        }
        p->refs[slot] = pl_alloc0(p, sizeof(void *) * num_refs);
        return p->refs[slot] ? 0 : -ENOMEM;
}

static void block_fill(struct pl_provider *p, uint64_t off, uint32_t slot,
                       const struct pl_cset *c, const struct inst_key *k, uint32_t block_size)
{
        struct pl_seg_instance *si = (struct pl_seg_instance *) (p->base + off);
        PERF_COUNTERSET_INSTANCE *ci = (PERF_COUNTERSET_INSTANCE *) (si + 1);
        uint32_t name_off = (uint32_t) sizeof(*ci) + c->data_size;

        si->dir_slot = slot;
        memset(ci, 0, block_size - sizeof(*si));
        ci->CounterSetGuid = c->guid;
        ci->dwSize = block_size - (uint32_t) sizeof(*si);
        ci->InstanceId = k->id;
        ci->InstanceNameOffset = name_off;
        ci->InstanceNameSize = (k->len + 1) * (uint32_t) sizeof(wchar_t);
        wmemcpy((wchar_t *) ((uint8_t *) ci + name_off), k->name, k->len);
}

/* Makes a filled block visible: seq even first, then the directory entry. */
static void block_publish(struct pl_provider *p, uint64_t off, uint32_t slot, uint32_t cset)
{
        struct pl_seg_instance *si = (struct pl_seg_instance *) (p->base + off);
        uint32_t seq = __atomic_load_n(&si->seq, __ATOMIC_RELAXED);

        __atomic_store_n(&si->seq, seq + 1, __ATOMIC_RELEASE);
        __atomic_store_n(&p->dir[slot], PL_DIR_ENTRY(off, cset), __ATOMIC_RELEASE);
        if (slot >= p->hdr->dir_high)
                __atomic_store_n(&p->hdr->dir_high, slot + 1, __ATOMIC_RELEASE);
        __atomic_add_fetch(&p->hdr->instance_count, 1, __ATOMIC_RELEASE);
        __atomic_add_fetch(&p->hdr->generation, 1, __ATOMIC_RELEASE);
}

static struct pl_cset *find_cset(struct pl_provider *p, LPCGUID guid)
{
        for (uint32_t i = 0; i < p->n_csets; i++)
                if (memcmp(&p->csets[i]->guid, guid, sizeof(GUID)) == 0)
                        return p->csets[i];
        return NULL;
}

static PPERF_COUNTERSET_INSTANCE create_locked(struct pl_provider *p, struct pl_cset *c,
                                               const struct inst_key *k)
{
        uint32_t name_bytes = (k->len + 1) * (uint32_t) sizeof(wchar_t);
        uint32_t block_size = block_size_for(c, name_bytes);
        bool found;
        uint32_t slot;
        uint64_t off;

        if (c->instance_type == PERF_COUNTERSET_SINGLE_INSTANCE && c->live > 0)
                return SetLastError(ERROR_ALREADY_EXISTS), NULL;
        if ((p->index_count + 1) * 2 > (p->index ? p->index_mask + 1 : 0) && index_grow(p) < 0)
                return SetLastError(ERROR_OUTOFMEMORY), NULL;
        uint32_t pos = index_probe(p, k, &found);
        if (found)
                return SetLastError(ERROR_ALREADY_EXISTS), NULL;
        if (slot_take(p, &slot) < 0)
                return SetLastError(ERROR_OUTOFMEMORY), NULL;
        off = block_take(p, block_size);
        if (off == 0 || (c->num_refs > 0 && refs_reserve(p, slot, c->num_refs) < 0)) {
                if (off)
                        block_give(p, off, block_size);
                /* A slot below dir_high came from the free list: put it back. */
                if (slot < p->hdr->dir_high)
                        (void) slot_give(p, slot);
                return SetLastError(ERROR_OUTOFMEMORY), NULL;
        }
        block_fill(p, off, slot, c, k, block_size);
        block_publish(p, off, slot, c->index);
        p->index[pos] = slot + 1;
        p->index_count++;
        c->live++;
        return (PPERF_COUNTERSET_INSTANCE) (p->base + off + sizeof(struct pl_seg_instance));
}

/* Validates the common arguments; NULL (with the last error set) when bad. */
static struct pl_cset *instance_args(struct pl_provider *p, LPCGUID guid, PCWSTR name,
                                     struct inst_key *k, ULONG id)
{
        size_t len;

        if (!p || p->magic != PL_PROVIDER_MAGIC || !guid || !name)
                return SetLastError(ERROR_INVALID_PARAMETER), NULL;
        len = wcsnlen(name, PERF_MAX_INSTANCE_NAME);
        if (len >= PERF_MAX_INSTANCE_NAME)
                return SetLastError(ERROR_INVALID_PARAMETER), NULL;
        struct pl_cset *c = find_cset(p, guid);
        if (!c)
                return SetLastError(ERROR_NOT_FOUND), NULL;
        *k = (struct inst_key) { .cset_index = c->index, .id = id, .name = name, .len = (uint32_t) len };
        return c;
}

PPERF_COUNTERSET_INSTANCE PerfCreateInstance(HANDLE ProviderHandle, LPCGUID CounterSetGuid,
                                             PCWSTR Name, ULONG Id)
{
        struct pl_provider *p = ProviderHandle;
        PPERF_COUNTERSET_INSTANCE r = NULL;
        struct inst_key k;

        if (!p || p->magic != PL_PROVIDER_MAGIC)
                return SetLastError(ERROR_INVALID_PARAMETER), NULL;
        pthread_mutex_lock(&p->lock);
        struct pl_cset *c = instance_args(p, CounterSetGuid, Name, &k, Id);
        if (c)
                r = create_locked(p, c, &k);
        pthread_mutex_unlock(&p->lock);
        return r;
}

PPERF_COUNTERSET_INSTANCE PerfQueryInstance(HANDLE ProviderHandle, LPCGUID CounterSetGuid,
                                            PCWSTR Name, ULONG Id)
{
        struct pl_provider *p = ProviderHandle;
        PPERF_COUNTERSET_INSTANCE r = NULL;
        struct inst_key k;
        bool found = false;

        if (!p || p->magic != PL_PROVIDER_MAGIC)
                return SetLastError(ERROR_INVALID_PARAMETER), NULL;
        pthread_mutex_lock(&p->lock);
        if (instance_args(p, CounterSetGuid, Name, &k, Id)) {
                uint32_t pos = p->index ? index_probe(p, &k, &found) : 0;
                if (found)
                        r = (PPERF_COUNTERSET_INSTANCE) (slot_block(p, p->index[pos] - 1) + 1);
                else
                        SetLastError(ERROR_NOT_FOUND);
        }
        pthread_mutex_unlock(&p->lock);
        return r;
}

static PPERF_COUNTERSET_INSTANCE create_utf8(HANDLE h, LPCGUID guid, const char *name, ULONG id,
                                             PPERF_COUNTERSET_INSTANCE (*fn)(HANDLE, LPCGUID, PCWSTR, ULONG))
{
        wchar_t *w = NULL;

        if (!name)
                return SetLastError(ERROR_INVALID_PARAMETER), NULL;
        int r = pl_utf8_to_wcs(name, &w);
        if (r < 0)
                return SetLastError(r == -ENOMEM ? ERROR_OUTOFMEMORY : ERROR_INVALID_PARAMETER), NULL;
        PPERF_COUNTERSET_INSTANCE inst = fn(h, guid, w, id);
        free(w);
        return inst;
}

PPERF_COUNTERSET_INSTANCE PerfCreateInstanceUtf8(HANDLE ProviderHandle, LPCGUID CounterSetGuid,
                                                 const char *Name, ULONG Id)
{
        return create_utf8(ProviderHandle, CounterSetGuid, Name, Id, PerfCreateInstance);
}

PPERF_COUNTERSET_INSTANCE PerfQueryInstanceUtf8(HANDLE ProviderHandle, LPCGUID CounterSetGuid,
                                                const char *Name, ULONG Id)
{
        return create_utf8(ProviderHandle, CounterSetGuid, Name, Id, PerfQueryInstance);
}

static ULONG delete_locked(struct pl_provider *p, PPERF_COUNTERSET_INSTANCE inst)
{
        struct pl_seg_instance *si = pl_instance_block(p, inst);
        bool found;

        if (!si)
                return ERROR_INVALID_PARAMETER;
        uint64_t off = (uint64_t) ((uint8_t *) si - p->base);
        uint32_t slot = si->dir_slot;
        if ((__atomic_load_n(&si->seq, __ATOMIC_RELAXED) & 1) || slot >= p->hdr->dir_high ||
            (p->dir[slot] & PL_DIR_OFFSET_MASK) != off)
                return ERROR_NOT_FOUND;
        struct pl_cset *c = p->csets[slot_cset(p, slot)];
        struct inst_key k = block_key(p, slot);
        uint32_t pos = index_probe(p, &k, &found);
        if (found)
                index_remove(p, pos);
        __atomic_store_n(&p->dir[slot], 0, __ATOMIC_RELEASE);
        __atomic_add_fetch(&si->seq, 1, __ATOMIC_RELEASE);
        __atomic_sub_fetch(&p->hdr->instance_count, 1, __ATOMIC_RELEASE);
        __atomic_add_fetch(&p->hdr->generation, 1, __ATOMIC_RELEASE);
        c->live--;
        if (slot < p->cap_refs) {
                pl_free(p, p->refs[slot]);
                p->refs[slot] = NULL;
        }
        block_give(p, off, block_size_for(c, inst->InstanceNameSize));
        /* Out of memory here loses the slot for reuse, not the deletion. */
        (void) slot_give(p, slot);
        return ERROR_SUCCESS;
}

ULONG PerfDeleteInstance(HANDLE Provider, PPERF_COUNTERSET_INSTANCE InstanceBlock)
{
        struct pl_provider *p = Provider;
        ULONG err;

        if (!p || p->magic != PL_PROVIDER_MAGIC || !InstanceBlock)
                return ERROR_INVALID_PARAMETER;
        pthread_mutex_lock(&p->lock);
        err = delete_locked(p, InstanceBlock);
        pthread_mutex_unlock(&p->lock);
        return err;
}
