/* SPDX-License-Identifier: MIT */
/*
 * libpcq's "cannot connect" sentences (client-explain.c), one per cause,
 * word for word: each names what was tried and how it was chosen, the
 * system's error, and what to do.  The causes a test cannot provoke as
 * root (EACCES) or on a quiet network (a timeout, a host that does not
 * resolve) are here; test-pcq-client provokes the others for real.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "client-explain.h"
#include "pcq.h"

static const char *explain(enum cl_origin origin, int err, uint32_t status)
{
        static char buf[2048];
        struct cl_target t = { .origin = origin, .path = "/run/x/perflibd.sock",
                               .host = "web1", .port = "4700", .timeout_ms = 10000 };

        cl_explain_connect(&t, err, status, buf, sizeof(buf));
        return buf;
}

/* Each cause, with the socket chosen one way or another, or over TCP. */
static const struct {
        enum cl_origin origin;
        int err;
        uint32_t status;
        const char *want;
} cases[] = {
        { CL_FROM_RUNTIME_VAR, -ENOENT, 0,
          "cannot connect to the local perflibd at /run/x/perflibd.sock (in $PERFLIB_RUNTIME_DIR): "
          "No such file or directory; start perflibd with this PERFLIB_RUNTIME_DIR, or set "
          "PERFLIB_RUNTIME_DIR to the runtime directory of the running one (its --runtime-dir)" },
        { CL_FROM_FALLBACK, -ENOENT, 0,
          "cannot connect to the local perflibd at /run/x/perflibd.sock (the last default: "
          "PERFLIB_RUNTIME_DIR is unset and neither /run/perflib nor $XDG_RUNTIME_DIR/perflib "
          "holds perflibd.sock): No such file or directory; start perflibd, or set "
          "PERFLIB_RUNTIME_DIR to the runtime directory of the running one (its --runtime-dir)" },
        { CL_FROM_RUN, -ECONNREFUSED, 0,
          "cannot connect to the local perflibd at /run/x/perflibd.sock (in /run/perflib, "
          "PERFLIB_RUNTIME_DIR being unset): Connection refused; no perflibd listens on it any "
          "more (one stopped and left its socket behind): start perflibd" },
        { CL_FROM_SOCKET_VAR, -EACCES, 0,
          "cannot connect to the local perflibd at /run/x/perflibd.sock ($PERFLIB_SOCKET): "
          "Permission denied; this user may not reach the socket: run as root, as the user "
          "perflibd runs as or as a member of its --group" },
        { CL_GIVEN, -EPROTO, 0,
          "cannot connect to perflibd at /run/x/perflibd.sock: Protocol error; what answers "
          "there is not a PerflibV2 server" },
        /* An error with no advice ends with the error. */
        { CL_GIVEN, -ENOTSOCK, 0,
          "cannot connect to perflibd at /run/x/perflibd.sock: Socket operation on non-socket" },
        { CL_FROM_XDG, 0, PDH_CANNOT_CONNECT_MACHINE,
          "cannot connect to the local perflibd at /run/x/perflibd.sock (in "
          "$XDG_RUNTIME_DIR/perflib, PERFLIB_RUNTIME_DIR being unset and /run/perflib holding "
          "no socket): Unable to connect to the specified computer; the connection broke or the "
          "first call took longer than 10000 ms" },
        { CL_TCP, -ECONNREFUSED, 0,
          "cannot connect to perflibd on web1 port 4700 (the default port): Connection refused; "
          "start perflibd there with --listen-tcp=ADDRESS:4700 (or PERFLIB_LISTEN_TCP), or give "
          "the port it listens on as HOST:PORT" },
        { CL_TCP, -ETIMEDOUT, 0,
          "cannot connect to perflibd on web1 port 4700 (the default port): Connection timed "
          "out; check that web1 is up and that no firewall drops port 4700" },
        { CL_TCP, -EHOSTUNREACH, 0,
          "cannot connect to perflibd on web1 port 4700 (the default port): No route to host; "
          "check the host name and the network" },
        { CL_TCP, -EPROTONOSUPPORT, 0,
          "cannot connect to perflibd on web1 port 4700 (the default port): Protocol not "
          "supported; the server accepted the bind without authenticating, as no perflibd that "
          "knows remote accounts does: check what listens on port 4700" },
        { CL_TCP, 0, ERROR_ACCESS_DENIED,
          "cannot connect to perflibd on web1 port 4700 (the default port): Access is denied; "
          "perflibd serves TCP only to clients that authenticate: give a user and password "
          "(PERFLIB_USER and PERFLIB_PASSWORD, typeperf -u)" },
};

/* Refused credentials: who was tried, and what to check. */
static void test_refused_user(void **state)
{
        static char buf[2048];
        struct cl_target t = { .origin = CL_TCP, .host = "web1", .port = "4711",
                               .user = "alice", .mech = "NTLM" };

        (void) state;
        cl_explain_connect(&t, 0, ERROR_ACCESS_DENIED, buf, sizeof(buf));
        assert_string_equal(buf, "cannot connect to perflibd on web1 port 4711 as alice (NTLM): "
                            "Access is denied; the server does not know user alice or the "
                            "password is wrong: check them (PERFLIB_USER, PERFLIB_PASSWORD), or "
                            "add the account on the server with perflib-passwd");
}

static void test_causes(void **state)
{
        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                assert_string_equal(explain(cases[i].origin, cases[i].err, cases[i].status),
                                    cases[i].want);
}

/* perflibd's credentials check: who may query, and what to do. */
static void test_refused_by_server(void **state)
{
        const char *want = "cannot connect to the local perflibd at /run/x/perflibd.sock (in "
                           "$PERFLIB_RUNTIME_DIR): Access is denied; perflibd answers only root, "
                           "the user it runs as and members of its --group: run as one of them, "
                           "or have user ";

        (void) state;
        /* The socket does not exist here: its owner cannot be named. */
        assert_memory_equal(explain(CL_FROM_RUNTIME_VAR, 0, ERROR_ACCESS_DENIED), want,
                            strlen(want));
        assert_non_null(strstr(explain(CL_FROM_RUNTIME_VAR, 0, ERROR_ACCESS_DENIED),
                               " added to that group"));
}

static void test_short_buffer(void **state)
{
        struct cl_target t = { .origin = CL_GIVEN, .path = "/run/x/perflibd.sock" };
        char buf[16];

        (void) state;
        memset(buf, 'x', sizeof(buf));
        cl_explain_connect(&t, -ENOENT, 0, buf, sizeof(buf));
        assert_string_equal(buf, "cannot connect ");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_causes),
                cmocka_unit_test(test_refused_by_server),
                cmocka_unit_test(test_refused_user),
                cmocka_unit_test(test_short_buffer),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
