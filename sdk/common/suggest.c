/* SPDX-License-Identifier: MIT */
/*
 * The nearest valid name to a mistyped one: the optimal string alignment
 * distance (Levenshtein plus the swap of two neighbours, the commonest
 * slip of the fingers), over bytes, blind to ASCII case, since a name
 * differing only in case is the likeliest mistake where names are
 * case-sensitive, and where they are not the exact match was found before
 * anyone asked here.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "suggest.h"

static unsigned char fold(char c)
{
        return c >= 'A' && c <= 'Z' ? (unsigned char) (c - 'A' + 'a') : (unsigned char) c;
}

static size_t min3(size_t a, size_t b, size_t c)
{
        size_t m = a < b ? a : b;

        return m < c ? m : c;
}

size_t sg_distance(const char *a, size_t a_len, const char *b, size_t b_len)
{
        /* Three rows of the matrix: the swap looks two rows back. */
        size_t rows[3][SG_MAX_NAME + 1];
        size_t *before = rows[0], *prev = rows[1], *cur = rows[2];

        if (a_len > SG_MAX_NAME || b_len > SG_MAX_NAME)
                return SIZE_MAX;
        for (size_t j = 0; j <= b_len; j++)
                prev[j] = j;
        for (size_t i = 1; i <= a_len; i++) {
                size_t *t;

                cur[0] = i;
                for (size_t j = 1; j <= b_len; j++) {
                        size_t cost = fold(a[i - 1]) != fold(b[j - 1]);

                        cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
                        if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
                            fold(a[i - 2]) == fold(b[j - 1]) && before[j - 2] + 1 < cur[j])
                                cur[j] = before[j - 2] + 1;
                }
                t = before;
                before = prev;
                prev = cur;
                cur = t;
        }
        return prev[b_len];
}

/*
 * A quarter of the name may be wrong: two slips in "Procesor" would do,
 * five in "perf_counter_rawcont", but "perf_counter_bogus" is five from
 * "perf_counter_text" and gets no suggestion.  Names under three bytes
 * only get their case corrected: any one of them is one edit from most.
 */
void sg_begin(struct sg_suggest *s, const char *typed)
{
        size_t len = typed ? strlen(typed) : 0;

        *s = (struct sg_suggest) {
                .typed = typed ? typed : "",
                .typed_len = len,
                .limit = len < 3 ? 0 : len / 4 ? len / 4 : 1,
                .best_distance = SIZE_MAX,
        };
}

void sg_offer(struct sg_suggest *s, const char *name, size_t len)
{
        size_t d;

        if (!name || len > SG_MAX_NAME ||
            (len == s->typed_len && memcmp(name, s->typed, len) == 0))
                return;
        d = sg_distance(s->typed, s->typed_len, name, len);
        if (d > s->limit || d >= s->best_distance)
                return;
        s->best_distance = d;
        memcpy(s->best, name, len);
        s->best[len] = 0;
}

const char *sg_best(const struct sg_suggest *s)
{
        return s->best_distance == SIZE_MAX ? NULL : s->best;
}

const char *sg_hint(struct sg_suggest *s)
{
        if (s->best_distance == SIZE_MAX)
                return "";
        snprintf(s->hint, sizeof(s->hint), "; did you mean '%s'?", s->best);
        return s->hint;
}
