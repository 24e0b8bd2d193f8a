/* SPDX-License-Identifier: MIT */
/*
 * The slowed answers to failed authentications (server-glue/daemon/
 * auth-delay.h): the delay grows per peer and is capped, a success
 * forgives at once, IPv6 is counted per /64 and v4-mapped addresses as
 * IPv4, failures are forgotten after a quiet while, and a flood of
 * addresses never grows the table past its bound.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/un.h>
#include <cmocka.h>

#include "auth-delay.h"

static struct sockaddr_in v4(const char *text)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(4700) };

        assert_int_equal(inet_pton(AF_INET, text, &a.sin_addr), 1);
        return a;
}

static struct sockaddr_in6 v6(const char *text)
{
        struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(4700) };

        assert_int_equal(inet_pton(AF_INET6, text, &a.sin6_addr), 1);
        return a;
}

#define FAIL(t, a, now) auth_delay_failed(t, (const struct sockaddr *) &(a), sizeof(a), now)

static void grows_and_caps(void **state)
{
        struct auth_delay *t = NULL;
        struct sockaddr_in a = v4("192.0.2.1"), b = v4("192.0.2.2");
        uint64_t now = 1000000, expect = AUTH_DELAY_FIRST_USEC;

        (void) state;
        assert_int_equal(auth_delay_new(0, &t), 0);
        for (int i = 0; i < 10; i++, expect *= 2)
                assert_true(FAIL(t, a, now + (uint64_t) i) ==
                            (expect < AUTH_DELAY_MAX_USEC ? expect : AUTH_DELAY_MAX_USEC));
        /* Another peer starts from the first delay: slowing is per address. */
        assert_true(FAIL(t, b, now) == AUTH_DELAY_FIRST_USEC);
        assert_int_equal(auth_delay_peers(t), 2);
        /* Only a quiet while forgives. */
        assert_true(FAIL(t, b, now + AUTH_DELAY_FORGET_USEC + 1) == AUTH_DELAY_FIRST_USEC);
        auth_delay_free(t);
        auth_delay_free(NULL);
}

static void families(void **state)
{
        struct auth_delay *t = NULL;
        struct sockaddr_in6 a = v6("2001:db8:1:2::1"), same64 = v6("2001:db8:1:2:ffff::9");
        struct sockaddr_in6 other64 = v6("2001:db8:1:3::1"), mapped = v6("::ffff:192.0.2.7");
        struct sockaddr_in plain = v4("192.0.2.7");
        struct sockaddr_un unix_peer = { .sun_family = AF_UNIX };

        (void) state;
        assert_int_equal(auth_delay_new(0, &t), 0);
        assert_true(FAIL(t, a, 1) == AUTH_DELAY_FIRST_USEC);
        /* The same /64: the same peer. */
        assert_true(FAIL(t, same64, 2) == 2 * AUTH_DELAY_FIRST_USEC);
        assert_true(FAIL(t, other64, 3) == AUTH_DELAY_FIRST_USEC);
        /* A v4-mapped address is its IPv4 address. */
        assert_true(FAIL(t, mapped, 4) == AUTH_DELAY_FIRST_USEC);
        assert_true(FAIL(t, plain, 5) == 2 * AUTH_DELAY_FIRST_USEC);
        /* A Unix peer, a short address, none: not slowed, not counted. */
        assert_true(FAIL(t, unix_peer, 6) == 0);
        assert_true(auth_delay_failed(t, (const struct sockaddr *) &plain, 2, 7) == 0);
        assert_true(auth_delay_failed(t, NULL, 0, 8) == 0);
        assert_true(auth_delay_failed(NULL, (const struct sockaddr *) &plain, sizeof(plain), 9) == 0);
        assert_int_equal(auth_delay_peers(t), 3);
        auth_delay_free(t);
}

/* A flood of addresses: the table stays at its bound and evicts the quiet ones first. */
static void bounded(void **state)
{
        struct auth_delay *t = NULL;
        struct sockaddr_in loud = v4("198.51.100.1");
        uint64_t now = 10;

        (void) state;
        assert_int_equal(auth_delay_new(16, &t), 0);
        FAIL(t, loud, now);
        for (uint32_t i = 0; i < 1000; i++) {
                struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x0a000000 + i) };

                FAIL(t, a, ++now);
                /* The loud one keeps failing: it is never the quietest, never evicted. */
                if (i % 8 == 0)
                        FAIL(t, loud, ++now);
                assert_true(auth_delay_peers(t) <= 16);
        }
        assert_true(FAIL(t, loud, ++now) == AUTH_DELAY_MAX_USEC);
        assert_int_equal(auth_delay_peers(t), 16);
        assert_int_equal(auth_delay_new(0, NULL), -EINVAL);
        auth_delay_free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(grows_and_caps),
                cmocka_unit_test(families),
                cmocka_unit_test(bounded),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
