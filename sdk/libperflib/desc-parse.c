/* SPDX-License-Identifier: MIT */
/*
 * The reader's side of the self-description blob (segment.h): validating
 * an untrusted blob and turning it into a struct ctrpp_provider_desc tree.
 * The blob is a private copy, so it cannot change between a check and the
 * use of what was checked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "desc-parse.h"
#include "perflib.h"
#include "segment.h"
#include "utf.h"

/* The tree, its arrays and the string table in one allocation. */
struct desc_tree {
        struct ctrpp_provider_desc d;
        struct ctrpp_counterset_desc *csets;
        struct ctrpp_counter_desc *counters;
        char *strings;
};

struct desc_parse {
        const uint8_t *blob;
        struct pl_desc_header h;
        struct desc_tree *t;
};

/* The sections lie in order, aligned, without overlap, inside the blob. */
static bool sections_ok(const struct pl_desc_header *h, uint64_t size)
{
        uint64_t csets_end = h->csets_off + (uint64_t) h->n_countersets *
                                            sizeof(struct pl_desc_counterset);
        uint64_t counters_end = h->counters_off + (uint64_t) h->n_counters *
                                                  sizeof(struct pl_desc_counter);

        if (h->csets_off % PL_SEG_ALIGN || h->counters_off % PL_SEG_ALIGN ||
            h->strings_off % PL_SEG_ALIGN)
                return false;
        return h->header_size <= h->csets_off && csets_end <= h->counters_off &&
               counters_end <= h->strings_off &&
               (uint64_t) h->strings_off + h->strings_size <= size;
}

static bool header_ok(const struct pl_desc_header *h, uint64_t size)
{
        if (h->magic != PL_DESC_MAGIC || h->version != PL_DESC_VERSION ||
            h->header_size < sizeof(*h) || h->header_size % PL_SEG_ALIGN != 0 ||
            h->blob_size != size)
                return false;
        if (h->n_countersets > PL_DESC_MAX_COUNTERSETS)
                return false;
        return sections_ok(h, size);
}

/* The string table ends in a NUL and is UTF-8 throughout. */
static bool strings_ok(const struct desc_parse *s)
{
        const char *t = (const char *) s->blob + s->h.strings_off;
        uint32_t n = s->h.strings_size;

        return n == 0 || (t[n - 1] == '\0' && pl_utf8_valid(t, n));
}

/*
 * A string field: absent, or the start of a string of the table (so it
 * ends at the table's NUL and is valid UTF-8 on its own).
 */
static int string_get(const struct desc_parse *s, uint32_t off, const char **ret)
{
        const struct pl_desc_header *h = &s->h;

        if (off == PL_DESC_NO_STRING) {
                *ret = NULL;
                return 0;
        }
        if (off < h->strings_off || off - h->strings_off >= h->strings_size)
                return -EBADMSG;
        if (off > h->strings_off && s->blob[off - 1] != '\0')
                return -EBADMSG;
        *ret = s->t->strings + (off - h->strings_off);
        return 0;
}

/* Resolves n string fields into n pointers; out[i] pairs with off[i]. */
static int strings_get(const struct desc_parse *s, const uint32_t *off, const char **out[],
                       size_t n)
{
        for (size_t i = 0; i < n; i++) {
                int k = string_get(s, off[i], out[i]);
                if (k < 0)
                        return k;
        }
        return 0;
}

static int counter_parse(const struct desc_parse *s, uint32_t index,
                         struct ctrpp_counter_desc *c)
{
        struct pl_desc_counter o;

        memcpy(&o, s->blob + s->h.counters_off + (uint64_t) index * sizeof(o), sizeof(o));
        *c = (struct ctrpp_counter_desc) {
                .id = o.id, .type = o.type, .attrib = o.attrib, .size = o.size,
                .detail_level = o.detail_level, .default_scale = o.default_scale,
                .aggregate = o.aggregate, .base_id = o.base_id,
                .perf_time_id = o.perf_time_id, .perf_freq_id = o.perf_freq_id,
                .multi_counter_id = o.multi_counter_id, .name_id = o.name_id,
                .description_id = o.description_id,
        };
        const uint32_t off[] = { o.symbol, o.uri, o.name, o.description };
        const char **out[] = { &c->symbol, &c->uri, &c->name, &c->description };
        return strings_get(s, off, out, sizeof(off) / sizeof(off[0]));
}

/* Counterset index, whose counters must start at *next (the ones before it). */
static int cset_parse(const struct desc_parse *s, uint32_t index, uint32_t *next)
{
        struct ctrpp_counterset_desc *cs = &s->t->csets[index];
        struct pl_desc_counterset o;

        memcpy(&o, s->blob + s->h.csets_off + (uint64_t) index * sizeof(o), sizeof(o));
        if (o.first_counter != *next || o.n_counters > PL_DESC_MAX_COUNTERS ||
            o.n_counters > s->h.n_counters - *next)
                return -EBADMSG;
        *cs = (struct ctrpp_counterset_desc) {
                .instance_type = o.instance_type, .name_id = o.name_id,
                .description_id = o.description_id, .n_counters = o.n_counters,
                .counters = o.n_counters ? s->t->counters + o.first_counter : NULL,
        };
        memcpy(&cs->guid, o.guid, sizeof(cs->guid));
        const uint32_t off[] = { o.symbol, o.uri, o.name, o.description, o.instances };
        const char **out[] = { &cs->symbol, &cs->uri, &cs->name, &cs->description,
                               &cs->instances };
        int k = strings_get(s, off, out, sizeof(off) / sizeof(off[0]));
        for (uint32_t i = 0; k == 0 && i < o.n_counters; i++)
                k = counter_parse(s, o.first_counter + i, s->t->counters + o.first_counter + i);
        *next += o.n_counters;
        return k;
}

static int provider_parse(const struct desc_parse *s)
{
        const struct pl_desc_header *h = &s->h;
        struct ctrpp_provider_desc *d = &s->t->d;
        uint32_t next = 0;
        int k;

        *d = (struct ctrpp_provider_desc) {
                .version = CTRPP_DESCRIPTION_VERSION, .size = sizeof(*d),
                .callback_custom = h->callback_custom, .kernel_mode = h->kernel_mode,
                .resource_base = h->resource_base, .n_countersets = h->n_countersets,
                .countersets = h->n_countersets ? s->t->csets : NULL,
        };
        memcpy(&d->guid, h->guid, sizeof(d->guid));
        const uint32_t off[] = { h->name, h->symbol, h->application_identity,
                                 h->schema_version, h->manifest };
        const char **out[] = { &d->name, &d->symbol, &d->application_identity,
                               &d->schema_version, &d->manifest };
        k = strings_get(s, off, out, sizeof(off) / sizeof(off[0]));
        for (uint32_t i = 0; k == 0 && i < h->n_countersets; i++)
                k = cset_parse(s, i, &next);
        /* Every counter belongs to exactly one counterset. */
        if (k == 0 && next != h->n_counters)
                k = -EBADMSG;
        return k;
}

/* Sized from the validated header, so bounded by the blob's size. */
static struct desc_tree *tree_new(const struct pl_desc_header *h)
{
        size_t csets = (size_t) h->n_countersets * sizeof(struct ctrpp_counterset_desc);
        size_t counters = (size_t) h->n_counters * sizeof(struct ctrpp_counter_desc);
        struct desc_tree *t = malloc(sizeof(*t) + csets + counters + h->strings_size);

        if (!t)
                return NULL;
        t->csets = (struct ctrpp_counterset_desc *) (t + 1);
        t->counters = (struct ctrpp_counter_desc *) ((uint8_t *) t->csets + csets);
        t->strings = (char *) t->counters + counters;
        return t;
}

int pl_desc_parse(const uint8_t *blob, uint64_t size, struct ctrpp_provider_desc **ret)
{
        struct desc_parse s = { .blob = blob };
        int k;

        if (!blob || !ret)
                return -EINVAL;
        if (size < sizeof(s.h) || size > PL_SEG_MAX_DESC_SIZE || size % PL_SEG_ALIGN != 0)
                return -EBADMSG;
        memcpy(&s.h, blob, sizeof(s.h));
        if (!header_ok(&s.h, size) || !strings_ok(&s))
                return -EBADMSG;
        s.t = tree_new(&s.h);
        if (!s.t)
                return -ENOMEM;
        memcpy(s.t->strings, blob + s.h.strings_off, s.h.strings_size);
        k = provider_parse(&s);
        if (k < 0) {
                free(s.t);
                return k;
        }
        /* d is the first member: free(*ret) frees the whole tree. */
        *ret = &s.t->d;
        return 0;
}
