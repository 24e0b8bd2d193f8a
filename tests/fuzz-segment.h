/* SPDX-License-Identifier: MIT */
/*
 * The segment fuzz harness (fuzz-segment.c) and a hand-built valid segment
 * image shared by it, fuzz-main.c, test-fuzz-corpus.c and test-corrupt.c.
 *
 * The image builder is static inline here rather than in fuzz-segment.c
 * because test-corrupt is linked without the harness.  It writes the layout
 * of segment.h field by field, independently of the provider runtime, so a
 * test built on it checks the reader against the format, not against
 * whatever the provider happens to write.
 */
#ifndef PL_TESTS_FUZZ_SEGMENT_H
#define PL_TESTS_FUZZ_SEGMENT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "perflib.h"
#include "segment.h"

/* libFuzzer's entry: opens data as a segment and reads all of it.  Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Runs fn over `iterations` deterministic mutations of the valid image
 * (the first one unmutated): byte flips, truncations, and size, count and
 * offset fields set to extreme values.  Returns the number of inputs run.
 */
unsigned pl_fuzz_mutations(unsigned iterations, int (*fn)(const uint8_t *data, size_t size));

/* ---- the valid image ---- */

#define FZ_SEG_SIZE             4096u
#define FZ_CSET_CAPACITY        4u
#define FZ_DIR_CAPACITY         8u
#define FZ_CSET_TABLE_OFF       256u
#define FZ_DIR_OFF              (FZ_CSET_TABLE_OFF + 8u * FZ_CSET_CAPACITY)
#define FZ_HEAP_OFF             384u
#define FZ_CSET_OFF             FZ_HEAP_OFF
#define FZ_N_COUNTERS           3u
#define FZ_DATA_SIZE            24u
#define FZ_N_INSTANCES          3u
#define FZ_GENERATION           4u

static const GUID fz_provider_guid = { 0x5e9a0001, 0x1234, 0x5678, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static const GUID fz_cset_guid = { 0x5e9a0002, 0x1234, 0x5678, { 8, 7, 6, 5, 4, 3, 2, 1 } };

/* Counter 0: 4 bytes at 0; 1: 8 bytes at 8; 2: 8 bytes at 16, by reference. */
static const uint32_t fz_counter_size[FZ_N_COUNTERS] = { 4, 8, 8 };
static const uint32_t fz_counter_offset[FZ_N_COUNTERS] = { 0, 8, 16 };

/* Instance k lives in directory slot fz_slot[k]; slot 1 is empty on purpose. */
static const uint32_t fz_slot[FZ_N_INSTANCES] = { 0, 2, 3 };
static const wchar_t *const fz_name[FZ_N_INSTANCES] = { L"alpha", L"beta", L"gamma-instance" };
static const uint32_t fz_id[FZ_N_INSTANCES] = { 10, 20, 30 };

static inline uint64_t fz_value(uint32_t inst, uint32_t counter)
{
        static const uint64_t base[FZ_N_COUNTERS] = {
                UINT64_C(0xA0000000), UINT64_C(0x0123456789ABCDEF), UINT64_C(0xFEDCBA9800000000),
        };
        return base[counter] + inst;
}

struct fz_image {
        _Alignas(8) uint8_t data[FZ_SEG_SIZE];
        size_t size;
        uint64_t inst_off[FZ_N_INSTANCES];      /* of each struct pl_seg_instance */
        uint64_t heap_end;                      /* first unused heap byte */
        uint64_t desc_off;                      /* the self-description blob */
        uint32_t desc_size;
};

/* Byte offsets of the interesting fields, for tests that corrupt them. */
#define FZ_HDR_FIELD(f)         offsetof(struct pl_seg_header, f)
#define FZ_CSET_FIELD(f)        (FZ_CSET_OFF + offsetof(struct pl_seg_counterset, f))
#define FZ_COUNTER_FIELD(i, f)  (FZ_CSET_OFF + sizeof(struct pl_seg_counterset) + \
                                 (i) * sizeof(struct pl_seg_counter) + offsetof(struct pl_seg_counter, f))
#define FZ_INST_FIELD(img, k, f) ((img)->inst_off[k] + sizeof(struct pl_seg_instance) + \
                                  offsetof(PERF_COUNTERSET_INSTANCE, f))
#define FZ_DIR_ENTRY(k)         (FZ_DIR_OFF + 8u * fz_slot[k])

static inline void fz_put32(struct fz_image *img, uint64_t off, uint32_t v)
{
        memcpy(img->data + off, &v, sizeof(v));
}

static inline void fz_put64(struct fz_image *img, uint64_t off, uint64_t v)
{
        memcpy(img->data + off, &v, sizeof(v));
}

static inline void fz_build_header(struct fz_image *img)
{
        struct pl_seg_header h = {
                .magic = PL_SEG_MAGIC,
                .version = PL_SEG_VERSION,
                .header_size = sizeof(struct pl_seg_header),
                .segment_size = FZ_SEG_SIZE,
                .pid = 4242,
                .cset_table_off = FZ_CSET_TABLE_OFF,
                .cset_capacity = FZ_CSET_CAPACITY,
                .cset_count = 1,
                .dir_off = FZ_DIR_OFF,
                .dir_capacity = FZ_DIR_CAPACITY,
                .dir_high = fz_slot[FZ_N_INSTANCES - 1] + 1,
                .heap_off = FZ_HEAP_OFF,
                .generation = FZ_GENERATION,
                .instance_count = FZ_N_INSTANCES,
        };
        memcpy(h.provider_guid, &fz_provider_guid, sizeof(GUID));
        memcpy(img->data, &h, sizeof(h));
}

static inline void fz_build_counterset(struct fz_image *img)
{
        static const uint32_t type[FZ_N_COUNTERS] = {
                PERF_COUNTER_RAWCOUNT, PERF_COUNTER_LARGE_RAWCOUNT, PERF_COUNTER_BULK_COUNT,
        };
        struct pl_seg_counterset d = {
                .instance_type = PERF_COUNTERSET_MULTI_INSTANCES,
                .num_counters = FZ_N_COUNTERS,
                .data_size = FZ_DATA_SIZE,
                .num_refs = 1,
                .index = 0,
        };
        memcpy(d.guid, &fz_cset_guid, sizeof(GUID));
        memcpy(img->data + FZ_CSET_OFF, &d, sizeof(d));
        for (uint32_t i = 0; i < FZ_N_COUNTERS; i++) {
                struct pl_seg_counter c = {
                        .id = i + 1,
                        .type = type[i],
                        .attrib = i == 2 ? PERF_ATTRIB_BY_REFERENCE : 0,
                        .size = fz_counter_size[i],
                        .offset = fz_counter_offset[i],
                        .ref_index = i == 2 ? 0 : PL_SEG_NO_REF,
                };
                memcpy(img->data + FZ_CSET_OFF + sizeof(d) + i * sizeof(c), &c, sizeof(c));
        }
        fz_put64(img, FZ_CSET_TABLE_OFF, FZ_CSET_OFF);
        img->heap_end = FZ_CSET_OFF + sizeof(d) + FZ_N_COUNTERS * sizeof(struct pl_seg_counter);
}

/* Appends instance k to the heap and publishes it in its directory slot. */
static inline void fz_build_instance(struct fz_image *img, uint32_t k)
{
        uint32_t name_bytes = (uint32_t) ((wcslen(fz_name[k]) + 1) * sizeof(wchar_t));
        uint32_t name_off = (uint32_t) sizeof(PERF_COUNTERSET_INSTANCE) + FZ_DATA_SIZE;
        uint64_t off = img->heap_end;
        struct pl_seg_instance si = { .seq = 2 * (k + 1), .dir_slot = fz_slot[k] };
        PERF_COUNTERSET_INSTANCE ci = {
                .CounterSetGuid = fz_cset_guid,
                .dwSize = name_off + ((name_bytes + 7u) & ~7u),
                .InstanceId = fz_id[k],
                .InstanceNameOffset = name_off,
                .InstanceNameSize = name_bytes,
        };
        uint8_t *p = img->data + off;

        memcpy(p, &si, sizeof(si));
        memcpy(p + sizeof(si), &ci, sizeof(ci));
        for (uint32_t i = 0; i < FZ_N_COUNTERS; i++) {
                uint64_t v = fz_value(k, i);
                memcpy(p + sizeof(si) + sizeof(ci) + fz_counter_offset[i], &v, fz_counter_size[i]);
        }
        memcpy(p + sizeof(si) + name_off, fz_name[k], name_bytes);
        fz_put64(img, FZ_DIR_OFF + 8u * fz_slot[k], PL_DIR_ENTRY(off, 0));
        img->inst_off[k] = off;
        img->heap_end = off + sizeof(si) + ci.dwSize;
}

/*
 * The self-description: the counterset with 2 described counters, and a
 * string table of fz_desc_strings (one of them not ASCII).  Field offsets
 * within the blob, for tests that corrupt it:
 */
#define FZ_DESC_CSETS_OFF       sizeof(struct pl_desc_header)
#define FZ_DESC_COUNTERS_OFF    (FZ_DESC_CSETS_OFF + sizeof(struct pl_desc_counterset))
#define FZ_DESC_N_COUNTERS      2u
#define FZ_DESC_STRINGS_OFF     (FZ_DESC_COUNTERS_OFF + FZ_DESC_N_COUNTERS * sizeof(struct pl_desc_counter))
#define FZ_DESC_FIELD(img, f)   ((img)->desc_off + offsetof(struct pl_desc_header, f))
#define FZ_DESC_CSET_FIELD(img, f) ((img)->desc_off + FZ_DESC_CSETS_OFF + \
                                    offsetof(struct pl_desc_counterset, f))
#define FZ_DESC_COUNTER_FIELD(img, i, f) ((img)->desc_off + FZ_DESC_COUNTERS_OFF + \
                                          (i) * sizeof(struct pl_desc_counter) + \
                                          offsetof(struct pl_desc_counter, f))
/* "provider", "counterset", "first", "zweite Z\u00e4hler", concatenated with their NULs. */
static const char fz_desc_strings[] = "provider\0counterset\0first\0zweite Z\xc3\xa4hler";
#define FZ_DESC_STRINGS_SIZE    ((sizeof(fz_desc_strings) + 7u) & ~7u)
#define FZ_DESC_STR(i)          ((uint32_t) (FZ_DESC_STRINGS_OFF + (i)))
/* Offsets of the four strings inside the table. */
#define FZ_DESC_S_PROVIDER      0u
#define FZ_DESC_S_CSET          9u
#define FZ_DESC_S_FIRST         20u
#define FZ_DESC_S_SECOND        26u

static inline void fz_build_description(struct fz_image *img)
{
        uint64_t off = (img->heap_end + 7u) & ~UINT64_C(7);
        uint32_t size = (uint32_t) (FZ_DESC_STRINGS_OFF + FZ_DESC_STRINGS_SIZE);
        struct pl_desc_header h = {
                .magic = PL_DESC_MAGIC, .version = PL_DESC_VERSION,
                .header_size = sizeof(h), .blob_size = size,
                .resource_base = 1000, .n_countersets = 1, .n_counters = FZ_DESC_N_COUNTERS,
                .csets_off = FZ_DESC_CSETS_OFF, .counters_off = FZ_DESC_COUNTERS_OFF,
                .strings_off = FZ_DESC_STRINGS_OFF, .strings_size = FZ_DESC_STRINGS_SIZE,
                .name = FZ_DESC_STR(FZ_DESC_S_PROVIDER),
        };
        struct pl_desc_counterset cs = {
                .instance_type = PERF_COUNTERSET_MULTI_INSTANCES, .name_id = 1002,
                .description_id = 1004, .n_counters = FZ_DESC_N_COUNTERS,
                .name = FZ_DESC_STR(FZ_DESC_S_CSET),
        };

        memcpy(h.guid, &fz_provider_guid, sizeof(GUID));
        memcpy(cs.guid, &fz_cset_guid, sizeof(GUID));
        memcpy(img->data + off, &h, sizeof(h));
        memcpy(img->data + off + FZ_DESC_CSETS_OFF, &cs, sizeof(cs));
        for (uint32_t i = 0; i < FZ_DESC_N_COUNTERS; i++) {
                struct pl_desc_counter c = {
                        .id = i + 1, .type = PERF_COUNTER_RAWCOUNT, .size = 4,
                        .aggregate = -1, .base_id = 0xFFFFFFFFu, .name_id = 1006 + 2 * i,
                        .name = FZ_DESC_STR(i ? FZ_DESC_S_SECOND : FZ_DESC_S_FIRST),
                };
                memcpy(img->data + off + FZ_DESC_COUNTERS_OFF + i * sizeof(c), &c, sizeof(c));
        }
        memcpy(img->data + off + FZ_DESC_STRINGS_OFF, fz_desc_strings, sizeof(fz_desc_strings));
        fz_put64(img, FZ_HDR_FIELD(desc_off), off);
        fz_put64(img, FZ_HDR_FIELD(desc_size), size);
        img->desc_off = off;
        img->desc_size = size;
        img->heap_end = off + size;
}

/*
 * A valid segment: one counterset of 3 counters, 3 named instances, and a
 * self-description.
 */
static inline void fz_build_image(struct fz_image *img)
{
        memset(img, 0, sizeof(*img));
        img->size = FZ_SEG_SIZE;
        fz_build_header(img);
        fz_build_counterset(img);
        for (uint32_t k = 0; k < FZ_N_INSTANCES; k++)
                fz_build_instance(img, k);
        fz_build_description(img);
        fz_put64(img, FZ_HDR_FIELD(heap_top), img->heap_end - FZ_HEAP_OFF);
}

#endif /* PL_TESTS_FUZZ_SEGMENT_H */
