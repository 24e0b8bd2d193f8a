/* SPDX-License-Identifier: MIT */
/*
 * The reader's view of a segment (struct pl_reader) and what every part of
 * the reader reads it with.  A segment comes from another process (or from
 * a fuzz input), so it is treated as hostile: the constant header fields are
 * validated once and copied (reader-open.c), the moving ones are
 * re-validated at every load (below), and nothing read from it is used as a
 * pointer, size or count before it has been checked against the mapping.
 * Hidden.
 */
#ifndef PL_READER_OPEN_H
#define PL_READER_OPEN_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perflib.h"
#include "reader.h"
#include "segment.h"

#define INSTANCE_HDR_SIZE (sizeof(struct pl_seg_instance) + sizeof(PERF_COUNTERSET_INSTANCE))

struct pl_reader {
        const uint8_t *base;            /* the segment image */
        uint64_t avail;                 /* bytes of it readable at base */
        void *map;                      /* the mapping holding it, NULL = none */
        size_t map_len;
        int sock;                       /* collect service connection, -1 = none */
        bool have_id;                   /* dev/ino identify a segment file */
        uint64_t dev, ino;
        uint64_t next_seq;              /* request ids */
        uint64_t max_map;               /* refuse larger segments before mapping, 0 = no cap */

        /* Validated copies of the constant header fields. */
        uint64_t segment_size;
        GUID provider_guid;
        uint32_t pid;
        uint64_t cset_table_off;
        uint32_t cset_capacity;
        uint64_t dir_off;
        uint32_t dir_capacity;
        uint64_t heap_off;

        struct pl_counterset **csets;   /* validated descriptors by index, NULL = not yet */
        uint32_t n_csets;               /* entries allocated in csets */

        /* Sizes of the last snapshot, to allocate the next one at once. */
        uint32_t last_instances;
        size_t last_arena;

        struct ctrpp_provider_desc *desc;       /* the parsed self-description, NULL = not yet */
        bool desc_bad;                  /* the published one is malformed: for good */
};

/* [off, off + len) lies within [lo, hi), without overflow. */
/* ---- bounds ---- */

static inline bool range_ok(uint64_t off, uint64_t len, uint64_t lo, uint64_t hi)
{
        uint64_t end;

        if (__builtin_add_overflow(off, len, &end))
                return false;
        return off >= lo && end <= hi;
}

/* An object of len bytes at off, entirely inside the heap and 8-aligned. */
static inline bool heap_ok(const struct pl_reader *r, uint64_t off, uint64_t len)
{
        return off % PL_SEG_ALIGN == 0 && range_ok(off, len, r->heap_off, r->segment_size);
}

static inline const struct pl_seg_header *hdr(const struct pl_reader *r)
{
        return (const struct pl_seg_header *) r->base;
}

/* The published counterset count, re-validated at every load. */
static inline int load_cset_count(const struct pl_reader *r, uint32_t *ret)
{
        uint32_t n = __atomic_load_n(&hdr(r)->cset_count, __ATOMIC_ACQUIRE);

        if (n > r->cset_capacity)
                return -EBADMSG;
        *ret = n;
        return 0;
}

static inline int load_dir_high(const struct pl_reader *r, uint32_t *ret)
{
        uint32_t n = __atomic_load_n(&hdr(r)->dir_high, __ATOMIC_ACQUIRE);

        if (n > r->dir_capacity)
                return -EBADMSG;
        *ret = n;
        return 0;
}

/* A reader with nothing mapped and no connection yet. */
struct pl_reader *pl_reader_new(void);

/*
 * Maps the segment behind fd read-only into r and validates its header; the
 * descriptor stays the caller's.  -EFBIG, before mapping anything, when
 * the header announces more than r->max_map bytes.
 */
int pl_reader_map_fd(struct pl_reader *r, int fd);

#endif /* PL_READER_OPEN_H */
