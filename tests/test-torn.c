/* SPDX-License-Identifier: MIT */
/*
 * Consistency under fire: a provider process rewrites 64-bit counters (one
 * through the API with both halves equal, one by direct stores alternating
 * two bit patterns) and creates and deletes instances as fast as it can
 * while this process takes snapshots.  No 64-bit value may be torn, and no instance may be seen half
 * made: its name, id and values must all belong to it.  The same holds of
 * the values-only reads perflibd makes (pl_reader_values).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>
#include <cmocka.h>

#include "testutil.h"

#define N_CHURN         64
#define N_SNAPSHOTS     20000
#define N_CHANGES       50
#define MIN_SECONDS     2.0     /* the race is rare: give it time to happen */
#define MAX_SECONDS     30.0

static GUID prov = { 0x70a40001, 0x1, 0x2, { 1, 4, 1, 4, 2, 1, 3, 5 } };
static GUID cset = { 0x70a40002, 0x1, 0x2, { 1, 4, 1, 4, 2, 1, 3, 5 } };

/* Both halves of the 64-bit counter always hold the same number. */
#define MIRRORED(x) ((uint64_t) (uint32_t) (x) * UINT64_C(0x100000001))
/* Counter 3 of "w" alternates between two patterns that share no bit. */
#define PATTERN_A UINT64_C(0x5555555555555555)
#define PATTERN_B UINT64_C(0xAAAAAAAAAAAAAAAA)

/*
 * Counter 1's size: 4, or 8 so that every counter is 8 bytes, which sends
 * pl_reader_values down its whole-words path; the writer child inherits it.
 */
static ULONG first_size = 4;

static void name_for(wchar_t *buf, ULONG id)
{
        /* Names of different lengths, so that freed blocks are reused across sizes. */
        swprintf(buf, 64, L"n%u-%.*ls", id, (int) (id % 23), L"xxxxxxxxxxxxxxxxxxxxxxx");
}

static void writer_child(int cmd_fd, int ack_fd)
{
        HANDLE h;
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &cset, PERF_COUNTERSET_MULTI_INSTANCES,
                                              3, (const ULONG[]) { first_size, 8, 8 }, &size);
        PPERF_COUNTERSET_INSTANCE live[N_CHURN] = { 0 };
        wchar_t name[64];

        (void) cmd_fd;
        if (PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS)
                _exit(2);
        PPERF_COUNTERSET_INSTANCE w = PerfCreateInstance(h, &cset, L"w", 0xFFFFFFFF);
        if (!w)
                _exit(3);
        /* Offsets 0: counter 3 is the third member of { ULONG or ULONGLONG; ULONGLONG; ULONGLONG; }. */
        volatile ULONGLONG *pattern = (volatile ULONGLONG *) ((BYTE *) (w + 1) + 16);
        tu_ready(ack_fd);
        for (uint64_t x = 1;; x++) {
                PerfSetULongLongCounterValue(h, w, 2, MIRRORED(x));
                /* The direct-write path: one plain aligned 64-bit store. */
                *pattern = (x & 1) ? PATTERN_A : PATTERN_B;
                ULONG k = (ULONG) (x % N_CHURN);
                if (live[k]) {
                        PerfDeleteInstance(h, live[k]);
                        live[k] = NULL;
                } else {
                        ULONG id = (ULONG) (x & 0xFFFFFF);
                        name_for(name, id);
                        live[k] = PerfCreateInstance(h, &cset, name, id);
                        if (live[k]) {
                                if (first_size == 8)
                                        PerfSetULongLongCounterValue(h, live[k], 1, id * 3);
                                else
                                        PerfSetULongCounterValue(h, live[k], 1, id * 3);
                                PerfSetULongLongCounterValue(h, live[k], 2, MIRRORED(id));
                        }
                }
        }
}

struct tally {
        unsigned snapshots, churn_seen, w_changes, patterns, stale;
        uint64_t last_w;
};

/*
 * The name of an instance of a snapshot taken without names: the name of
 * that very instance, or -ESTALE once it is gone (false: skip it).  The
 * name lives in a static buffer until the next call.
 */
static bool lazy_name(struct pl_reader *r, struct pl_instance *in, struct tally *t)
{
        static wchar_t buf[PL_SEG_MAX_NAME_BYTES / sizeof(wchar_t)];
        uint32_t len = 0;
        int k;

        assert_null(in->name);
        k = pl_reader_instance_name(r, in, buf, &len);
        if (k == -ESTALE) {
                t->stale++;
                return false;
        }
        assert_int_equal(k, 0);
        assert_int_equal(len, wcslen(buf));
        in->name = buf;
        in->name_len = len;
        return true;
}

static void check_instance(const struct pl_instance *in, struct tally *t)
{
        wchar_t name[64];

        if (in->instance_id == 0xFFFFFFFF) {
                uint64_t v = in->values[1];
                assert_true((v >> 32) == (v & 0xFFFFFFFF));     /* never torn */
                assert_true(v >= t->last_w);                    /* never from the past */
                t->w_changes += v != t->last_w;
                t->last_w = v;
                uint64_t p = in->values[2];
                assert_true(p == 0 || p == PATTERN_A || p == PATTERN_B);
                t->patterns |= p == PATTERN_A ? 1 : p == PATTERN_B ? 2 : 0;
                assert_true(wcscmp(in->name, L"w") == 0);
                return;
        }
        t->churn_seen++;
        name_for(name, in->instance_id);
        assert_true(wcscmp(in->name, name) == 0);
        assert_true(in->values[0] == 0 || in->values[0] == (uint32_t) (in->instance_id * 3));
        assert_true(in->values[1] == 0 || in->values[1] == MIRRORED(in->instance_id));
        assert_true(in->values[2] == 0);
}

/*
 * One read of values only (pl_reader_values, as perflibd's QueryCounterData
 * reads), each record named by pl_reader_rec_name and checked as a
 * snapshot's instance is.
 */
static void values_round(struct pl_reader *r, struct pl_values *v, struct tally *t)
{
        static wchar_t buf[PL_SEG_MAX_NAME_BYTES / sizeof(wchar_t)];

        assert_int_equal(pl_reader_values(r, 0, 0, v), 0);
        assert_true(v->n_instances >= 1 && v->n_instances <= 1 + N_CHURN);
        assert_int_equal(v->num_values, 3);
        for (uint32_t i = 0; i < v->n_instances; i++) {
                const struct pl_value_rec *rec = pl_values_at(v, i);
                struct pl_instance in = { .instance_id = rec->instance_id, .name = buf,
                                          .num_values = rec->num_values,
                                          .values = (uint64_t *) rec->values };
                uint32_t len = 0;
                int k = pl_reader_rec_name(r, 0, rec, buf, &len);

                assert_int_equal(rec->num_values, 3);
                for (uint32_t j = 0; j < i; j++)
                        assert_false(pl_values_at(v, j)->instance_id == rec->instance_id);
                if (k == -ESTALE) {
                        t->stale++;
                        continue;
                }
                assert_int_equal(k, 0);
                in.name_len = len;
                check_instance(&in, t);
        }
}

static void race(void)
{
        struct tu_child c = { .cmd_fd = -1, .ack_fd = -1 };
        struct pl_reader *r = NULL;
        struct tally t = { 0 };
        struct pl_values v = { 0 };
        double start, end;

        tu_runtime_setup();
        assert_int_equal(tu_child_start(&c, writer_child), 0);
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        start = tu_now();
        end = start + MAX_SECONDS;
        /*
         * On a loaded machine the writer may get little CPU: keep going until
         * it has really raced us, within a generous bound.
         */
        while ((t.snapshots < N_SNAPSHOTS || t.w_changes < N_CHANGES || !t.churn_seen ||
                t.patterns != 3 || tu_now() < start + MIN_SECONDS) &&
               tu_now() < end) {
                struct pl_snapshot *s = NULL;
                /* Every third round values only, into records kept across rounds, as
                 * perflibd reads them; every third a snapshot without names. */
                bool lazy = t.snapshots % 3 == 1;

                if (t.snapshots % 3 == 2) {
                        values_round(r, &v, &t);
                        t.snapshots++;
                        continue;
                }
                assert_int_equal(pl_reader_snapshot(r, 0, lazy ? PL_SNAPSHOT_NO_NAMES : 0, &s), 0);
                assert_true(s->n_instances >= 1 && s->n_instances <= 1 + N_CHURN);
                for (uint32_t i = 0; i < s->n_instances; i++) {
                        struct pl_instance in = s->instances[i];

                        if (lazy && !lazy_name(r, &in, &t))
                                continue;
                        check_instance(&in, &t);
                        for (uint32_t j = 0; j < i; j++)
                                assert_false(s->instances[j].instance_id ==
                                             s->instances[i].instance_id);
                }
                pl_snapshot_free(s);
                t.snapshots++;
        }
        pl_reader_values_done(&v);
        pl_reader_close(r);
        tu_child_stop(&c);
        tu_runtime_teardown();
        /* The test only means something if the writer really raced the reader. */
        print_message("%u snapshots, %u churning instances seen, %u value changes, "
                      "%u names gone before they were read\n",
                      t.snapshots, t.churn_seen, t.w_changes, t.stale);
        assert_true(t.snapshots >= 100);
        assert_true(t.churn_seen > 0);
        assert_true(t.w_changes >= N_CHANGES);
        assert_int_equal(t.patterns, 3);        /* both patterns were seen */
}

static void snapshots_are_consistent(void **state)
{
        (void) state;
        first_size = 4;
        race();
}

static void snapshots_are_consistent_all_wide(void **state)
{
        (void) state;
        first_size = 8;
        race();
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(snapshots_are_consistent),
                cmocka_unit_test(snapshots_are_consistent_all_wide),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
