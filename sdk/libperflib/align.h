/* SPDX-License-Identifier: MIT */
/* Rounding up to an alignment: the one arithmetic helper both sides share. */
#ifndef PL_ALIGN_H
#define PL_ALIGN_H

#include <stdint.h>

/* a is a power of two. */
static inline uint64_t pl_align_up(uint64_t v, uint64_t a)
{
        return (v + a - 1) & ~(a - 1);
}

#endif /* PL_ALIGN_H */
