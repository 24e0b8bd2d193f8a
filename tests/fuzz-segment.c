/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness for the segment reader: any byte string handed to
 * pl_reader_open_memory must be rejected cleanly or read without touching
 * memory outside it.  Built with libFuzzer (clang -fsanitize=fuzzer) or,
 * through fuzz-main.c and test-fuzz-corpus.c, as an ordinary program.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz-segment.h"
#include "reader.h"

/* Keeps the values read observable so that nothing is optimised away. */
static volatile uint64_t fz_sink;

static void fz_touch_snapshot(const struct pl_snapshot *s)
{
        uint64_t sum = s->generation + s->refs_stale;

        for (uint32_t i = 0; i < s->n_instances; i++) {
                const struct pl_instance *in = &s->instances[i];
                sum += in->instance_id + in->dir_slot + in->seq + in->name_len;
                sum += (uint64_t) wcslen(in->name);
                for (uint32_t v = 0; v < in->num_values; v++)
                        sum += in->values[v];
        }
        fz_sink += sum;
}

static void fz_snapshot(struct pl_reader *r, uint32_t index, unsigned flags)
{
        struct pl_snapshot *s = NULL;

        if (pl_reader_snapshot(r, index, flags, &s) == 0)
                fz_touch_snapshot(s);
        pl_snapshot_free(s);
}

/* Values only, as perflibd reads them, and the name of each record. */
static void fz_values(struct pl_reader *r, uint32_t index)
{
        static wchar_t name[PL_SEG_MAX_NAME_BYTES / sizeof(wchar_t)];
        struct pl_values v = { 0 };
        uint32_t len;

        if (pl_reader_values(r, index, 0, &v) == 0) {
                for (uint32_t i = 0; i < v.n_instances; i++) {
                        const struct pl_value_rec *rec = pl_values_at(&v, i);

                        for (uint32_t k = 0; k < rec->num_values; k++)
                                fz_sink += rec->values[k];
                        if (pl_reader_rec_name(r, index, rec, name, &len) == 0)
                                fz_sink += len + (uint64_t) name[0];
                }
        }
        pl_reader_values_done(&v);
}

static void fz_countersets(struct pl_reader *r)
{
        const struct pl_counterset *c, *found;
        int n = pl_reader_counterset_count(r);

        for (int i = 0; i < n; i++) {
                if (pl_reader_counterset(r, (uint32_t) i, &c) < 0)
                        continue;
                fz_sink += c->num_counters + c->data_size + c->num_refs;
                for (uint32_t k = 0; k < c->num_counters; k++)
                        fz_sink += c->counters[k].offset + c->counters[k].size;
                if (pl_reader_find_counterset(r, &c->guid, &found) == 0)
                        fz_sink += found->index;
                /* Per-counterset snapshots of the first few only: bounded cost. */
                if (i < 4) {
                        fz_snapshot(r, (uint32_t) i, 0);
                        fz_values(r, (uint32_t) i);
                }
        }
}

static void fz_touch_string(const char *s)
{
        if (s)
                fz_sink += strlen(s);
}

static void fz_description(struct pl_reader *r)
{
        const struct ctrpp_provider_desc *d;

        if (pl_reader_description(r, &d) < 0)
                return;
        fz_touch_string(d->name);
        fz_touch_string(d->manifest);
        for (uint32_t i = 0; i < d->n_countersets; i++) {
                const struct ctrpp_counterset_desc *cs = &d->countersets[i];
                fz_touch_string(cs->name);
                fz_touch_string(cs->instances);
                for (uint32_t k = 0; k < cs->n_counters; k++) {
                        fz_sink += cs->counters[k].id;
                        fz_touch_string(cs->counters[k].name);
                        fz_touch_string(cs->counters[k].description);
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct pl_reader *r = NULL;
        GUID g;
        uint32_t pid;

        if (pl_reader_open_memory(data, size, &r) < 0)
                return 0;
        if (pl_reader_provider(r, &g, &pid) == 0)
                fz_sink += pid + g.Data1;
        fz_countersets(r);
        fz_description(r);
        fz_snapshot(r, PL_ALL_COUNTERSETS, PL_SNAPSHOT_COLLECT);
        /* A memory image has no provider behind it. */
        (void) pl_reader_alive(r);
        pl_reader_close(r);
        return 0;
}

/* ---- deterministic mutations of the valid image ---- */

struct fz_rng {
        uint64_t s;
};

/* splitmix64: tiny, good enough, and the same on every platform. */
static uint64_t fz_next(struct fz_rng *g)
{
        uint64_t z = (g->s += UINT64_C(0x9E3779B97F4A7C15));

        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        return z ^ (z >> 31);
}

static uint64_t fz_below(struct fz_rng *g, uint64_t n)
{
        return n ? fz_next(g) % n : 0;
}

/* A field of the image and its width, for the targeted mutations. */
struct fz_field {
        uint64_t off;
        uint8_t width;
};

static size_t fz_fields(const struct fz_image *img, struct fz_field *f)
{
        size_t n = 0;

#define FZ_ADD(o, w) (f[n++] = (struct fz_field) { .off = (o), .width = (w) })
        FZ_ADD(FZ_HDR_FIELD(header_size), 4);
        FZ_ADD(FZ_HDR_FIELD(segment_size), 8);
        FZ_ADD(FZ_HDR_FIELD(cset_table_off), 8);
        FZ_ADD(FZ_HDR_FIELD(cset_capacity), 4);
        FZ_ADD(FZ_HDR_FIELD(cset_count), 4);
        FZ_ADD(FZ_HDR_FIELD(dir_off), 8);
        FZ_ADD(FZ_HDR_FIELD(dir_capacity), 4);
        FZ_ADD(FZ_HDR_FIELD(dir_high), 4);
        FZ_ADD(FZ_HDR_FIELD(heap_off), 8);
        FZ_ADD(FZ_HDR_FIELD(desc_off), 8);
        FZ_ADD(FZ_HDR_FIELD(desc_size), 8);
        FZ_ADD(FZ_DESC_FIELD(img, header_size), 4);
        FZ_ADD(FZ_DESC_FIELD(img, blob_size), 4);
        FZ_ADD(FZ_DESC_FIELD(img, n_countersets), 4);
        FZ_ADD(FZ_DESC_FIELD(img, n_counters), 4);
        FZ_ADD(FZ_DESC_FIELD(img, csets_off), 4);
        FZ_ADD(FZ_DESC_FIELD(img, counters_off), 4);
        FZ_ADD(FZ_DESC_FIELD(img, strings_off), 4);
        FZ_ADD(FZ_DESC_FIELD(img, strings_size), 4);
        FZ_ADD(FZ_DESC_FIELD(img, name), 4);
        FZ_ADD(FZ_DESC_CSET_FIELD(img, n_counters), 4);
        FZ_ADD(FZ_DESC_CSET_FIELD(img, first_counter), 4);
        FZ_ADD(FZ_DESC_CSET_FIELD(img, name), 4);
        FZ_ADD(FZ_DESC_COUNTER_FIELD(img, 1, name), 4);
        FZ_ADD(FZ_CSET_TABLE_OFF, 8);
        FZ_ADD(FZ_CSET_FIELD(num_counters), 4);
        FZ_ADD(FZ_CSET_FIELD(data_size), 4);
        FZ_ADD(FZ_CSET_FIELD(num_refs), 4);
        FZ_ADD(FZ_CSET_FIELD(index), 4);
        for (uint32_t i = 0; i < FZ_N_COUNTERS; i++) {
                FZ_ADD(FZ_COUNTER_FIELD(i, type), 4);
                FZ_ADD(FZ_COUNTER_FIELD(i, size), 4);
                FZ_ADD(FZ_COUNTER_FIELD(i, offset), 4);
                FZ_ADD(FZ_COUNTER_FIELD(i, ref_index), 4);
        }
        for (uint32_t k = 0; k < FZ_N_INSTANCES; k++) {
                FZ_ADD(FZ_DIR_ENTRY(k), 8);
                FZ_ADD(img->inst_off[k], 4);    /* seq */
                FZ_ADD(img->inst_off[k] + 4, 4);        /* dir_slot */
                FZ_ADD(FZ_INST_FIELD(img, k, dwSize), 4);
                FZ_ADD(FZ_INST_FIELD(img, k, InstanceNameOffset), 4);
                FZ_ADD(FZ_INST_FIELD(img, k, InstanceNameSize), 4);
        }
#undef FZ_ADD
        return n;
}

#define FZ_MAX_FIELDS 80

static uint64_t fz_extreme(struct fz_rng *g, const struct fz_image *img)
{
        const uint64_t v[] = {
                0, 1, 3, 7, 8, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFF8,
                UINT64_C(0xFFFFFFFFFFFFFFFF), UINT64_C(0x8000000000000000), PL_SEG_MAX_SIZE,
                img->size, img->size - 8, img->size + 8, PL_DIR_ENTRY(img->inst_off[0], 1),
                PL_DIR_ENTRY(img->size - 8, 0), PL_SEG_MAX_COUNTERS, PL_SEG_MAX_NAME_BYTES,
        };
        uint64_t x = v[fz_below(g, sizeof(v) / sizeof(v[0]))];

        /* Sometimes nudge it by a little, to hit off-by-one checks. */
        if (fz_below(g, 4) == 0)
                x += fz_below(g, 17) - 8;
        return x;
}

static void fz_set_field(struct fz_rng *g, struct fz_image *img)
{
        struct fz_field f[FZ_MAX_FIELDS];
        size_t n = fz_fields(img, f);
        const struct fz_field *p = &f[fz_below(g, n)];
        uint64_t v = fz_extreme(g, img);

        memcpy(img->data + p->off, &v, p->width);
}

static void fz_flip_bytes(struct fz_rng *g, struct fz_image *img, uint64_t span)
{
        uint64_t n = 1 + fz_below(g, 8);

        for (uint64_t i = 0; i < n; i++)
                img->data[fz_below(g, span)] ^= (uint8_t) (1 + fz_below(g, 255));
}

/*
 * A name size with a dwSize to match, so that the block passes the
 * consistency checks and only its bounds are left to catch it.
 */
static void fz_set_name_size(struct fz_rng *g, struct fz_image *img)
{
        uint32_t k = (uint32_t) fz_below(g, FZ_N_INSTANCES);
        uint32_t ns = (uint32_t) fz_extreme(g, img) & ~UINT32_C(3);

        fz_put32(img, FZ_INST_FIELD(img, k, InstanceNameSize), ns);
        fz_put32(img, FZ_INST_FIELD(img, k, dwSize),
                 (uint32_t) (sizeof(PERF_COUNTERSET_INSTANCE) + FZ_DATA_SIZE + ((ns + 7u) & ~7u)));
}

static void fz_mutate_once(struct fz_rng *g, struct fz_image *img)
{
        switch (fz_below(g, 6)) {
        case 0:         /* anywhere */
                fz_flip_bytes(g, img, img->size);
                break;
        case 1:         /* where the structure is */
                fz_flip_bytes(g, img, img->heap_end);
                break;
        case 2:
                img->size = fz_below(g, img->size);
                break;
        case 3:
                fz_set_name_size(g, img);
                break;
        default:
                fz_set_field(g, img);
                break;
        }
}

unsigned pl_fuzz_mutations(unsigned iterations, int (*fn)(const uint8_t *data, size_t size))
{
        struct fz_rng g = { .s = UINT64_C(0x5E9A5E9A) };
        struct fz_image *img = malloc(sizeof(*img));
        unsigned i;

        if (!img)
                return 0;
        for (i = 0; i < iterations; i++) {
                fz_build_image(img);
                /* The first input is the valid image itself. */
                uint64_t rounds = i == 0 ? 0 : 1 + fz_below(&g, 3);
                for (uint64_t k = 0; k < rounds; k++)
                        fz_mutate_once(&g, img);
                /* A heap copy of exactly size bytes, so ASan sees any overread. */
                uint8_t *buf = malloc(img->size ? img->size : 1);
                if (!buf)
                        break;
                memcpy(buf, img->data, img->size);
                fn(buf, img->size);
                free(buf);
        }
        free(img);
        return i;
}
