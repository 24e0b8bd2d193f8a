/* SPDX-License-Identifier: MIT */
/*
 * The reader against hand-built segment images: a valid one is read
 * exactly, and each kind of corruption gets exactly its documented outcome.
 * A bad header or counterset is -EBADMSG; a bad instance block is left out
 * of the snapshot while the others are still read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wchar.h>
#include <cmocka.h>

#include "fuzz-segment.h"
#include "reader.h"

static struct fz_image corrupt_img;

static struct fz_image *corrupt_fresh(void)
{
        fz_build_image(&corrupt_img);
        return &corrupt_img;
}

static int corrupt_open(const struct fz_image *img, struct pl_reader **ret)
{
        return pl_reader_open_memory(img->data, img->size, ret);
}

static void corrupt_expect_open_fails(const struct fz_image *img)
{
        struct pl_reader *r = (struct pl_reader *) 0x1;

        assert_int_equal(corrupt_open(img, &r), -EBADMSG);
        /* ret_ parameters are written only on success. */
        assert_ptr_equal(r, (struct pl_reader *) 0x1);
}

/* Instance k of the image, read back exactly. */
static void corrupt_check_instance(const struct pl_instance *in, uint32_t k)
{
        assert_int_equal(in->cset_index, 0);
        assert_int_equal(in->instance_id, fz_id[k]);
        assert_int_equal(in->dir_slot, fz_slot[k]);
        assert_int_equal(in->seq, 2 * (k + 1));
        assert_int_equal(in->name_len, wcslen(fz_name[k]));
        assert_true(wcscmp(in->name, fz_name[k]) == 0);
        assert_int_equal(in->num_values, FZ_N_COUNTERS);
        for (uint32_t i = 0; i < FZ_N_COUNTERS; i++) {
                uint64_t want = fz_value(k, i);
                if (fz_counter_size[i] == 4)
                        want &= UINT32_MAX;
                assert_int_equal(in->values[i], want);
        }
}

/* The snapshot holds exactly the instances whose bit is set in `present`, in slot order. */
static void corrupt_check_snapshot(const struct pl_snapshot *s, unsigned present)
{
        uint32_t n = 0;

        assert_int_equal(s->generation, FZ_GENERATION);
        for (uint32_t k = 0; k < FZ_N_INSTANCES; k++) {
                if (!(present & (1u << k)))
                        continue;
                assert_true(n < s->n_instances);
                corrupt_check_instance(&s->instances[n++], k);
        }
        assert_int_equal(s->n_instances, n);
}

/*
 * The values-only read (pl_reader_values) gives a record for at least the
 * instances present; a record whose name turns out malformed is the one
 * extra it may give, and naming it fails.  The records are read twice into
 * the same buffer, as perflibd reuses it.
 */
static void corrupt_check_values(struct pl_reader *r, const struct fz_image *img,
                                 unsigned present)
{
        static wchar_t name[PL_SEG_MAX_NAME_BYTES / sizeof(wchar_t)];
        struct pl_values v = { 0 };

        for (int round = 0; round < 2; round++) {
                uint32_t k = 0;

                assert_int_equal(pl_reader_values(r, 0, 0, &v), 0);
                assert_int_equal(v.generation, FZ_GENERATION);
                assert_int_equal(v.num_values, FZ_N_COUNTERS);
                for (uint32_t i = 0; i < v.n_instances; i++) {
                        const struct pl_value_rec *rec = pl_values_at(&v, i);
                        struct pl_instance in = { .instance_id = rec->instance_id,
                                                  .dir_slot = rec->dir_slot, .seq = rec->seq,
                                                  .name = name, .num_values = rec->num_values,
                                                  .values = (uint64_t *) rec->values };

                        if (pl_reader_rec_name(r, 0, rec, name, &in.name_len) < 0)
                                continue;
                        while (k < FZ_N_INSTANCES && !(present & (1u << k)))
                                k++;
                        assert_true(k < FZ_N_INSTANCES);
                        assert_int_equal(rec->block_off, img->inst_off[k]);
                        corrupt_check_instance(&in, k++);
                }
                while (k < FZ_N_INSTANCES && !(present & (1u << k)))
                        k++;
                assert_int_equal(k, FZ_N_INSTANCES);
        }
        pl_reader_values_done(&v);
}

static void corrupt_expect_instances(const struct fz_image *img, unsigned present)
{
        struct pl_reader *r = NULL;
        struct pl_snapshot *s = NULL;

        assert_int_equal(corrupt_open(img, &r), 0);
        corrupt_check_values(r, img, present);
        assert_int_equal(pl_reader_snapshot(r, PL_ALL_COUNTERSETS, 0, &s), 0);
        corrupt_check_snapshot(s, present);
        pl_snapshot_free(s);
        assert_int_equal(pl_reader_snapshot(r, 0, 0, &s), 0);
        corrupt_check_snapshot(s, present);
        pl_snapshot_free(s);
        pl_reader_close(r);
}

/* The header is fine, counterset 0 is not. */
static void corrupt_expect_bad_cset(const struct fz_image *img)
{
        struct pl_reader *r = NULL;
        const struct pl_counterset *c = NULL;
        struct pl_snapshot *s = NULL;

        assert_int_equal(corrupt_open(img, &r), 0);
        assert_int_equal(pl_reader_counterset_count(r), 1);
        assert_int_equal(pl_reader_counterset(r, 0, &c), -EBADMSG);
        assert_null(c);
        assert_int_equal(pl_reader_find_counterset(r, &fz_cset_guid, &c), -ENOENT);
        assert_int_equal(pl_reader_snapshot(r, 0, 0, &s), -EBADMSG);
        assert_null(s);
        struct pl_values v = { .n_instances = 7 };
        assert_int_equal(pl_reader_values(r, 0, 0, &v), -EBADMSG);
        assert_int_equal(v.n_instances, 0);
        pl_reader_values_done(&v);
        /* All countersets: the broken one's instances are left out. */
        assert_int_equal(pl_reader_snapshot(r, PL_ALL_COUNTERSETS, 0, &s), 0);
        assert_int_equal(s->n_instances, 0);
        pl_snapshot_free(s);
        pl_reader_close(r);
}

static void corrupt_check_counterset(const struct pl_counterset *c)
{
        assert_true(memcmp(&c->guid, &fz_cset_guid, sizeof(GUID)) == 0);
        assert_int_equal(c->index, 0);
        assert_int_equal(c->instance_type, PERF_COUNTERSET_MULTI_INSTANCES);
        assert_int_equal(c->num_counters, FZ_N_COUNTERS);
        assert_int_equal(c->data_size, FZ_DATA_SIZE);
        assert_int_equal(c->num_refs, 1);
        for (uint32_t i = 0; i < FZ_N_COUNTERS; i++) {
                assert_int_equal(c->counters[i].id, i + 1);
                assert_int_equal(c->counters[i].size, fz_counter_size[i]);
                assert_int_equal(c->counters[i].offset, fz_counter_offset[i]);
        }
        assert_int_equal(c->counters[2].ref_index, 0);
        assert_int_equal(c->counters[0].ref_index, PL_SEG_NO_REF);
}

/* ---- the valid image ---- */

static void test_valid(void **state)
{
        struct pl_reader *r = NULL;
        const struct pl_counterset *c = NULL, *f = NULL;
        GUID g;
        uint32_t pid, status;

        assert_int_equal(corrupt_open(corrupt_fresh(), &r), 0);
        assert_int_equal(pl_reader_provider(r, &g, &pid), 0);
        assert_true(memcmp(&g, &fz_provider_guid, sizeof(g)) == 0);
        assert_int_equal(pid, 4242);
        assert_int_equal(pl_reader_counterset_count(r), 1);
        assert_int_equal(pl_reader_counterset(r, 0, &c), 0);
        corrupt_check_counterset(c);
        assert_int_equal(pl_reader_find_counterset(r, &fz_cset_guid, &f), 0);
        assert_ptr_equal(f, c);
        assert_int_equal(pl_reader_find_counterset(r, &fz_provider_guid, &f), -ENOENT);
        assert_int_equal(pl_reader_counterset(r, 1, &c), -ENOENT);
        /* No service behind a memory image. */
        assert_int_equal(pl_reader_alive(r), -ENOTCONN);
        assert_int_equal(pl_reader_notify(r, PERF_ADD_COUNTER, NULL, 0, &status), -ENOTCONN);
        pl_reader_close(r);
        corrupt_expect_instances(&corrupt_img, 0x7);
}

static void test_valid_collect_is_stale(void **state)
{
        struct pl_reader *r = NULL;
        struct pl_snapshot *s = NULL;

        assert_int_equal(corrupt_open(corrupt_fresh(), &r), 0);
        assert_int_equal(pl_reader_snapshot(r, PL_ALL_COUNTERSETS, 0, &s), 0);
        assert_false(s->refs_stale);
        pl_snapshot_free(s);
        /* By-reference counters and nobody to refresh them. */
        assert_int_equal(pl_reader_snapshot(r, PL_ALL_COUNTERSETS, PL_SNAPSHOT_COLLECT, &s), 0);
        assert_true(s->refs_stale);
        corrupt_check_snapshot(s, 0x7);
        pl_snapshot_free(s);
        assert_int_equal(pl_reader_snapshot(r, 1, 0, &s), -ENOENT);
        assert_int_equal(pl_reader_snapshot(r, 0, 0x80, &s), -EINVAL);
        struct pl_values v = { 0 };
        assert_int_equal(pl_reader_values(r, 0, 0, &v), 0);
        assert_false(v.refs_stale);
        assert_int_equal(pl_reader_values(r, 0, PL_SNAPSHOT_COLLECT, &v), 0);
        assert_true(v.refs_stale);
        assert_int_equal(v.n_instances, 3);
        assert_int_equal(pl_reader_values(r, 1, 0, &v), -ENOENT);
        assert_int_equal(pl_reader_values(r, PL_ALL_COUNTERSETS, 0, &v), -ENOENT);
        assert_int_equal(pl_reader_values(r, 0, PL_SNAPSHOT_NO_NAMES, &v), -EINVAL);
        pl_reader_values_done(&v);
        pl_reader_values_done(NULL);
        pl_reader_close(r);
}

/* The image in a memfd, opened through the descriptor. */
static int corrupt_memfd(const struct fz_image *img)
{
        int fd = memfd_create("corrupt", MFD_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, img->data, img->size), (ssize_t) img->size);
        return fd;
}

static void test_valid_fd(void **state)
{
        struct pl_reader *r = NULL;
        struct pl_snapshot *s = NULL;
        int fd = corrupt_memfd(corrupt_fresh());

        assert_int_equal(pl_reader_open_fd(fd, &r), 0);
        assert_int_equal(pl_reader_snapshot(r, PL_ALL_COUNTERSETS, 0, &s), 0);
        corrupt_check_snapshot(s, 0x7);
        pl_snapshot_free(s);
        pl_reader_close(r);
        /* The file shorter than segment_size claims. */
        assert_int_equal(ftruncate(fd, FZ_SEG_SIZE / 2), 0);
        assert_int_equal(pl_reader_open_fd(fd, &r), -EBADMSG);
        close(fd);
}

/*
 * Moving header fields are re-validated at every load: raise them past
 * their capacities after the reader has opened the segment.
 */
static void test_header_changes_after_open(void **state)
{
        struct pl_reader *r = NULL;
        struct pl_snapshot *s = NULL;
        int fd = corrupt_memfd(corrupt_fresh());
        uint8_t *w = mmap(NULL, FZ_SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        uint32_t v;

        assert_true(w != MAP_FAILED);
        assert_int_equal(pl_reader_open_fd(fd, &r), 0);
        v = FZ_DIR_CAPACITY + 1;
        memcpy(w + FZ_HDR_FIELD(dir_high), &v, sizeof(v));
        assert_int_equal(pl_reader_snapshot(r, PL_ALL_COUNTERSETS, 0, &s), -EBADMSG);
        v = FZ_DIR_CAPACITY;
        memcpy(w + FZ_HDR_FIELD(dir_high), &v, sizeof(v));
        assert_int_equal(pl_reader_snapshot(r, PL_ALL_COUNTERSETS, 0, &s), 0);
        corrupt_check_snapshot(s, 0x7);
        pl_snapshot_free(s);
        v = FZ_CSET_CAPACITY + 1;
        memcpy(w + FZ_HDR_FIELD(cset_count), &v, sizeof(v));
        assert_int_equal(pl_reader_counterset_count(r), -EBADMSG);
        assert_int_equal(pl_reader_snapshot(r, PL_ALL_COUNTERSETS, 0, &s), -EBADMSG);
        pl_reader_close(r);
        munmap(w, FZ_SEG_SIZE);
        close(fd);
}

/* ---- the header ---- */

static void test_bad_magic(void **state)
{
        struct fz_image *img = corrupt_fresh();

        img->data[0] ^= 1;
        corrupt_expect_open_fails(img);
}

static void test_bad_version(void **state)
{
        struct fz_image *img = corrupt_fresh();

        fz_put32(img, FZ_HDR_FIELD(version), PL_SEG_VERSION + 1);
        corrupt_expect_open_fails(img);
        fz_put32(img, FZ_HDR_FIELD(version), 0);
        corrupt_expect_open_fails(img);
}

static void test_bad_header_size(void **state)
{
        struct fz_image *img = corrupt_fresh();

        fz_put32(img, FZ_HDR_FIELD(header_size), sizeof(struct pl_seg_header) - 8);
        corrupt_expect_open_fails(img);
        fz_put32(img, FZ_HDR_FIELD(header_size), sizeof(struct pl_seg_header) + 4);
        corrupt_expect_open_fails(img);
}

static void test_truncated(void **state)
{
        struct fz_image *img = corrupt_fresh();
        struct pl_reader *r = NULL;

        assert_int_equal(pl_reader_open_memory(img->data, 0, &r), -EBADMSG);
        img->size = sizeof(struct pl_seg_header) - 1;
        corrupt_expect_open_fails(img);
        /* A whole header, but less than segment_size. */
        img->size = FZ_SEG_SIZE - 8;
        corrupt_expect_open_fails(img);
        img->size = FZ_HEAP_OFF;
        corrupt_expect_open_fails(img);
}

static void test_segment_size_huge(void **state)
{
        struct fz_image *img = corrupt_fresh();

        fz_put64(img, FZ_HDR_FIELD(segment_size), PL_SEG_MAX_SIZE + 8);
        corrupt_expect_open_fails(img);
        fz_put64(img, FZ_HDR_FIELD(segment_size), UINT64_MAX);
        corrupt_expect_open_fails(img);
        /* Smaller than the header itself. */
        fz_put64(img, FZ_HDR_FIELD(segment_size), 64);
        corrupt_expect_open_fails(img);
}

static void test_cset_count_over_capacity(void **state)
{
        struct fz_image *img = corrupt_fresh();

        fz_put32(img, FZ_HDR_FIELD(cset_count), FZ_CSET_CAPACITY + 1);
        corrupt_expect_open_fails(img);
        /* And a capacity beyond the format's limit. */
        fz_build_image(img);
        fz_put32(img, FZ_HDR_FIELD(cset_capacity), PL_SEG_MAX_COUNTERSETS + 1);
        corrupt_expect_open_fails(img);
}

static void test_dir_high_over_capacity(void **state)
{
        struct fz_image *img = corrupt_fresh();

        fz_put32(img, FZ_HDR_FIELD(dir_high), FZ_DIR_CAPACITY + 1);
        corrupt_expect_open_fails(img);
        fz_build_image(img);
        fz_put32(img, FZ_HDR_FIELD(dir_capacity), PL_SEG_MAX_INSTANCES + 1);
        corrupt_expect_open_fails(img);
}

/* Tables that leave the segment, overlap the header or each other, or are misaligned. */
static void test_bad_tables(void **state)
{
        static const struct { size_t field; uint64_t value; } cases[] = {
                { FZ_HDR_FIELD(cset_table_off), 8 },
                { FZ_HDR_FIELD(cset_table_off), FZ_CSET_TABLE_OFF + 4 },
                { FZ_HDR_FIELD(cset_table_off), FZ_DIR_OFF },
                { FZ_HDR_FIELD(cset_table_off), UINT64_MAX - 7 },
                { FZ_HDR_FIELD(dir_off), FZ_HEAP_OFF },
                { FZ_HDR_FIELD(dir_off), UINT64_MAX - 7 },
                { FZ_HDR_FIELD(heap_off), FZ_SEG_SIZE + 8 },
                { FZ_HDR_FIELD(heap_off), FZ_HEAP_OFF + 4 },
                { FZ_HDR_FIELD(heap_off), 128 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct fz_image *img = corrupt_fresh();
                fz_put64(img, cases[i].field, cases[i].value);
                corrupt_expect_open_fails(img);
        }
}

/* ---- the counterset descriptor ---- */

static void test_cset_offset_outside_heap(void **state)
{
        static const uint64_t offs[] = {
                8, FZ_DIR_OFF, FZ_HEAP_OFF - 8, FZ_SEG_SIZE - 8, FZ_SEG_SIZE, UINT64_MAX - 7,
        };

        for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
                struct fz_image *img = corrupt_fresh();
                fz_put64(img, FZ_CSET_TABLE_OFF, offs[i]);
                corrupt_expect_bad_cset(img);
        }
}

static void test_cset_offset_misaligned(void **state)
{
        struct fz_image *img = corrupt_fresh();

        fz_put64(img, FZ_CSET_TABLE_OFF, FZ_CSET_OFF + 4);
        corrupt_expect_bad_cset(img);
}

static void test_num_counters_huge(void **state)
{
        static const uint32_t values[] = { 0, PL_SEG_MAX_COUNTERS, PL_SEG_MAX_COUNTERS + 1, UINT32_MAX };

        for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
                struct fz_image *img = corrupt_fresh();
                fz_put32(img, FZ_CSET_FIELD(num_counters), values[i]);
                corrupt_expect_bad_cset(img);
        }
}

static void test_bad_cset_fields(void **state)
{
        static const struct { size_t field; uint32_t value; } cases[] = {
                { FZ_CSET_FIELD(data_size), FZ_DATA_SIZE + 4 },         /* not a multiple of 8 */
                { FZ_CSET_FIELD(data_size), PL_SEG_MAX_DATA_SIZE + 8 },
                { FZ_CSET_FIELD(num_refs), 0 },                         /* disagrees with ref_index */
                { FZ_CSET_FIELD(num_refs), FZ_N_COUNTERS + 1 },
                { FZ_CSET_FIELD(index), 1 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct fz_image *img = corrupt_fresh();
                fz_put32(img, cases[i].field, cases[i].value);
                corrupt_expect_bad_cset(img);
        }
}

static void test_counter_offset_beyond_data(void **state)
{
        static const struct { uint32_t counter; size_t field; uint32_t value; } cases[] = {
                { 1, offsetof(struct pl_seg_counter, offset), FZ_DATA_SIZE },
                { 1, offsetof(struct pl_seg_counter, offset), FZ_DATA_SIZE - 4 },      /* straddles the end */
                { 0, offsetof(struct pl_seg_counter, offset), UINT32_MAX - 3 },        /* wraps */
                { 1, offsetof(struct pl_seg_counter, offset), 4 },                     /* misaligned */
                { 0, offsetof(struct pl_seg_counter, size), 2 },                       /* numeric, not 4/8 */
                { 0, offsetof(struct pl_seg_counter, size), UINT32_MAX },
                { 2, offsetof(struct pl_seg_counter, ref_index), 1 },                  /* >= num_refs */
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct fz_image *img = corrupt_fresh();
                size_t at = FZ_CSET_OFF + sizeof(struct pl_seg_counterset) +
                            cases[i].counter * sizeof(struct pl_seg_counter) + cases[i].field;
                fz_put32(img, at, cases[i].value);
                corrupt_expect_bad_cset(img);
        }
}

/* A text counter may have any size that fits the data; its value reads as 0 if unaligned. */
static void test_variable_length_counter(void **state)
{
        struct fz_image *img = corrupt_fresh();
        struct pl_reader *r = NULL;
        const struct pl_counterset *c = NULL;

        fz_put32(img, FZ_COUNTER_FIELD(0, type), PERF_COUNTER_TEXT);
        fz_put32(img, FZ_COUNTER_FIELD(0, size), 6);
        assert_int_equal(corrupt_open(img, &r), 0);
        assert_int_equal(pl_reader_counterset(r, 0, &c), 0);
        assert_int_equal(c->counters[0].size, 6);
        pl_reader_close(r);
        fz_put32(img, FZ_COUNTER_FIELD(0, size), FZ_DATA_SIZE + 1);
        corrupt_expect_bad_cset(img);
}

/* ---- instance blocks ---- */

static void test_instance_offset_outside_heap(void **state)
{
        static const uint64_t offs[] = {
                8, FZ_DIR_OFF, FZ_CSET_OFF - 8, FZ_SEG_SIZE - 16, FZ_SEG_SIZE,
                PL_DIR_OFFSET_MASK & ~UINT64_C(7),
        };

        for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
                struct fz_image *img = corrupt_fresh();
                fz_put64(img, FZ_DIR_ENTRY(1), PL_DIR_ENTRY(offs[i], 0));
                corrupt_expect_instances(img, 0x5);
        }
}

static void test_instance_offset_misaligned(void **state)
{
        struct fz_image *img = corrupt_fresh();

        fz_put64(img, FZ_DIR_ENTRY(0), PL_DIR_ENTRY(img->inst_off[0] + 4, 0));
        corrupt_expect_instances(img, 0x6);
}

static void test_instance_odd_seq(void **state)
{
        struct fz_image *img = corrupt_fresh();

        fz_put32(img, img->inst_off[1], 3);
        corrupt_expect_instances(img, 0x5);
}

static void test_instance_name_unterminated(void **state)
{
        struct fz_image *img = corrupt_fresh();
        uint64_t name = img->inst_off[2] + sizeof(struct pl_seg_instance) +
                        sizeof(PERF_COUNTERSET_INSTANCE) + FZ_DATA_SIZE;
        uint32_t last = (uint32_t) wcslen(fz_name[2]);

        fz_put32(img, name + 4u * last, L'!');
        corrupt_expect_instances(img, 0x3);
        /* An embedded NUL makes the name shorter than its size says. */
        fz_build_image(img);
        fz_put32(img, name + 4, 0);
        corrupt_expect_instances(img, 0x3);
}

static void test_instance_block_size_lying(void **state)
{
        static const struct { size_t field; uint32_t value; } cases[] = {
                { offsetof(PERF_COUNTERSET_INSTANCE, dwSize), 0 },
                { offsetof(PERF_COUNTERSET_INSTANCE, dwSize), 32 + FZ_DATA_SIZE + 24 + 8 },
                { offsetof(PERF_COUNTERSET_INSTANCE, dwSize), UINT32_MAX },
                { offsetof(PERF_COUNTERSET_INSTANCE, InstanceNameSize), 0 },
                { offsetof(PERF_COUNTERSET_INSTANCE, InstanceNameSize), 22 },  /* not whole wchar_t */
                { offsetof(PERF_COUNTERSET_INSTANCE, InstanceNameSize), PL_SEG_MAX_NAME_BYTES + 4 },
                { offsetof(PERF_COUNTERSET_INSTANCE, InstanceNameSize), UINT32_MAX - 3 },
                { offsetof(PERF_COUNTERSET_INSTANCE, InstanceNameOffset), 32 },
                { offsetof(PERF_COUNTERSET_INSTANCE, InstanceNameOffset), UINT32_MAX },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct fz_image *img = corrupt_fresh();
                fz_put32(img, img->inst_off[1] + sizeof(struct pl_seg_instance) + cases[i].field,
                         cases[i].value);
                corrupt_expect_instances(img, 0x5);
        }
}

/* A name size consistent with dwSize, but running past the end of the segment. */
static void test_instance_past_segment_end(void **state)
{
        struct fz_image *img = corrupt_fresh();
        uint32_t name_bytes = PL_SEG_MAX_NAME_BYTES;

        fz_put32(img, FZ_INST_FIELD(img, 2, InstanceNameSize), name_bytes);
        fz_put32(img, FZ_INST_FIELD(img, 2, dwSize), 32 + FZ_DATA_SIZE + name_bytes);
        corrupt_expect_instances(img, 0x3);
}

/*
 * A name longer than any instance name can be, in a segment big enough to
 * hold it, consistent in every other way: still refused.
 */
static void test_instance_name_too_long(void **state)
{
        const size_t size = 4 * FZ_SEG_SIZE;
        const uint32_t name_bytes = PL_SEG_MAX_NAME_BYTES + 8;
        struct fz_image *img = corrupt_fresh();
        uint8_t *big = calloc(1, size);
        struct pl_reader *r = NULL;
        struct pl_snapshot *s = NULL;
        uint64_t v64 = size;
        uint32_t v32;

        assert_non_null(big);
        memcpy(big, img->data, img->size);
        memcpy(big + FZ_HDR_FIELD(segment_size), &v64, sizeof(v64));
        memcpy(big + FZ_INST_FIELD(img, 2, InstanceNameSize), &name_bytes, sizeof(name_bytes));
        v32 = 32 + FZ_DATA_SIZE + name_bytes;
        memcpy(big + FZ_INST_FIELD(img, 2, dwSize), &v32, sizeof(v32));
        /* Filled with a non-NUL character and terminated at its very end. */
        for (uint32_t i = 0; i + 4 < name_bytes; i += 4) {
                v32 = L'x';
                memcpy(big + FZ_INST_FIELD(img, 2, CounterSetGuid) + 32 + FZ_DATA_SIZE + i, &v32, 4);
        }
        assert_int_equal(pl_reader_open_memory(big, size, &r), 0);
        assert_int_equal(pl_reader_snapshot(r, PL_ALL_COUNTERSETS, 0, &s), 0);
        corrupt_check_snapshot(s, 0x3);
        pl_snapshot_free(s);
        pl_reader_close(r);
        free(big);
}

static void test_instance_cset_index_out_of_range(void **state)
{
        static const uint32_t csets[] = { 1, FZ_CSET_CAPACITY, 0xFFFF };

        for (size_t i = 0; i < sizeof(csets) / sizeof(csets[0]); i++) {
                struct fz_image *img = corrupt_fresh();
                fz_put64(img, FZ_DIR_ENTRY(2), PL_DIR_ENTRY(img->inst_off[2], csets[i]));
                corrupt_expect_instances(img, 0x3);
        }
}

static void test_instance_wrong_slot(void **state)
{
        struct fz_image *img = corrupt_fresh();

        fz_put32(img, img->inst_off[0] + 4, 1);
        corrupt_expect_instances(img, 0x6);
}

static void test_instance_wrong_guid(void **state)
{
        struct fz_image *img = corrupt_fresh();

        img->data[FZ_INST_FIELD(img, 1, CounterSetGuid)] ^= 0x40;
        corrupt_expect_instances(img, 0x5);
}

/* Two directory slots naming one block: only the slot the block names is read. */
static void test_instance_aliased(void **state)
{
        struct fz_image *img = corrupt_fresh();

        fz_put64(img, FZ_DIR_OFF + 8u * 1, PL_DIR_ENTRY(img->inst_off[0], 0));
        corrupt_expect_instances(img, 0x7);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_valid),
                cmocka_unit_test(test_valid_collect_is_stale),
                cmocka_unit_test(test_valid_fd),
                cmocka_unit_test(test_header_changes_after_open),
                cmocka_unit_test(test_bad_magic),
                cmocka_unit_test(test_bad_version),
                cmocka_unit_test(test_bad_header_size),
                cmocka_unit_test(test_truncated),
                cmocka_unit_test(test_segment_size_huge),
                cmocka_unit_test(test_cset_count_over_capacity),
                cmocka_unit_test(test_dir_high_over_capacity),
                cmocka_unit_test(test_bad_tables),
                cmocka_unit_test(test_cset_offset_outside_heap),
                cmocka_unit_test(test_cset_offset_misaligned),
                cmocka_unit_test(test_num_counters_huge),
                cmocka_unit_test(test_bad_cset_fields),
                cmocka_unit_test(test_counter_offset_beyond_data),
                cmocka_unit_test(test_variable_length_counter),
                cmocka_unit_test(test_instance_offset_outside_heap),
                cmocka_unit_test(test_instance_offset_misaligned),
                cmocka_unit_test(test_instance_odd_seq),
                cmocka_unit_test(test_instance_name_unterminated),
                cmocka_unit_test(test_instance_block_size_lying),
                cmocka_unit_test(test_instance_past_segment_end),
                cmocka_unit_test(test_instance_name_too_long),
                cmocka_unit_test(test_instance_cset_index_out_of_range),
                cmocka_unit_test(test_instance_wrong_slot),
                cmocka_unit_test(test_instance_wrong_guid),
                cmocka_unit_test(test_instance_aliased),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
