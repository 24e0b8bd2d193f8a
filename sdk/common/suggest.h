/* SPDX-License-Identifier: MIT */
/*
 * suggest.h: "did you mean" for a mistyped name (suggest.c): of the valid
 * names a caller offers one by one, the nearest to what was typed, when it
 * is near enough to be what was meant.  ctrpp's diagnostics, lodctr's and
 * libpcq's messages all ask here, so that they agree on what is close.
 * Hidden symbols, sg_ prefix; no allocation.
 */
#ifndef PERFLIB_SUGGEST_H
#define PERFLIB_SUGGEST_H

#include <stddef.h>

/* Longer names are never compared (a name nobody types by hand). */
#define SG_MAX_NAME 255

struct sg_suggest {
        const char *typed;              /* borrowed until the last sg_offer */
        size_t typed_len;
        size_t limit;                   /* the largest distance worth suggesting */
        size_t best_distance;
        char best[SG_MAX_NAME + 1];     /* a copy, so candidates may be transient */
        char hint[SG_MAX_NAME + 24];    /* sg_hint's text */
};

/* Starts a search for the name nearest to typed. */
void sg_begin(struct sg_suggest *s, const char *typed);
/*
 * Offers a valid name (len bytes, not necessarily NUL-terminated).  Ties
 * keep the first offered; typed itself is never suggested.
 */
void sg_offer(struct sg_suggest *s, const char *name, size_t len);
/* The suggestion, or NULL when no name offered was near enough. */
const char *sg_best(const struct sg_suggest *s);
/*
 * What every message that suggests ends with, so that all read alike:
 * "; did you mean 'NAME'?", or "" without a suggestion.  Held in s.
 */
const char *sg_hint(struct sg_suggest *s);

/*
 * The edit distance of a and b: insertions, deletions, substitutions and
 * swaps of two neighbours each count 1, ASCII case is ignored.  SIZE_MAX
 * when either is longer than SG_MAX_NAME.
 */
size_t sg_distance(const char *a, size_t a_len, const char *b, size_t b_len);

#endif /* PERFLIB_SUGGEST_H */
