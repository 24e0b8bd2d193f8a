/* SPDX-License-Identifier: MIT */
/*
 * ns-names.c: how names enter and leave a provider's name cache
 * (ns-names.h): converting a name read from the segment, growing the slot
 * table, parking a replaced name and freeing it once no snapshot that
 * started before can point at it, and the list of those snapshots.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ns-names.h"
#include "pcq-utf.h"

/* A name entry for w[0..len), converted once. */
struct ns_name *ns_name_new(const struct pl_value_rec *in, const wchar_t *w, uint32_t len)
{
        size_t wbytes = ((size_t) len + 1) * sizeof(wchar_t);
        size_t off = (sizeof(struct ns_name) + wbytes + 7) & ~(size_t) 7;
        size_t u16max = ((size_t) len * 2 + 1) * 2 + 8;
        struct ns_name *n = malloc(off + u16max);
        size_t k = 0;

        if (!n)
                return NULL;
        *n = (struct ns_name){ .block_off = in->block_off, .seq = in->seq, .name_len = len,
                               .u16 = (uint8_t *) n + off };
        memcpy(n->name, w, wbytes);
        for (uint32_t i = 0; i < len; i++) {
                uint16_t u[2];
                size_t m = pcq_utf16_encode((uint32_t) w[i], u);

                for (size_t j = 0; j < m; j++, k += 2) {
                        n->u16[k] = (uint8_t) u[j];
                        n->u16[k + 1] = (uint8_t) (u[j] >> 8);
                }
        }
        /* The NUL, then zeros up to 8: the bytes a client receives. */
        n->u16_size = (uint32_t) ((k + 2 + 7) & ~(size_t) 7);
        memset(n->u16 + k, 0, n->u16_size - k);
        return n;
}

int ns_names_grow(struct ns_prov *p, uint32_t slot)
{
        uint32_t n = p->n_names ? p->n_names : 64;
        struct ns_name **v;

        while (n <= slot)
                n *= 2;
        v = realloc(p->names, n * sizeof(*v));
        if (!v)
                return -ENOMEM;
        memset(v + p->n_names, 0, (n - p->n_names) * sizeof(*v));
        p->names = v;
        p->n_names = n;
        return 0;
}

/* A snapshot that started before now may point at n still. */
void ns_name_park(struct ns_prov *p, struct ns_name *n)
{
        n->parked = p->epoch;
        n->next = NULL;
        *p->parked_tail = n;
        p->parked_tail = &n->next;
        p->n_parked++;
}

/*
 * Unlinks the parked names that no live reader can point at (parked
 * before the oldest one started) and returns them, for the caller to free
 * outside the lock.  Under p->name_lock.
 */
struct ns_name *ns_names_unpark(struct ns_prov *p)
{
        uint64_t oldest = p->readers ? p->readers->epoch : UINT64_MAX;
        struct ns_name *dead = p->parked, **end = &p->parked;

        while (*end && (*end)->parked < oldest) {
                end = &(*end)->next;
                p->n_parked--;
        }
        if (end == &p->parked)
                return NULL;
        p->parked = *end;
        *end = NULL;
        if (!p->parked)
                p->parked_tail = &p->parked;
        return dead;
}

void ns_reader_add(struct ns_prov *p, struct ns_reader *rd)
{
        *rd = (struct ns_reader){ .epoch = ++p->epoch, .prev = p->readers_tail };
        if (p->readers_tail)
                p->readers_tail->next = rd;
        else
                p->readers = rd;
        p->readers_tail = rd;
}

void ns_reader_remove(struct ns_prov *p, struct ns_reader *rd)
{
        if (rd->prev)
                rd->prev->next = rd->next;
        else
                p->readers = rd->next;
        if (rd->next)
                rd->next->prev = rd->prev;
        else
                p->readers_tail = rd->prev;
}

size_t ns_parked_names(struct ns *ns)
{
        size_t n = 0;

        for (size_t i = 0; i < ns->n_provs; i++) {
                pthread_mutex_lock(&ns->provs[i]->name_lock);
                n += ns->provs[i]->n_parked;
                pthread_mutex_unlock(&ns->provs[i]->name_lock);
        }
        return n;
}
