/* SPDX-License-Identifier: MIT */
/*
 * The Windows-compatible API: every function's argument checks and Win32
 * error codes, the instance block layout it returns, counter updates as a
 * reader sees them, custom allocators and the notification callback.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <cmocka.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "testutil.h"

static GUID prov = { 0x51a1e001, 0x1111, 0x2222, { 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa } };
static GUID multi = { 0x51a1e002, 0x1111, 0x2222, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static GUID single = { 0x51a1e003, 0x1111, 0x2222, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static GUID unknown = { 0xdeadbeef, 0, 0, { 0 } };

/* The C struct that automatic layout must reproduce for sizes {4, 8, 4, 8}. */
struct four {
        ULONG a;
        ULONGLONG b;
        ULONG c;
        ULONGLONG d;
};
static const ULONG four_sizes[] = { 4, 8, 4, 8 };

static HANDLE start(void)
{
        HANDLE h = NULL;

        assert_int_equal(PerfStartProvider(&prov, NULL, &h), ERROR_SUCCESS);
        assert_non_null(h);
        return h;
}

static void add_cset(HANDLE h, const GUID *g, ULONG type)
{
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, g, type, 4, four_sizes, &size);

        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_SUCCESS);
        free(t);
}

static void start_stop_arguments(void **state)
{
        PERF_PROVIDER_CONTEXT ctx = { .ContextSize = sizeof(ctx) };
        HANDLE h = (HANDLE) 0x1;

        (void) state;
        assert_int_equal(PerfStartProvider(NULL, NULL, &h), ERROR_INVALID_PARAMETER);
        assert_int_equal(PerfStartProvider(&prov, NULL, NULL), ERROR_INVALID_PARAMETER);
        ctx.ContextSize = sizeof(ctx) - 1;
        assert_int_equal(PerfStartProviderEx(&prov, &ctx, &h), ERROR_INVALID_PARAMETER);
        ctx.ContextSize = sizeof(ctx);
        ctx.MemAllocRoutine = (PERF_MEM_ALLOC) 0x1;     /* without MemFreeRoutine */
        assert_int_equal(PerfStartProviderEx(&prov, &ctx, &h), ERROR_INVALID_PARAMETER);
        /* Failed calls leave the out-parameter alone. */
        assert_ptr_equal(h, (HANDLE) 0x1);
        assert_int_equal(PerfStopProvider(NULL), ERROR_INVALID_PARAMETER);
        /* The context is optional, as on Windows. */
        assert_int_equal(PerfStartProviderEx(&prov, NULL, &h), ERROR_SUCCESS);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void start_publishes_stop_withdraws(void **state)
{
        (void) state;
        assert_int_equal(tu_count_providers(NULL), 0);
        HANDLE h = start();
        assert_int_equal(tu_count_providers(NULL), 1);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
        assert_int_equal(tu_count_providers(NULL), 0);
}

/*
 * A provider's socket must accept connections from the moment its name
 * appears: a reader scanning the runtime directory between bind() and
 * listen() got ECONNREFUSED and removed the socket as a dead provider's.
 * So the name may only appear by a rename of a socket already listening:
 * never created in place (IN_CREATE), and connectable once there.
 */
static void socket_listens_when_named(void **state)
{
        const char *dir = getenv("PERFLIB_RUNTIME_DIR");
        char buf[4096] __attribute__((aligned(8)));
        int ifd, seen = 0;

        (void) state;
        assert_non_null(dir);
        ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        assert_true(ifd >= 0);
        assert_true(inotify_add_watch(ifd, dir, IN_CREATE | IN_MOVED_TO) >= 0);
        HANDLE h = start();
        for (;;) {
                ssize_t n = read(ifd, buf, sizeof(buf));

                if (n <= 0)
                        break;
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *e = (const void *) p;
                        size_t len = e->len ? strlen(e->name) : 0;

                        p += sizeof(*e) + e->len;
                        if (len < 5 || strncmp(e->name, "provider-", 9) != 0 ||
                            strcmp(e->name + len - 5, ".sock") != 0)
                                continue;
                        assert_true(e->mask & IN_MOVED_TO);
                        struct sockaddr_un sa = { .sun_family = AF_UNIX };
                        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

                        assert_true(snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir,
                                             e->name) < (int) sizeof(sa.sun_path));
                        assert_int_equal(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
                        close(fd);
                        seen++;
                }
        }
        assert_int_equal(seen, 1);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
        close(ifd);
}

static void counterset_validation(void **state)
{
        HANDLE h = start();
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &multi, PERF_COUNTERSET_MULTI_INSTANCES,
                                              4, four_sizes, &size);
        PPERF_COUNTER_INFO c = (PPERF_COUNTER_INFO) (t + 1);

        (void) state;
        assert_int_equal(PerfSetCounterSetInfo(NULL, t, size), ERROR_INVALID_PARAMETER);
        assert_int_equal(PerfSetCounterSetInfo(h, NULL, size), ERROR_INVALID_PARAMETER);
        assert_int_equal(PerfSetCounterSetInfo(h, t, size - 1), ERROR_INVALID_PARAMETER);
        t->InstanceType = 1;
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_INVALID_PARAMETER);
        t->InstanceType = PERF_COUNTERSET_MULTI_INSTANCES;
        c[1].Size = 4;                  /* a LARGE type with no room for its value */
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_INVALID_PARAMETER);
        c[1].Size = 8;
        c[1].CounterId = c[0].CounterId;
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_INVALID_PARAMETER);
        c[1].CounterId = 2;
        c[2].Scale = 11;
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_INVALID_PARAMETER);
        c[2].Scale = -10;
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_SUCCESS);
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_ALREADY_EXISTS);
        free(t);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void instance_errors(void **state)
{
        HANDLE h = start();
        wchar_t longname[PERF_MAX_INSTANCE_NAME + 1];

        (void) state;
        add_cset(h, &multi, PERF_COUNTERSET_MULTI_INSTANCES);
        add_cset(h, &single, PERF_COUNTERSET_SINGLE_INSTANCE);

        SetLastError(0);
        assert_null(PerfCreateInstance(NULL, &multi, L"x", 0));
        assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
        assert_null(PerfCreateInstance(h, &multi, NULL, 0));
        assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
        assert_null(PerfCreateInstance(h, &unknown, L"x", 0));
        assert_int_equal(GetLastError(), ERROR_NOT_FOUND);

        wmemset(longname, L'n', PERF_MAX_INSTANCE_NAME);
        longname[PERF_MAX_INSTANCE_NAME] = 0;
        assert_null(PerfCreateInstance(h, &multi, longname, 0));
        assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
        longname[PERF_MAX_INSTANCE_NAME - 1] = 0;       /* 1023 characters: the limit */
        assert_non_null(PerfCreateInstance(h, &multi, longname, 0));
        assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);      /* left alone */

        assert_non_null(PerfCreateInstance(h, &multi, L"a", 1));
        assert_null(PerfCreateInstance(h, &multi, L"a", 1));
        assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
        assert_non_null(PerfCreateInstance(h, &multi, L"a", 2));        /* same name, other id */

        assert_non_null(PerfCreateInstance(h, &single, L"", 0));
        assert_null(PerfCreateInstance(h, &single, L"other", 1));
        assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void instance_block_layout(void **state)
{
        HANDLE h = start();

        (void) state;
        add_cset(h, &multi, PERF_COUNTERSET_MULTI_INSTANCES);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &multi, L"disk0", 42);
        assert_non_null(i);
        assert_memory_equal(&i->CounterSetGuid, &multi, sizeof(GUID));
        assert_int_equal(i->InstanceId, 42);
        assert_int_equal(i->InstanceNameSize, 6 * sizeof(wchar_t));
        assert_true(i->InstanceNameOffset >= sizeof(*i) + sizeof(struct four));
        assert_true(wcscmp((const wchar_t *) ((BYTE *) i + i->InstanceNameOffset), L"disk0") == 0);
        assert_true(i->dwSize >= i->InstanceNameOffset + i->InstanceNameSize);
        assert_int_equal(i->dwSize % 8, 0);
        assert_int_equal((uintptr_t) (i + 1) % 8, 0);

        /* The documented Offset convention: automatic layout is the C struct. */
        struct four *data = (struct four *) (i + 1);
        assert_int_equal(PerfSetULongCounterValue(h, i, 1, 0x11111111), ERROR_SUCCESS);
        assert_int_equal(PerfSetULongLongCounterValue(h, i, 2, 0x2222222222222222ULL), ERROR_SUCCESS);
        assert_int_equal(PerfSetULongCounterValue(h, i, 3, 0x33333333), ERROR_SUCCESS);
        assert_int_equal(PerfSetULongLongCounterValue(h, i, 4, 0x4444444444444444ULL), ERROR_SUCCESS);
        assert_int_equal(data->a, 0x11111111);
        assert_true(data->b == 0x2222222222222222ULL);
        assert_int_equal(data->c, 0x33333333);
        assert_true(data->d == 0x4444444444444444ULL);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* Explicit offsets are honoured, and a direct write is what a reader sees. */
static void explicit_offsets_direct_write(void **state)
{
        HANDLE h = start();
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &multi, PERF_COUNTERSET_MULTI_INSTANCES,
                                              2, (const ULONG[]) { 8, 4 }, &size);
        PPERF_COUNTER_INFO c = (PPERF_COUNTER_INFO) (t + 1);
        struct pl_reader *r = NULL;
        struct pl_snapshot *s = NULL;

        (void) state;
        c[0].Offset = 16;
        c[1].Offset = 4;
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_SUCCESS);
        free(t);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &multi, L"x", 0);
        assert_non_null(i);
        BYTE *data = (BYTE *) (i + 1);
        *(ULONGLONG *) (data + 16) = 0x0123456789abcdefULL;
        *(ULONG *) (data + 4) = 77;

        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        assert_int_equal(pl_reader_snapshot(r, PL_ALL_COUNTERSETS, 0, &s), 0);
        assert_int_equal(s->n_instances, 1);
        assert_true(s->instances[0].values[0] == 0x0123456789abcdefULL);
        assert_int_equal(s->instances[0].values[1], 77);
        pl_snapshot_free(s);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void query_and_delete(void **state)
{
        HANDLE h = start();

        (void) state;
        add_cset(h, &multi, PERF_COUNTERSET_MULTI_INSTANCES);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &multi, L"q", 3);
        assert_non_null(i);
        SetLastError(1234);
        assert_ptr_equal(PerfQueryInstance(h, &multi, L"q", 3), i);
        assert_int_equal(GetLastError(), 1234);
        assert_null(PerfQueryInstance(h, &multi, L"q", 4));
        assert_int_equal(GetLastError(), ERROR_NOT_FOUND);
        assert_null(PerfQueryInstance(h, &unknown, L"q", 3));
        assert_int_equal(GetLastError(), ERROR_NOT_FOUND);

        assert_int_equal(PerfDeleteInstance(NULL, i), ERROR_INVALID_PARAMETER);
        assert_int_equal(PerfDeleteInstance(h, NULL), ERROR_INVALID_PARAMETER);
        assert_int_equal(PerfDeleteInstance(h, i), ERROR_SUCCESS);
        assert_int_equal(PerfDeleteInstance(h, i), ERROR_NOT_FOUND);
        assert_null(PerfQueryInstance(h, &multi, L"q", 3));
        assert_int_equal(GetLastError(), ERROR_NOT_FOUND);
        /* The name is free again. */
        assert_non_null(PerfCreateInstance(h, &multi, L"q", 3));
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void utf8_names(void **state)
{
        HANDLE h = start();

        (void) state;
        add_cset(h, &multi, PERF_COUNTERSET_MULTI_INSTANCES);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstanceUtf8(h, &multi, "Übergröße €", 1);
        assert_non_null(i);
        assert_true(wcscmp((const wchar_t *) ((BYTE *) i + i->InstanceNameOffset),
                           L"\u00dcbergr\u00f6\u00dfe \u20ac") == 0);
        assert_ptr_equal(PerfQueryInstance(h, &multi, L"\u00dcbergr\u00f6\u00dfe \u20ac", 1), i);
        assert_ptr_equal(PerfQueryInstanceUtf8(h, &multi, "Übergröße €", 1), i);
        assert_null(PerfCreateInstanceUtf8(h, &multi, "bad \xff\xfe", 2));
        assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
        assert_null(PerfCreateInstanceUtf8(h, &multi, NULL, 2));
        assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
        assert_null(PerfCreateInstanceUtf8(h, &multi, "Übergröße €", 1));
        assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void counter_updates(void **state)
{
        HANDLE h = start();

        (void) state;
        add_cset(h, &multi, PERF_COUNTERSET_MULTI_INSTANCES);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &multi, L"u", 0);
        struct four *d = (struct four *) (i + 1);
        assert_non_null(i);
        assert_int_equal(d->a, 0);      /* counter data starts zeroed */

        assert_int_equal(PerfSetULongCounterValue(h, i, 1, 0xFFFFFFFE), ERROR_SUCCESS);
        assert_int_equal(PerfIncrementULongCounterValue(h, i, 1, 3), ERROR_SUCCESS);
        assert_int_equal(d->a, 1);      /* 32-bit counters wrap as on Windows */
        assert_int_equal(PerfDecrementULongCounterValue(h, i, 1, 2), ERROR_SUCCESS);
        assert_int_equal(d->a, 0xFFFFFFFF);

        assert_int_equal(PerfSetULongLongCounterValue(h, i, 2, 1ULL << 40), ERROR_SUCCESS);
        assert_int_equal(PerfIncrementULongLongCounterValue(h, i, 2, 5), ERROR_SUCCESS);
        assert_int_equal(PerfDecrementULongLongCounterValue(h, i, 2, 1), ERROR_SUCCESS);
        assert_true(d->b == (1ULL << 40) + 4);

        /* Wrong width, unknown id, bad handles. */
        assert_int_equal(PerfSetULongCounterValue(h, i, 2, 1), ERROR_INVALID_PARAMETER);
        assert_int_equal(PerfSetULongLongCounterValue(h, i, 1, 1), ERROR_INVALID_PARAMETER);
        assert_int_equal(PerfIncrementULongCounterValue(h, i, 4, 1), ERROR_INVALID_PARAMETER);
        assert_int_equal(PerfSetULongCounterValue(h, i, 99, 1), ERROR_NOT_FOUND);
        assert_int_equal(PerfSetULongCounterValue(NULL, i, 1, 1), ERROR_INVALID_PARAMETER);
        assert_int_equal(PerfSetULongCounterValue(h, NULL, 1, 1), ERROR_INVALID_PARAMETER);
        assert_int_equal(PerfIncrementULongLongCounterValue(h, NULL, 2, 1), ERROR_INVALID_PARAMETER);
        assert_int_equal(d->a, 0xFFFFFFFF);     /* failed calls changed nothing */

        /* A deleted instance is no longer updatable. */
        assert_int_equal(PerfDeleteInstance(h, i), ERROR_SUCCESS);
        assert_int_not_equal(PerfSetULongCounterValue(h, i, 1, 1), ERROR_SUCCESS);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void reference_counter_rules(void **state)
{
        HANDLE h = start();
        ULONG size;
        PPERF_COUNTERSET_INFO t = tu_template(&prov, &multi, PERF_COUNTERSET_MULTI_INSTANCES,
                                              2, (const ULONG[]) { 4, 8 }, &size);
        ULONG var = 5;

        (void) state;
        ((PPERF_COUNTER_INFO) (t + 1))[0].Attrib = PERF_ATTRIB_BY_REFERENCE;
        assert_int_equal(PerfSetCounterSetInfo(h, t, size), ERROR_SUCCESS);
        free(t);
        PPERF_COUNTERSET_INSTANCE i = PerfCreateInstance(h, &multi, L"r", 0);
        assert_non_null(i);
        assert_int_equal(PerfSetULongCounterValue(h, i, 1, 1), ERROR_INVALID_PARAMETER);
        assert_int_equal(PerfSetCounterRefValue(h, i, 2, &var), ERROR_INVALID_PARAMETER);
        assert_int_equal(PerfSetCounterRefValue(h, i, 9, &var), ERROR_NOT_FOUND);
        assert_int_equal(PerfSetCounterRefValue(h, i, 1, &var), ERROR_SUCCESS);
        assert_int_equal(PerfSetCounterRefValue(h, i, 1, NULL), ERROR_SUCCESS);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

struct alloc_count {
        int allocs, frees;
        long live;
};

static LPVOID CALLBACK count_alloc(SIZE_T size, LPVOID ctx)
{
        struct alloc_count *a = ctx;

        a->allocs++;
        a->live++;
        return malloc(size);
}

static void CALLBACK count_free(LPVOID p, LPVOID ctx)
{
        struct alloc_count *a = ctx;

        if (!p)
                return;
        a->frees++;
        a->live--;
        free(p);
}

static void custom_allocators(void **state)
{
        struct alloc_count a = { 0 };
        PERF_PROVIDER_CONTEXT ctx = {
                .ContextSize = sizeof(ctx),
                .MemAllocRoutine = count_alloc,
                .MemFreeRoutine = count_free,
                .pMemContext = &a,
        };
        HANDLE h = NULL;

        (void) state;
        assert_int_equal(PerfStartProviderEx(&prov, &ctx, &h), ERROR_SUCCESS);
        add_cset(h, &multi, PERF_COUNTERSET_MULTI_INSTANCES);
        for (int k = 0; k < 100; k++)
                assert_non_null(PerfCreateInstance(h, &multi, L"m", (ULONG) k));
        assert_true(a.allocs > 0);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
        /* Everything the provider allocated went back through the same routines. */
        assert_int_equal(a.live, 0);
        assert_int_equal(a.allocs, a.frees);
}

static ULONG seen_code, seen_size;
static BYTE seen_buf[64];

static ULONG WINAPI callback(ULONG code, PVOID buf, ULONG size)
{
        seen_code = code;
        seen_size = size;
        if (buf)
                memcpy(seen_buf, buf, size < sizeof(seen_buf) ? size : sizeof(seen_buf));
        return code == PERF_COLLECT_START ? ERROR_SUCCESS : ERROR_NOT_SUPPORTED;
}

static void notification_callback(void **state)
{
        HANDLE h = NULL;
        struct pl_reader *r = NULL;
        uint32_t status = 1;
        const char payload[] = "hello";

        (void) state;
        assert_int_equal(PerfStartProvider(&prov, callback, &h), ERROR_SUCCESS);
        assert_int_equal(tu_open_only_provider(1.0, &r), 0);
        assert_int_equal(pl_reader_notify(r, PERF_COLLECT_START, payload, sizeof(payload), &status), 0);
        assert_int_equal(status, ERROR_SUCCESS);
        assert_int_equal(seen_code, PERF_COLLECT_START);
        assert_int_equal(seen_size, sizeof(payload));
        assert_string_equal((char *) seen_buf, "hello");
        assert_int_equal(pl_reader_notify(r, PERF_ADD_COUNTER, NULL, 0, &status), 0);
        assert_int_equal(status, ERROR_NOT_SUPPORTED);
        assert_int_equal(seen_code, PERF_ADD_COUNTER);
        pl_reader_close(r);
        assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void last_error_is_per_thread_value(void **state)
{
        (void) state;
        SetLastError(1234);
        assert_int_equal(GetLastError(), 1234);
        SetLastError(ERROR_SUCCESS);
        assert_int_equal(GetLastError(), ERROR_SUCCESS);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TU_TEST(start_stop_arguments),
                TU_TEST(start_publishes_stop_withdraws),
                TU_TEST(socket_listens_when_named),
                TU_TEST(counterset_validation),
                TU_TEST(instance_errors),
                TU_TEST(instance_block_layout),
                TU_TEST(explicit_offsets_direct_write),
                TU_TEST(query_and_delete),
                TU_TEST(utf8_names),
                TU_TEST(counter_updates),
                TU_TEST(reference_counter_rules),
                TU_TEST(custom_allocators),
                TU_TEST(notification_callback),
                cmocka_unit_test(last_error_is_per_thread_value),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
