/* SPDX-License-Identifier: MIT */
/*
 * ns-catalog.h: the counterset list (struct ns_entry), one entry per GUID,
 * built from the live providers' segments and self-descriptions and from
 * the installed descriptions, each entry with its providers' copies
 * (struct ns_src).  ns.c rebuilds it when a provider came, went or
 * published something; snapshots read it.
 *
 * Only the copies ns-owner.h accepts are merged: a refused one is neither
 * a source nor a description.
 *
 * ns_entry_of is static inline: every snapshot and notification starts with it.
 */
#ifndef PERFLIBD_NS_CATALOG_H
#define PERFLIBD_NS_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "ns-owner.h"

/* One provider's copy of a counterset. */
struct ns_src {
        struct ns_prov *p;
        uint32_t cset_index;            /* in the provider's segment */
        uint32_t *map;                  /* ns counter i -> segment counter map[i]; NULL = identity */
};

struct ns_entry {
        struct ns_counterset pub;
        struct ns_counter *counters;
        struct ns_src *src;
        size_t n_src;
        /* Names when nothing else names them: the GUID, and each counter's id. */
        char guid_text[39];
        char (*id_text)[11];
};

/* Frees ns's counterset list, leaving it empty. */
void ns_entries_free(struct ns *ns);
/* Replaces ns's list with one built from its providers and installed
 * descriptions; on failure the old list is left as it was. */
int ns_rebuild(struct ns *ns);

static inline const struct ns_entry *ns_entry_of(const struct ns_counterset *cs)
{
        return (const struct ns_entry *) ((const char *) cs - offsetof(struct ns_entry, pub));
}

#endif /* PERFLIBD_NS_CATALOG_H */
