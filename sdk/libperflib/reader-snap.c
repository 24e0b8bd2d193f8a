/* SPDX-License-Identifier: MIT */
/*
 * Snapshots: every live instance of one counterset (or of all), names and
 * values, and the name of one instance a snapshot returned.  Instance
 * blocks are read under their sequence lock (segment.h) and a block that
 * fails a check is left out of the snapshot rather than failing it,
 * because a block being reused legitimately looks torn for a moment.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "align.h"
#include "reader-conn.h"
#include "reader-cset.h"
#include "reader-open.h"
#include "reader.h"

_Static_assert(sizeof(wchar_t) == 4, "instance names are UTF-32");

void pl_snapshot_free(struct pl_snapshot *s)
{
        if (!s)
                return;
        /* Every instance's values and name live in the arena (snap_finish). */
        free(s->arena);
        free(s->instances);
        free(s);
}

/* The PERF_COUNTERSET_INSTANCE copy agrees with the directory and the descriptor. */
static bool inst_head_ok(const struct pl_counterset *c, const PERF_COUNTERSET_INSTANCE *ci)
{
        uint32_t name_off = (uint32_t) sizeof(*ci) + c->data_size;

        if (memcmp(&ci->CounterSetGuid, &c->guid, sizeof(GUID)) != 0)
                return false;
        if (ci->InstanceNameOffset != name_off || ci->InstanceNameSize < sizeof(wchar_t) ||
            ci->InstanceNameSize % sizeof(wchar_t) != 0 ||
            ci->InstanceNameSize > PL_SEG_MAX_NAME_BYTES)
                return false;
        return ci->dwSize == name_off + pl_align_up(ci->InstanceNameSize, PL_SEG_ALIGN);
}

/* The name copy holds exactly one NUL, at its end. */
static bool name_ok(const wchar_t *name, uint32_t chars)
{
        return name[chars - 1] == L'\0' && wcsnlen(name, chars) == chars - 1;
}

/*
 * Copies the parts of a block read under its sequence lock.  Everything
 * that sizes a copy comes from the local header copy, so a block changing
 * underneath can only produce a copy that the seq check then discards.
 * name NULL: the name is checked for size only and not copied (the caller
 * fetches it with pl_reader_instance_name when it does not know it yet).
 */
static inline int inst_copy(const struct pl_reader *r, const struct pl_counterset *c, uint64_t off,
                     uint32_t slot, wchar_t *name, struct pl_instance *out)
{
        const struct pl_seg_instance *si = (const struct pl_seg_instance *) (r->base + off);
        const uint8_t *ci_base = r->base + off + sizeof(*si);
        PERF_COUNTERSET_INSTANCE ci;
        uint32_t seq, dir_slot;

        seq = __atomic_load_n(&si->seq, __ATOMIC_ACQUIRE);
        if (seq & 1)
                return -EAGAIN;
        dir_slot = __atomic_load_n(&si->dir_slot, __ATOMIC_RELAXED);
        __builtin_memcpy(&ci, ci_base, sizeof(ci));
        if (dir_slot != slot || !inst_head_ok(c, &ci) ||
            !heap_ok(r, off, sizeof(*si) + (uint64_t) ci.dwSize))
                return -EBADMSG;
        if (name)
                memcpy(name, ci_base + ci.InstanceNameOffset, ci.InstanceNameSize);
        for (uint32_t i = 0; i < c->num_counters; i++)
                out->values[i] = load_value(ci_base + sizeof(ci), &c->counters[i]);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&si->seq, __ATOMIC_RELAXED) != seq)
                return -EAGAIN;
        uint32_t chars = ci.InstanceNameSize / (uint32_t) sizeof(wchar_t);
        if (name && !name_ok(name, chars))
                return -EBADMSG;
        out->instance_id = ci.InstanceId;
        out->seq = seq;
        out->name_len = name ? chars - 1 : 0;
        return 0;
}

/*
 * Reads one directory entry's block into out: the values into vals (the
 * counterset's counters), the name into scratch (PL_SEG_MAX_NAME_BYTES;
 * NULL: no name).  <0 leaves the block out of the snapshot.
 */
static inline int inst_read(const struct pl_reader *r, const struct pl_counterset *c, uint64_t off,
                     uint32_t slot, wchar_t *scratch, uint64_t *vals, struct pl_instance *out)
{
        /* The fixed part first; the name's extent is checked once it is known. */
        if (!heap_ok(r, off, INSTANCE_HDR_SIZE + (uint64_t) c->data_size))
                return -EBADMSG;
        *out = (struct pl_instance) {
                .cset_index = c->index,
                .dir_slot = slot,
                .block_off = off,
                .num_values = c->num_counters,
                .values = vals,
        };
        return inst_copy(r, c, off, slot, scratch, out);
}

struct snap_state {
        struct pl_reader *r;
        uint32_t want;                  /* cset index or PL_ALL_COUNTERSETS */
        uint32_t n_csets;               /* published when the scan started */
        bool no_names;                  /* PL_SNAPSHOT_NO_NAMES */
        uint32_t last_ci;               /* the counterset of the last slot read, */
        const struct pl_counterset *last_c;     /* NULL = none yet */
        struct pl_snapshot *s;
        uint32_t cap;
        uint64_t *vals;                 /* scratch for one instance's values */
        uint32_t vals_cap;
        /*
         * Every kept instance's values and name, back to back: one growing
         * block rather than an allocation per instance (a snapshot of
         * 100,000 instances is taken on every query).  offs[i] is where
         * instance i's part starts; pointers are set once the block stops
         * moving (snap_finish).
         */
        uint8_t *arena;
        size_t arena_len, arena_cap;
        size_t *offs;
        wchar_t name[PL_SEG_MAX_NAME_BYTES / sizeof(wchar_t)];
};

/* Copies one instance's values and name to the end of the arena. */
static int arena_put(struct snap_state *st, const struct pl_instance *inst, size_t *ret_off)
{
        size_t vsize = (size_t) inst->num_values * sizeof(uint64_t);
        size_t nsize = st->no_names ? 0 : ((size_t) inst->name_len + 1) * sizeof(wchar_t);
        size_t need = (vsize + nsize + 7) & ~(size_t) 7;

        if (need > st->arena_cap - st->arena_len) {
                size_t hint = st->r->last_arena + st->r->last_arena / 8;
                size_t cap = st->arena_cap ? st->arena_cap : hint > 4096 ? hint : 4096;
                uint8_t *a;

                while (cap - st->arena_len < need)
                        cap *= 2;
                a = realloc(st->arena, cap);
                if (!a)
                        return -ENOMEM;
                st->arena = a;
                st->arena_cap = cap;
        }
        /* A few values at most, aligned: a loop, not a call. */
        for (uint32_t i = 0; i < inst->num_values; i++)
                memcpy(st->arena + st->arena_len + i * sizeof(uint64_t), &inst->values[i],
                       sizeof(uint64_t));
        if (nsize)
                memcpy(st->arena + st->arena_len + vsize, st->name, nsize);
        *ret_off = st->arena_len;
        st->arena_len += need;
        return 0;
}

/* Points every instance into the arena, which the snapshot now owns. */
static void snap_finish(struct snap_state *st)
{
        struct pl_snapshot *s = st->s;

        for (uint32_t i = 0; i < s->n_instances; i++) {
                struct pl_instance *in = &s->instances[i];

                in->values = (uint64_t *) (st->arena + st->offs[i]);
                if (!st->no_names)
                        in->name = (wchar_t *) (st->arena + st->offs[i] +
                                                (size_t) in->num_values * sizeof(uint64_t));
        }
        s->arena = st->arena;
        st->arena = NULL;
}

static int vals_reserve(struct snap_state *st, uint32_t n)
{
        uint64_t *v;

        if (n <= st->vals_cap)
                return 0;
        v = realloc(st->vals, (size_t) n * sizeof(*v));
        if (!v)
                return -ENOMEM;
        st->vals = v;
        st->vals_cap = n;
        return 0;
}

static int snap_push(struct snap_state *st, const struct pl_instance *inst)
{
        struct pl_snapshot *s = st->s;
        size_t off;

        if (s->n_instances == st->cap) {
                uint32_t hint = st->r->last_instances + st->r->last_instances / 8;
                uint32_t cap = st->cap ? st->cap * 2 : hint > 64 ? hint : 64;
                struct pl_instance *a = realloc(s->instances, sizeof(*a) * cap);
                size_t *o;

                if (!a)
                        return -ENOMEM;
                s->instances = a;
                o = realloc(st->offs, sizeof(*o) * cap);
                if (!o)
                        return -ENOMEM;
                st->offs = o;
                st->cap = cap;
        }
        if (arena_put(st, inst, &off) < 0)
                return -ENOMEM;

        st->offs[s->n_instances] = off;
        s->instances[s->n_instances] = *inst;
        s->instances[s->n_instances].values = NULL;     /* set by snap_finish */
        s->instances[s->n_instances].name = NULL;
        s->n_instances++;
        return 0;
}

/* One directory slot; only out-of-memory is an error, a bad block is skipped. */
static int snap_slot(struct snap_state *st, const uint64_t *dir, uint32_t slot)
{
        const struct pl_counterset *c;
        struct pl_instance inst;
        uint64_t e = __atomic_load_n(&dir[slot], __ATOMIC_ACQUIRE);
        uint32_t ci = (uint32_t) (e >> PL_DIR_CSET_SHIFT);
        int k;

        if (e == 0 || (st->want != PL_ALL_COUNTERSETS && ci != st->want))
                return 0;
        if (ci >= st->n_csets) {
                /* Published after the count was read, or garbage: re-check. */
                if (load_cset_count(st->r, &st->n_csets) < 0 || ci >= st->n_csets)
                        return 0;
        }
        if (st->last_c && ci == st->last_ci) {
                /* Slot after slot holds the same counterset: looked up once. */
                c = st->last_c;
        } else {
                k = pl_reader_cset_get(st->r, ci, &c);
                if (k < 0)
                        return k == -ENOMEM ? k : 0;
                k = vals_reserve(st, c->num_counters);
                if (k < 0)
                        return k;
                st->last_ci = ci;
                st->last_c = c;
        }
        k = inst_read(st->r, c, e & PL_DIR_OFFSET_MASK, slot, st->no_names ? NULL : st->name,
                      st->vals, &inst);
        if (k < 0)
                return k == -ENOMEM ? k : 0;
        return snap_push(st, &inst);
}

static int snap_scan(struct snap_state *st)
{
        const uint64_t *dir = (const uint64_t *) (st->r->base + st->r->dir_off);
        uint32_t high;
        int k;

        k = load_dir_high(st->r, &high);
        if (k < 0)
                return k;
        for (uint32_t slot = 0; slot < high; slot++) {
                k = snap_slot(st, dir, slot);
                if (k < 0)
                        return k;
        }
        return 0;
}

/* Whether any of the requested countersets has by-reference counters. */
static bool wants_refs(struct pl_reader *r, uint32_t want, uint32_t n_csets)
{
        const struct pl_counterset *c;

        for (uint32_t i = 0; i < n_csets; i++)
                if ((want == PL_ALL_COUNTERSETS || want == i) &&
                    pl_reader_cset_get(r, i, &c) == 0 && c->num_refs > 0)
                        return true;
        return false;
}

static int snap_prepare(struct snap_state *st, uint32_t cset_index)
{
        const struct pl_counterset *c;
        int k;

        k = load_cset_count(st->r, &st->n_csets);
        if (k < 0)
                return k;
        if (cset_index != PL_ALL_COUNTERSETS) {
                if (cset_index >= st->n_csets)
                        return -ENOENT;
                k = pl_reader_cset_get(st->r, cset_index, &c);
                if (k < 0)
                        return k;
        }
        st->s = calloc(1, sizeof(*st->s));
        return st->s ? 0 : -ENOMEM;
}

int pl_reader_snapshot(struct pl_reader *r, uint32_t cset_index, unsigned flags,
                       struct pl_snapshot **ret)
{
        struct snap_state st = { .r = r, .want = cset_index,
                                 .no_names = flags & PL_SNAPSHOT_NO_NAMES };
        int k;

        if (!r || !ret || (flags & ~(PL_SNAPSHOT_COLLECT | PL_SNAPSHOT_NO_NAMES)))
                return -EINVAL;
        k = snap_prepare(&st, cset_index);
        if (k < 0)
                return k;
        if ((flags & PL_SNAPSHOT_COLLECT) && wants_refs(r, cset_index, st.n_csets))
                st.s->refs_stale = !pl_reader_collect(r);
        st.s->generation = __atomic_load_n(&hdr(r)->generation, __ATOMIC_ACQUIRE);
        k = snap_scan(&st);
        if (k == 0) {
                /* Most snapshots of a reader look like the one before. */
                r->last_instances = st.s->n_instances;
                r->last_arena = st.arena_len;
                snap_finish(&st);
        }
        free(st.vals);
        free(st.offs);
        free(st.arena);
        if (k < 0) {
                pl_snapshot_free(st.s);
                return k;
        }
        *ret = st.s;
        return 0;
}

int pl_reader_instance_name(struct pl_reader *r, const struct pl_instance *in,
                            wchar_t *buf, uint32_t *ret_len)
{
        const struct pl_counterset *c;
        struct pl_instance again;
        uint64_t *vals;
        int k;

        if (!r || !in || !buf || !ret_len)
                return -EINVAL;
        k = pl_reader_cset_get(r, in->cset_index, &c);
        if (k < 0)
                return k;
        /* The values are read again and dropped: one read path, one set of checks. */
        vals = malloc(((size_t) c->num_counters + 1) * sizeof(*vals));
        if (!vals)
                return -ENOMEM;
        k = inst_read(r, c, in->block_off, in->dir_slot, buf, vals, &again);
        free(vals);
        if (k == 0 && again.seq != in->seq)
                return -ESTALE;
        if (k < 0 && k != -ENOMEM && heap_ok(r, in->block_off, sizeof(struct pl_seg_instance))) {
                /* A block reused for another instance looks malformed for a moment. */
                const struct pl_seg_instance *si =
                        (const struct pl_seg_instance *) (r->base + in->block_off);

                if (k == -EAGAIN || __atomic_load_n(&si->seq, __ATOMIC_ACQUIRE) != in->seq)
                        return -ESTALE;
        }
        if (k < 0)
                return k;
        *ret_len = again.name_len;
        return 0;
}
