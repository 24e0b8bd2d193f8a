/* SPDX-License-Identifier: MIT */
/*
 * reader-cset.c: a reader's validated copies of counterset descriptors, and
 * reading a counter's value as its descriptor lays it out.  Hidden.
 */
#ifndef PL_READER_CSET_H
#define PL_READER_CSET_H

#include <stdint.h>

#include "reader.h"
#include "segment.h"

/* The counterset at index, which the caller has checked is below the published count. */
int pl_reader_cset_get(struct pl_reader *r, uint32_t index, const struct pl_counterset **ret);

/*
 * data is 8-aligned (block offset and header sizes are multiples of 8), so a
 * slot aligned to its own size gets one atomic load; text and size-zero
 * counters that are not such slots read as 0.
 */
static inline uint64_t load_value(const uint8_t *data, const struct pl_seg_counter *c)
{
        if (c->size == 8 && c->offset % 8 == 0)
                return __atomic_load_n((const uint64_t *) (data + c->offset), __ATOMIC_RELAXED);
        if (c->size == 4 && c->offset % 4 == 0)
                return __atomic_load_n((const uint32_t *) (data + c->offset), __ATOMIC_RELAXED);
        return 0;
}

#endif /* PL_READER_CSET_H */
