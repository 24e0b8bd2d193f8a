/* SPDX-License-Identifier: MIT */
/*
 * pl_set_provider_description: flattening a provider's self-description
 * (perflib-description.h) into the blob of segment.h and publishing it.
 * The tree is walked twice: once, without the lock, to validate it and
 * size the blob; once, under the lock, to write the blob into heap space
 * taken for exactly that size.
 */
#include <errno.h>
#include <string.h>

#include "align.h"
#include "state.h"
#include "utf.h"

_Static_assert(sizeof(struct ctrpp_guid) == sizeof(GUID), "ctrpp_guid is a GUID");

/* What the first walk learns. */
struct desc_size {
        uint64_t n_counters;            /* over all countersets */
        uint64_t strings;               /* string table bytes, NULs included */
};

/* Offsets of the sections, and where the next counter and string go. */
struct desc_writer {
        uint8_t *blob;
        uint32_t counters_off, strings_off, strings_size, size;
        uint32_t next_counter;
        uint32_t next_string;           /* blob offset */
};

/* ---- the first walk ---- */

/* NULL means absent; anything else must be UTF-8, and counts towards the table. */
static int strings_measure(const char *const *s, size_t n, struct desc_size *z)
{
        for (size_t i = 0; i < n; i++) {
                if (!s[i])
                        continue;
                size_t len = strlen(s[i]);
                if (!pl_utf8_valid(s[i], len))
                        return -EINVAL;
                z->strings += len + 1;
                if (z->strings > PL_SEG_MAX_DESC_SIZE)
                        return -E2BIG;
        }
        return 0;
}

static int counter_measure(const struct ctrpp_counter_desc *c, struct desc_size *z)
{
        const char *s[] = { c->symbol, c->uri, c->name, c->description };

        return strings_measure(s, sizeof(s) / sizeof(s[0]), z);
}

/* An array of n entries: NULL only when empty, and within its limit. */
static int array_check(const void *a, uint32_t n, uint32_t max)
{
        if (n > 0 && !a)
                return -EINVAL;
        return n > max ? -E2BIG : 0;
}

static int cset_measure(const struct ctrpp_counterset_desc *cs, struct desc_size *z)
{
        const char *s[] = { cs->symbol, cs->uri, cs->name, cs->description, cs->instances };
        int r;

        r = array_check(cs->counters, cs->n_counters, PL_DESC_MAX_COUNTERS);
        if (r < 0)
                return r;
        z->n_counters += cs->n_counters;
        if (z->n_counters * sizeof(struct pl_desc_counter) > PL_SEG_MAX_DESC_SIZE)
                return -E2BIG;
        r = strings_measure(s, sizeof(s) / sizeof(s[0]), z);
        for (uint32_t i = 0; r == 0 && i < cs->n_counters; i++)
                r = counter_measure(&cs->counters[i], z);
        return r;
}

static int desc_measure(const struct pl_provider *p, const struct ctrpp_provider_desc *d,
                        struct desc_size *z)
{
        const char *s[] = { d->name, d->symbol, d->application_identity,
                            d->schema_version, d->manifest };
        int r;

        if (d->version != CTRPP_DESCRIPTION_VERSION || d->size != sizeof(*d) ||
            memcmp(&d->guid, &p->guid, sizeof(GUID)) != 0)
                return -EINVAL;
        r = array_check(d->countersets, d->n_countersets, PL_DESC_MAX_COUNTERSETS);
        if (r == 0)
                r = strings_measure(s, sizeof(s) / sizeof(s[0]), z);
        for (uint32_t i = 0; r == 0 && i < d->n_countersets; i++)
                r = cset_measure(&d->countersets[i], z);
        return r;
}

/* Section offsets for the measured tree; -E2BIG over the limit. */
static int desc_plan(const struct ctrpp_provider_desc *d, const struct desc_size *z,
                     struct desc_writer *w)
{
        uint64_t counters_off = sizeof(struct pl_desc_header) +
                                (uint64_t) d->n_countersets * sizeof(struct pl_desc_counterset);
        uint64_t strings_off = counters_off + z->n_counters * sizeof(struct pl_desc_counter);
        uint64_t size = strings_off + pl_align_up(z->strings, PL_SEG_ALIGN);

        if (size > PL_SEG_MAX_DESC_SIZE)
                return -E2BIG;
        *w = (struct desc_writer) {
                .counters_off = (uint32_t) counters_off,
                .strings_off = (uint32_t) strings_off,
                .strings_size = (uint32_t) (size - strings_off),
                .size = (uint32_t) size,
                .next_string = (uint32_t) strings_off,
        };
        return 0;
}

/* ---- the second walk ---- */

/* Appends s to the string table (sized by the first walk); its offset. */
static uint32_t string_put(struct desc_writer *w, const char *s)
{
        uint32_t off = w->next_string;

        if (!s)
                return PL_DESC_NO_STRING;
        size_t n = strlen(s) + 1;
        memcpy(w->blob + off, s, n);
        w->next_string += (uint32_t) n;
        return off;
}

static void counter_put(struct desc_writer *w, const struct ctrpp_counter_desc *c)
{
        struct pl_desc_counter o = {
                .id = c->id, .type = c->type, .attrib = c->attrib, .size = c->size,
                .detail_level = c->detail_level, .default_scale = c->default_scale,
                .aggregate = c->aggregate, .base_id = c->base_id,
                .perf_time_id = c->perf_time_id, .perf_freq_id = c->perf_freq_id,
                .multi_counter_id = c->multi_counter_id, .name_id = c->name_id,
                .description_id = c->description_id,
                .symbol = string_put(w, c->symbol), .uri = string_put(w, c->uri),
                .name = string_put(w, c->name), .description = string_put(w, c->description),
        };

        memcpy(w->blob + w->counters_off + (uint64_t) w->next_counter++ * sizeof(o),
               &o, sizeof(o));
}

static void cset_put(struct desc_writer *w, uint32_t index, const struct ctrpp_counterset_desc *cs)
{
        struct pl_desc_counterset o = {
                .instance_type = cs->instance_type, .name_id = cs->name_id,
                .description_id = cs->description_id, .n_counters = cs->n_counters,
                .first_counter = w->next_counter,
                .symbol = string_put(w, cs->symbol), .uri = string_put(w, cs->uri),
                .name = string_put(w, cs->name), .description = string_put(w, cs->description),
                .instances = string_put(w, cs->instances),
        };

        memcpy(o.guid, &cs->guid, sizeof(o.guid));
        memcpy(w->blob + sizeof(struct pl_desc_header) + (uint64_t) index * sizeof(o),
               &o, sizeof(o));
        for (uint32_t i = 0; i < cs->n_counters; i++)
                counter_put(w, &cs->counters[i]);
}

static void header_put(struct desc_writer *w, const struct ctrpp_provider_desc *d)
{
        struct pl_desc_header h = {
                .magic = PL_DESC_MAGIC, .version = PL_DESC_VERSION,
                .header_size = sizeof(h), .blob_size = w->size,
                .callback_custom = d->callback_custom, .kernel_mode = d->kernel_mode,
                .resource_base = d->resource_base, .n_countersets = d->n_countersets,
                .n_counters = w->next_counter, .csets_off = sizeof(h),
                .counters_off = w->counters_off, .strings_off = w->strings_off,
                .strings_size = w->strings_size,
                .name = string_put(w, d->name), .symbol = string_put(w, d->symbol),
                .application_identity = string_put(w, d->application_identity),
                .schema_version = string_put(w, d->schema_version),
                .manifest = string_put(w, d->manifest),
        };

        memcpy(h.guid, &d->guid, sizeof(h.guid));
        memcpy(w->blob, &h, sizeof(h));
}

static int desc_publish_locked(struct pl_provider *p, const struct ctrpp_provider_desc *d,
                               struct desc_writer *w)
{
        uint64_t off;

        if (__atomic_load_n(&p->hdr->desc_size, __ATOMIC_RELAXED) != 0)
                return -EEXIST;
        off = pl_heap_take(p, w->size);
        if (off == 0)
                return -ENOMEM;
        w->blob = p->base + off;
        /* Fresh heap is zero, but the padding must be zero whatever was there. */
        memset(w->blob, 0, w->size);
        for (uint32_t i = 0; i < d->n_countersets; i++)
                cset_put(w, i, &d->countersets[i]);
        /* Last: n_counters is what the counterset walk counted. */
        header_put(w, d);
        p->hdr->desc_off = off;
        /* Readers acquire-load desc_size first: everything above is visible to them. */
        __atomic_store_n(&p->hdr->desc_size, (uint64_t) w->size, __ATOMIC_RELEASE);
        return 0;
}

int pl_set_provider_description(HANDLE Provider, const struct ctrpp_provider_desc *Description)
{
        struct pl_provider *p = Provider;
        struct desc_size z = { 0 };
        struct desc_writer w;
        int r;

        if (!p || p->magic != PL_PROVIDER_MAGIC || !Description)
                return -EINVAL;
        r = desc_measure(p, Description, &z);
        if (r == 0)
                r = desc_plan(Description, &z, &w);
        if (r < 0)
                return r;
        /* The lock of heap allocation and counterset publication. */
        pthread_mutex_lock(&p->lock);
        r = desc_publish_locked(p, Description, &w);
        pthread_mutex_unlock(&p->lock);
        return r;
}
