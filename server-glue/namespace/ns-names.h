/* SPDX-License-Identifier: MIT */
/*
 * ns-names.h: a provider's instance-name cache.  A name is read from the
 * segment once, converted once to the UTF-32 and UTF-16LE snapshots hand
 * out, and kept by directory slot while the slot holds the same instance;
 * a replaced name is parked until every snapshot that may point at it is
 * freed (the epochs of the readers).  The storage is the provider's
 * (ns-prov.h); snapshots (ns-snapshot.c) are the one user.
 *
 * ns_name_of is static inline: a snapshot calls it once per instance, and was
 * built with it inlined when all was one file.  What it calls only for a
 * name not seen before is in ns-names.c.
 */
#ifndef PERFLIBD_NS_NAMES_H
#define PERFLIBD_NS_NAMES_H

#include <errno.h>
#include <stdint.h>
#include <wchar.h>

#include "ns-prov.h"

struct ns_name *ns_name_new(const struct pl_value_rec *in, const wchar_t *w, uint32_t len);
int ns_names_grow(struct ns_prov *p, uint32_t slot);
void ns_name_park(struct ns_prov *p, struct ns_name *n);
struct ns_name *ns_names_unpark(struct ns_prov *p);
void ns_reader_add(struct ns_prov *p, struct ns_reader *rd);
void ns_reader_remove(struct ns_prov *p, struct ns_reader *rd);

/*
 * The name of the instance rec names, from the cache or read now: NULL
 * with 0 when the instance went away since it was read (leave it out),
 * -ENOMEM.  Under p->lock (the reader) and p->name_lock.
 */
static inline int ns_name_of(struct ns_prov *p, uint32_t cset_index, const struct pl_value_rec *rec,
                          wchar_t *scratch, const struct ns_name **ret)
{
        struct ns_name *n = rec->dir_slot < p->n_names ? p->names[rec->dir_slot] : NULL;
        uint32_t len;
        int k;

        *ret = NULL;
        if (n && n->block_off == rec->block_off && n->seq == rec->seq) {
                *ret = n;
                return 0;
        }
        k = pl_reader_rec_name(p->r, cset_index, rec, scratch, &len);
        if (k == -ENOMEM)
                return k;
        if (k < 0)
                return 0;
        if (rec->dir_slot >= p->n_names && ns_names_grow(p, rec->dir_slot) < 0)
                return -ENOMEM;
        n = ns_name_new(rec, scratch, len);
        if (!n)
                return -ENOMEM;
        if (p->names[rec->dir_slot])
                ns_name_park(p, p->names[rec->dir_slot]);
        p->names[rec->dir_slot] = n;
        *ret = n;
        return 0;
}

#endif /* PERFLIBD_NS_NAMES_H */
