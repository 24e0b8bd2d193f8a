/* SPDX-License-Identifier: MIT */
/*
 * The provider's self-description on the reader's side: a private copy of
 * the published blob, parsed once (desc-parse.c) and kept by the reader.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "desc-parse.h"
#include "reader-open.h"
#include "reader.h"

/* A private copy of the published blob, so that the provider cannot change it under the checks. */
static int desc_copy(const struct pl_reader *r, uint8_t **ret, uint64_t *ret_size)
{
        uint64_t size = __atomic_load_n(&hdr(r)->desc_size, __ATOMIC_ACQUIRE);
        uint64_t off = __atomic_load_n(&hdr(r)->desc_off, __ATOMIC_RELAXED);
        uint8_t *copy;

        if (size == 0)
                return -ENODATA;
        if (size > PL_SEG_MAX_DESC_SIZE || !heap_ok(r, off, size))
                return -EBADMSG;
        copy = malloc(size);
        if (!copy)
                return -ENOMEM;
        memcpy(copy, r->base + off, size);
        *ret = copy;
        *ret_size = size;
        return 0;
}

int pl_reader_description(struct pl_reader *r, const struct ctrpp_provider_desc **ret)
{
        uint8_t *blob = NULL;
        uint64_t size;
        int k;

        if (!r || !ret)
                return -EINVAL;
        /*
         * Published once and never changed: one parse holds for good, a
         * malformed blob too (perflibd asks on every request until it has one).
         */
        if (r->desc_bad)
                return -EBADMSG;
        if (!r->desc) {
                k = desc_copy(r, &blob, &size);
                if (k == 0) {
                        k = pl_desc_parse(blob, size, &r->desc);
                        free(blob);
                }
                if (k == -EBADMSG)
                        r->desc_bad = true;
                if (k < 0)
                        return k;
        }
        *ret = r->desc;
        return 0;
}
