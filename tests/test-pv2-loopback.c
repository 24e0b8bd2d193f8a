/* SPDX-License-Identifier: MIT */
/*
 * Client and server end to end: the client library talks to a thread that
 * runs pv2_server_conn over a real AF_UNIX (or TCP loopback) socket with
 * the fake handlers.  All eight calls, both fragmentation directions, the
 * sizing rule, faults, and a server that drops, stalls or babbles.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "perflibv2.h"
#include "pv2-fake.h"

enum srv_mode {
        SRV_NORMAL,
        SRV_DROP_AFTER_BIND,    /* answers the bind, then closes */
        SRV_SILENT,             /* reads, never answers */
        SRV_GARBAGE,            /* answers the bind with junk */
};

struct srv {
        int lfd;
        enum srv_mode mode;
        pthread_t thread;
        char path[256];
        char port[16];
        int conn_freed;
};

static char tmpdir[200];

static int write_all(int fd, const uint8_t *b, size_t n)
{
        while (n > 0) {
                ssize_t k = write(fd, b, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -1;
                b += k;
                n -= (size_t)k;
        }
        return 0;
}

static void serve(struct srv *s, int fd)
{
        struct pv2_server_conn *c = NULL;
        static uint8_t buf[70000];
        bool bound = false;

        if (pv2_server_conn_new(&fake_handlers, NULL, &c) < 0)
                return;
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n <= 0)
                        break;
                if (s->mode == SRV_SILENT)
                        continue;
                if (s->mode == SRV_GARBAGE) {
                        static const uint8_t junk[16] = { 5, 0, 12, 3, 0x10, 0, 0, 0, 16 };
                        (void)write_all(fd, junk, sizeof(junk));
                        continue;
                }
                uint8_t *out = NULL;
                size_t out_len = 0;
                int r = pv2_server_conn_feed(c, buf, (size_t)n, &out, &out_len);
                int w = out_len ? write_all(fd, out, out_len) : 0;
                free(out);
                if (r < 0 || w < 0)
                        break;
                if (out_len && !bound && s->mode == SRV_DROP_AFTER_BIND)
                        break;
                bound = bound || out_len;
        }
        /* What perflibd does when a client goes: free the connection. */
        pv2_server_conn_free(c);
        s->conn_freed = 1;
}

static void *srv_main(void *arg)
{
        struct srv *s = arg;
        int fd = accept(s->lfd, NULL, NULL);

        if (fd >= 0) {
                serve(s, fd);
                close(fd);
        }
        return NULL;
}

static void srv_start_unix(struct srv *s, enum srv_mode mode)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        *s = (struct srv){ .mode = mode };
        snprintf(s->path, sizeof(s->path), "%s/perflibd.sock", tmpdir);
        unlink(s->path);
        strcpy(sa.sun_path, s->path);
        s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(s->lfd >= 0);
        assert_int_equal(bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(listen(s->lfd, 4), 0);
        assert_int_equal(pthread_create(&s->thread, NULL, srv_main, s), 0);
}

static void srv_start_tcp(struct srv *s)
{
        struct sockaddr_in sa = {
                .sin_family = AF_INET,
                .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
        };
        socklen_t len = sizeof(sa);

        *s = (struct srv){ .mode = SRV_NORMAL };
        s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(s->lfd >= 0);
        assert_int_equal(bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&sa, &len), 0);
        snprintf(s->port, sizeof(s->port), "%u", ntohs(sa.sin_port));
        assert_int_equal(listen(s->lfd, 4), 0);
        assert_int_equal(pthread_create(&s->thread, NULL, srv_main, s), 0);
}

/* Call after the client is gone: the server sees EOF and frees its side. */
static void srv_stop(struct srv *s)
{
        assert_int_equal(pthread_join(s->thread, NULL), 0);
        close(s->lfd);
        if (s->path[0])
                unlink(s->path);
}

static int setup(void **state)
{
        (void)state;
        fake_reset();
        return 0;
}

static int group_setup(void **state)
{
        const char *base = getenv("PERFLIB_TEST_TMPDIR");

        (void)state;
        snprintf(tmpdir, sizeof(tmpdir), "%s/pv2-loopback-XXXXXX", base ? base : "/tmp");
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
        (void)state;
        return rmdir(tmpdir);
}

static void check_pattern(const struct pv2_out *o, unsigned opnum, size_t n)
{
        assert_non_null(o->data);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(o->data[i], fake_byte(opnum, i));
}

static const GUID cs = { 0x11223344, 0x5566, 0x7788, { 1, 2, 3, 4, 5, 6, 7, 8 } };

static void lookup_methods(struct pv2_client *c)
{
        struct pv2_out o = { 0 };

        /* The sizing rule passes through: ERROR_NOT_ENOUGH_MEMORY and the size. */
        assert_int_equal(pv2_enumerate_counterset(c, NULL, 0, &o), ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(o.out_size, 0);
        assert_int_equal(o.rtn_size, FAKE_N_GUIDS);
        assert_int_equal(pv2_enumerate_counterset(c, NULL, o.rtn_size, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, FAKE_N_GUIDS);
        check_pattern(&o, 0, FAKE_N_GUIDS * 16);

        assert_int_equal(pv2_query_registration_info(c, "host", &cs, 2, 0x409, 10, &o),
                         ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(o.rtn_size, FAKE_REG_INFO_BYTES);
        assert_int_equal(pv2_query_registration_info(c, "host", &cs, 2, 0x409, o.rtn_size, &o),
                         ERROR_SUCCESS);
        assert_int_equal(o.out_size, FAKE_REG_INFO_BYTES);
        check_pattern(&o, 1, FAKE_REG_INFO_BYTES);
        assert_memory_equal(&fake.last_counterset, &cs, sizeof(cs));
        assert_int_equal(fake.last_code, 2);
        assert_int_equal(fake.last_lcid, 0x409);
        static const uint16_t host[] = { 'h', 'o', 's', 't', 0 };
        assert_memory_equal(fake.last_machine, host, sizeof(host));

        assert_int_equal(pv2_enumerate_instances(c, "", &cs, 4096, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, FAKE_INSTANCES_BYTES);
        assert_int_equal(o.rtn_size, FAKE_INSTANCES_BYTES);
        check_pattern(&o, 2, FAKE_INSTANCES_BYTES);
        pv2_out_done(&o);
}

static void query_methods(struct pv2_client *c)
{
        static const struct pv2_handle null_handle;
        struct pv2_handle h;
        struct pv2_out o = { 0 };
        enum { BIG = 100000 };

        assert_int_equal(pv2_open_query(c, NULL, &h), ERROR_SUCCESS);
        assert_memory_not_equal(&h, &null_handle, sizeof(h));
        assert_int_equal(pv2_query_counter_info(c, &h, 64, &o), ERROR_SUCCESS);
        check_pattern(&o, 5, FAKE_COUNTER_INFO_BYTES);

        /* A response of many fragments. */
        fake.counter_data_bytes = BIG;
        assert_int_equal(pv2_query_counter_data(c, &h, BIG - 1, &o), ERROR_NOT_ENOUGH_MEMORY);
        assert_int_equal(o.rtn_size, BIG);
        assert_int_equal(pv2_query_counter_data(c, &h, BIG, &o), ERROR_SUCCESS);
        assert_int_equal(o.out_size, BIG);
        check_pattern(&o, 6, BIG);
        /* The largest dwInSize the IDL allows is only a size; one more faults. */
        fake.counter_data_bytes = 32;
        assert_int_equal(pv2_query_counter_data(c, &h, PV2_MAX_COUNTER_DATA_BYTES, &o),
                         ERROR_SUCCESS);
        assert_int_equal(o.out_size, 32);
        assert_int_equal(pv2_query_counter_data(c, &h, PV2_MAX_COUNTER_DATA_BYTES + 1, &o),
                         PV2_RPC_S_CALL_FAILED);
        assert_int_equal(pv2_client_last_fault(c), PV2_NCA_S_FAULT_INVALID_BOUND);
        assert_int_equal(o.out_size, 32);       /* left as it was */
        pv2_out_done(&o);

        /* A request of many fragments, and back. */
        uint8_t *buf = malloc(BIG);
        assert_non_null(buf);
        for (size_t i = 0; i < BIG; i++)
                buf[i] = (uint8_t)(i * 31);
        assert_int_equal(pv2_validate_counters(c, &h, buf, BIG, 1), ERROR_SUCCESS);
        for (size_t i = 0; i < BIG; i++)
                assert_int_equal(buf[i], (uint8_t)(i * 31) ^ 0xff);
        assert_int_equal(fake.last_add, 1);
        free(buf);

        struct pv2_handle old = h;
        assert_int_equal(pv2_close_query(c, &h), ERROR_SUCCESS);
        assert_memory_equal(&h, &null_handle, sizeof(h));
        /* The closed handle faults; the connection survives the fault. */
        assert_int_equal(pv2_query_counter_info(c, &old, 64, &o), PV2_RPC_S_CALL_FAILED);
        assert_int_equal(pv2_client_last_fault(c), PV2_NCA_S_FAULT_CONTEXT_MISMATCH);
        assert_int_equal(pv2_close_query(c, &old), PV2_RPC_S_CALL_FAILED);
        assert_int_equal(pv2_enumerate_counterset(c, NULL, 256, &o), ERROR_SUCCESS);
        pv2_out_done(&o);
}

static void all_calls_unix(void **state)
{
        struct srv s;
        struct pv2_client *c = NULL;

        (void)state;
        srv_start_unix(&s, SRV_NORMAL);
        assert_int_equal(pv2_client_connect_unix(s.path, 10000, &c), 0);
        lookup_methods(c);
        query_methods(c);
        /* A query left open is closed when the connection goes. */
        struct pv2_handle h;
        assert_int_equal(pv2_open_query(c, NULL, &h), ERROR_SUCCESS);
        pv2_client_free(c);
        srv_stop(&s);
        assert_true(s.conn_freed);
        assert_int_equal(fake.opened, 2);
        assert_int_equal(fake.closed, 2);
        for (unsigned op = 0; op < 8; op++)
                assert_true(fake.calls[op] > 0);
}

static void all_calls_tcp(void **state)
{
        struct srv s;
        struct pv2_client *c = NULL;

        (void)state;
        srv_start_tcp(&s);
        assert_int_equal(pv2_client_connect_tcp("127.0.0.1", s.port, 10000, &c), 0);
        lookup_methods(c);
        query_methods(c);
        pv2_client_free(c);
        srv_stop(&s);
}

static void machine_names(void **state)
{
        static const uint16_t want[] = { 'h', 0xe9, 0x20ac, 0xd83d, 0xde00, 0 };
        struct srv s;
        struct pv2_client *c = NULL;
        struct pv2_handle h;

        (void)state;
        srv_start_unix(&s, SRV_NORMAL);
        assert_int_equal(pv2_client_connect_unix(s.path, 10000, &c), 0);
        assert_int_equal(pv2_open_query(c, "h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", &h),
                         ERROR_SUCCESS);
        assert_memory_equal(fake.last_machine, want, sizeof(want));
        /* Not UTF-8: refused before anything is sent, the connection is fine. */
        assert_int_equal(pv2_open_query(c, "\xff", &h), ERROR_INVALID_PARAMETER);
        assert_int_equal(pv2_open_query(c, "\xed\xa0\x80", &h), ERROR_INVALID_PARAMETER);
        assert_int_equal(pv2_close_query(c, &h), ERROR_SUCCESS);
        assert_int_equal(fake.calls[3], 1);
        pv2_client_free(c);
        srv_stop(&s);
}

static void server_drops(void **state)
{
        struct srv s;
        struct pv2_client *c = NULL;
        struct pv2_out o = { 0 };

        (void)state;
        srv_start_unix(&s, SRV_DROP_AFTER_BIND);
        assert_int_equal(pv2_client_connect_unix(s.path, 10000, &c), 0);
        assert_int_equal(pv2_enumerate_counterset(c, NULL, 4, &o), PV2_ERROR_CONNECTION_ABORTED);
        assert_int_equal(pv2_enumerate_counterset(c, NULL, 4, &o), PV2_ERROR_CONNECTION_ABORTED);
        assert_null(o.data);
        pv2_client_free(c);
        srv_stop(&s);
}

static void server_silent_or_garbage(void **state)
{
        struct srv s;
        struct pv2_client *c = NULL;

        (void)state;
        srv_start_unix(&s, SRV_SILENT);
        assert_int_equal(pv2_client_connect_unix(s.path, 200, &c), -ETIMEDOUT);
        assert_null(c);
        srv_stop(&s);
        srv_start_unix(&s, SRV_GARBAGE);
        assert_int_equal(pv2_client_connect_unix(s.path, 10000, &c), -EPROTO);
        srv_stop(&s);
}

static void connect_errors(void **state)
{
        char path[300];
        struct pv2_client *c = NULL;
        struct srv s;

        (void)state;
        snprintf(path, sizeof(path), "%s/nothing.sock", tmpdir);
        assert_int_equal(pv2_client_connect_unix(path, 1000, &c), -ENOENT);
        assert_int_equal(pv2_client_connect_unix(NULL, 1000, &c), -EINVAL);
        memset(path, 'x', sizeof(path) - 1);
        path[sizeof(path) - 1] = 0;
        assert_int_equal(pv2_client_connect_unix(path, 1000, &c), -ENAMETOOLONG);
        /* A port nobody listens on any more. */
        srv_start_tcp(&s);
        char port[16];
        strcpy(port, s.port);
        assert_int_equal(pv2_client_connect_tcp("127.0.0.1", s.port, 10000, &c), 0);
        pv2_client_free(c);
        srv_stop(&s);
        assert_int_equal(pv2_client_connect_tcp("127.0.0.1", port, 1000, &c), -ECONNREFUSED);
        assert_int_equal(pv2_client_last_fault(NULL), 0);
        pv2_client_free(NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(all_calls_unix, setup),
                cmocka_unit_test_setup(all_calls_tcp, setup),
                cmocka_unit_test_setup(machine_names, setup),
                cmocka_unit_test_setup(server_drops, setup),
                cmocka_unit_test_setup(server_silent_or_garbage, setup),
                cmocka_unit_test_setup(connect_errors, setup),
        };

        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
