/* SPDX-License-Identifier: MIT */
/*
 * The network protocol parsers (providers/common/netsnmp.h) on fixture
 * files under tests/data/netproto: a 6.18 kernel's files as read, an old
 * 2.6.32 shape (fields that later kernels added are missing), and garbage
 * (headers without values, values without headers, short lines, numbers
 * that overflow, other files' keys); the sock_diag reply parser on built
 * buffers, and the live sock_diag count on sockets this test opens.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "netsnmp.h"
#include "procfs.h"

#define UNSET UINT64_C(0xdeadbeef)

static char buf[65536];

static const char *fixture(const char *rel)
{
        int r = pv_read_small(NETPROTO_FIXTURES, rel, buf, sizeof(buf));

        if (r < 0)
                fail_msg("%s/%s: %s", NETPROTO_FIXTURES, rel, strerror(-r));
        return buf;
}

static void unset(uint64_t *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                v[i] = UNSET;
}

/* The same table against every parser: each takes only the keys of its shape. */
enum { K_ACTIVE, K_MAXCONN, K_INSEGS, K_CSUM, K_LISTENDROPS, K_TIMEOUTS, K_INOCTETS,
       K_UDP, K_UDP6, K_MLDV2, K_TCPINUSE, K_FRAGMEM, K_TCP6INUSE, K_NULL, K_NONE, N_K };
static const char *const keys[N_K] = {
        [K_ACTIVE] = "Tcp:ActiveOpens", [K_MAXCONN] = "Tcp:MaxConn",
        [K_INSEGS] = "Tcp:InSegs", [K_CSUM] = "Tcp:InCsumErrors",
        [K_LISTENDROPS] = "TcpExt:ListenDrops", [K_TIMEOUTS] = "TcpExt:TCPTimeouts",
        [K_INOCTETS] = "IpExt:InOctets", [K_UDP] = "Udp:InDatagrams",
        [K_UDP6] = "Udp6InDatagrams", [K_MLDV2] = "Icmp6OutMLDv2Reports",
        [K_TCPINUSE] = "TCP:inuse", [K_FRAGMEM] = "FRAG:memory", [K_TCP6INUSE] = "TCP6:inuse",
        [K_NULL] = NULL, [K_NONE] = "Tcp:NoSuchField",
};

static void test_linux_6_18(void **state)
{
        uint64_t v[N_K];
        size_t found;

        unset(v, N_K);
        assert_int_equal(pv_netsnmp_parse(fixture("linux-6.18/snmp"), keys, N_K, v, &found), 0);
        assert_int_equal(found, 5);
        assert_int_equal(v[K_ACTIVE], 35962);
        assert_int_equal(v[K_MAXCONN], 0);              /* -1: no limit */
        assert_int_equal(v[K_INSEGS], 1563038);
        assert_int_equal(v[K_CSUM], 0);
        assert_int_equal(v[K_UDP], 313);
        assert_int_equal(v[K_UDP6], UNSET);
        assert_int_equal(v[K_NONE], UNSET);
        assert_int_equal(v[K_NULL], UNSET);

        assert_int_equal(pv_netsnmp_parse(fixture("linux-6.18/netstat"), keys, N_K, v, &found), 0);
        assert_int_equal(found, 3);
        assert_int_equal(v[K_LISTENDROPS], 0);
        assert_int_equal(v[K_TIMEOUTS], 7);
        /* Beyond 32 bits: a 64-bit figure stays whole. */
        assert_int_equal(v[K_INOCTETS], UINT64_C(39858895262));

        assert_int_equal(pv_snmp6_parse(fixture("linux-6.18/snmp6"), keys, N_K, v, &found), 0);
        assert_int_equal(found, 2);
        assert_int_equal(v[K_UDP6], 0);
        assert_int_equal(v[K_MLDV2], 4);

        assert_int_equal(pv_sockstat_parse(fixture("linux-6.18/sockstat"), keys, N_K, v, &found),
                         0);
        assert_int_equal(found, 2);
        assert_int_equal(v[K_TCPINUSE], 8);
        assert_int_equal(v[K_FRAGMEM], 0);
        assert_int_equal(pv_sockstat_parse(fixture("linux-6.18/sockstat6"), keys, N_K, v, &found),
                         0);
        assert_int_equal(found, 1);
        assert_int_equal(v[K_TCP6INUSE], 2);
        /* The other files' values were left alone. */
        assert_int_equal(v[K_ACTIVE], 35962);
}

static void test_linux_2_6_32(void **state)
{
        uint64_t v[N_K];
        size_t found;

        unset(v, N_K);
        assert_int_equal(pv_netsnmp_parse(fixture("linux-2.6.32/snmp"), keys, N_K, v, &found), 0);
        assert_int_equal(found, 4);
        assert_int_equal(v[K_ACTIVE], 1200);
        assert_int_equal(v[K_INSEGS], 500000);
        /* Tcp InCsumErrors came with 3.10: the caller's default stays. */
        assert_int_equal(v[K_CSUM], UNSET);
        assert_int_equal(pv_netsnmp_parse(fixture("linux-2.6.32/netstat"), keys, N_K, v, &found),
                         0);
        assert_int_equal(found, 2);
        assert_int_equal(v[K_LISTENDROPS], 19);
        assert_int_equal(v[K_TIMEOUTS], 44);
        assert_int_equal(v[K_INOCTETS], UNSET);         /* IpExt had no octets yet */
        assert_int_equal(pv_snmp6_parse(fixture("linux-2.6.32/snmp6"), keys, N_K, v, &found), 0);
        assert_int_equal(found, 1);
        assert_int_equal(v[K_UDP6], 600);
        assert_int_equal(v[K_MLDV2], UNSET);
        assert_int_equal(pv_sockstat_parse(fixture("linux-2.6.32/sockstat"), keys, N_K, v, &found),
                         0);
        assert_int_equal(v[K_TCPINUSE], 14);
        assert_int_equal(v[K_FRAGMEM], 4096);
}

static void test_snmp_garbage(void **state)
{
        static const char *const k[] = {
                "Ip:InReceives", "Ip:InHdrErrors", "Tcp:MaxConn", "Tcp:ActiveOpens",
                "Tcp:PassiveOpens", "Tcp:AttemptFails", "Udp:InDatagrams", "Udp:NoPorts",
                "Udp:InErrors", "Icmp:InMsgs", "IcmpMsg:InType3", "Ip:OutRequests",
                "Ip:InDelivers", "Ip:FragOKs",
        };
        enum { N = sizeof(k) / sizeof(k[0]) };
        uint64_t v[N];
        size_t found;

        unset(v, N);
        assert_int_equal(pv_netsnmp_parse(fixture("garbage/snmp"), k, N, v, &found), 0);
        /* A header followed by another section's values is dropped. */
        assert_int_equal(v[1], UNSET);
        assert_int_equal(v[0], 0);                      /* the later "Ip: -12" */
        assert_int_equal(v[2], 0);
        assert_int_equal(v[3], 5);
        assert_int_equal(v[4], UNSET);                  /* "x6" */
        assert_int_equal(v[5], UNSET);                  /* beyond 64 bits */
        /* A short values line sets what it has; values with no header set nothing. */
        assert_int_equal(v[6], 11);
        assert_int_equal(v[7], 12);
        assert_int_equal(v[8], UNSET);
        assert_int_equal(v[9], UNSET);                  /* its values came after an empty line */
        assert_int_equal(v[10], 4);
        assert_int_equal(v[11], 21);                    /* tabs separate too */
        assert_int_equal(v[12], 22);
        assert_int_equal(v[13], UINT64_MAX);
        assert_int_equal(found, 9);

        unset(v, N);
        assert_int_equal(pv_netsnmp_parse(fixture("garbage/snmp-no-newline"), keys, N_K, v,
                                          NULL), 0);
        assert_int_equal(v[K_INSEGS], 41);
        assert_int_equal(pv_netsnmp_parse("", keys, N_K, v, &found), 0);
        assert_int_equal(found, 0);
        assert_int_equal(pv_netsnmp_parse(NULL, keys, N_K, v, &found), -EINVAL);
}

static void test_other_garbage(void **state)
{
        static const char *const k[] = {
                "TcpExt:ListenOverflows", "TcpExt:ListenDrops", "TcpExt:TCPTimeouts",
                "Ip6InReceives", "Ip6InHdrErrors", "Ip6InDelivers", "Udp6InDatagrams",
                "Udp6NoPorts", "Udp6InErrors", "Tcp:InSegs", "sockets:used", "TCP:inuse",
                "TCP:orphan", "UDP:inuse", "UDP:mem", "FRAG:memory", "FRAG:inuse",
        };
        enum { N = sizeof(k) / sizeof(k[0]) };
        uint64_t v[N];
        size_t found;

        unset(v, N);
        assert_int_equal(pv_netsnmp_parse(fixture("garbage/netstat"), k, N, v, &found), 0);
        assert_int_equal(found, 3);
        assert_int_equal(v[0], 3);
        assert_int_equal(v[1], 4);
        assert_int_equal(v[2], 5);

        assert_int_equal(pv_snmp6_parse(fixture("garbage/snmp6"), k, N, v, &found), 0);
        assert_int_equal(v[3], UNSET);
        assert_int_equal(v[4], UNSET);
        assert_int_equal(v[5], 17);
        assert_int_equal(v[6], 0);
        assert_int_equal(v[7], 19);
        assert_int_equal(v[8], UNSET);
        /* "Tcp:InSegs 5" is not snmp6's shape: its key is /proc/net/snmp's. */
        assert_int_equal(v[9], UNSET);
        assert_int_equal(found, 3);

        assert_int_equal(pv_sockstat_parse(fixture("garbage/sockstat"), k, N, v, &found), 0);
        assert_int_equal(v[10], UNSET);                 /* "sockets used": no colon */
        assert_int_equal(v[11], 3);
        assert_int_equal(v[12], UNSET);
        assert_int_equal(v[13], UNSET);
        assert_int_equal(v[14], 7);
        assert_int_equal(v[15], 100);
        assert_int_equal(v[16], 2);
        assert_int_equal(found, 4);
}

static void test_tcp_states(void **state)
{
        uint64_t c[PV_TCP_N_STATES];
        FILE *f;

        f = pv_fopen(NETPROTO_FIXTURES, "linux-6.18/tcp");
        assert_non_null(f);
        assert_int_equal(pv_tcp_states_read(f, UINT64_MAX, c), 0);
        fclose(f);
        assert_int_equal(c[PV_TCP_ESTABLISHED], 6);
        assert_int_equal(c[PV_TCP_TIME_WAIT], 24);
        assert_int_equal(c[PV_TCP_LISTEN], 2);
        assert_int_equal(c[PV_TCP_CLOSE_WAIT], 0);

        f = pv_fopen(NETPROTO_FIXTURES, "linux-6.18/tcp6");
        assert_non_null(f);
        assert_int_equal(pv_tcp_states_read(f, UINT64_MAX, c), 0);
        fclose(f);
        assert_int_equal(c[PV_TCP_LISTEN], 1);
        assert_int_equal(c[PV_TCP_FIN_WAIT2], 1);
        assert_int_equal(c[PV_TCP_CLOSE_WAIT], 1);
        assert_int_equal(c[PV_TCP_ESTABLISHED], 0);

        f = pv_fopen(NETPROTO_FIXTURES, "garbage/tcp");
        assert_non_null(f);
        assert_int_equal(pv_tcp_states_read(f, UINT64_MAX, c), 0);
        fclose(f);
        assert_int_equal(c[PV_TCP_LISTEN], 1);
        assert_int_equal(c[PV_TCP_ESTABLISHED], 1);     /* not the short, bad or colonless ones */
        assert_int_equal(c[PV_TCP_NEW_SYN_RECV], 1);
        assert_int_equal(c[PV_TCP_TIME_WAIT], 1);
        assert_int_equal(c[0], 0);

        /* Bounded: 32 sockets, counted to 10 and one more. */
        f = pv_fopen(NETPROTO_FIXTURES, "linux-6.18/tcp");
        assert_non_null(f);
        assert_int_equal(pv_tcp_states_read(f, 10, c), -E2BIG);
        fclose(f);
        assert_int_equal(c[PV_TCP_LISTEN] + c[PV_TCP_ESTABLISHED] + c[PV_TCP_TIME_WAIT], 11);
}

/* Appends one netlink message of type and payload to b at *len. */
static void put_msg(char *b, size_t *len, uint16_t type, const void *payload, size_t plen)
{
        struct nlmsghdr *h = (struct nlmsghdr *) (b + *len);

        memset(h, 0, NLMSG_SPACE(plen));
        h->nlmsg_len = NLMSG_LENGTH(plen);
        h->nlmsg_type = type;
        memcpy(NLMSG_DATA(h), payload, plen);
        *len += NLMSG_SPACE(plen);
}

static void put_sock(char *b, size_t *len, uint8_t st)
{
        struct inet_diag_msg m = { .idiag_family = AF_INET, .idiag_state = st };

        put_msg(b, len, SOCK_DIAG_BY_FAMILY, &m, sizeof(m));
}

static void test_sockdiag_parse(void **state)
{
        _Alignas(struct nlmsghdr) char b[4096];
        uint64_t c[PV_TCP_N_STATES] = { 0 };
        struct nlmsgerr e = { .error = -EPERM };
        int done = 0;
        size_t len = 0;

        put_sock(b, &len, PV_TCP_ESTABLISHED);
        put_sock(b, &len, PV_TCP_ESTABLISHED);
        put_sock(b, &len, PV_TCP_LISTEN);
        put_sock(b, &len, 200);                         /* no such state: left out */
        assert_int_equal(pv_sockdiag_parse(b, len, c), 0);
        assert_int_equal(c[PV_TCP_ESTABLISHED], 2);
        assert_int_equal(c[PV_TCP_LISTEN], 1);
        /* The next buffer adds to the counts and ends the dump. */
        len = 0;
        put_sock(b, &len, PV_TCP_TIME_WAIT);
        put_msg(b, &len, NLMSG_DONE, &done, sizeof(done));
        put_sock(b, &len, PV_TCP_TIME_WAIT);            /* after the end: not read */
        assert_int_equal(pv_sockdiag_parse(b, len, c), 1);
        assert_int_equal(c[PV_TCP_TIME_WAIT], 1);
        assert_int_equal(c[PV_TCP_ESTABLISHED], 2);

        len = 0;
        put_msg(b, &len, NLMSG_ERROR, &e, sizeof(e));
        assert_int_equal(pv_sockdiag_parse(b, len, c), -EPERM);
        /* A record shorter than inet_diag_msg, and one cut off. */
        len = 0;
        put_msg(b, &len, SOCK_DIAG_BY_FAMILY, &done, sizeof(done));
        assert_int_equal(pv_sockdiag_parse(b, len, c), -EBADMSG);
        len = 0;
        put_sock(b, &len, PV_TCP_ESTABLISHED);
        assert_int_equal(pv_sockdiag_parse(b, len - 8, c), -EBADMSG);
        assert_int_equal(pv_sockdiag_parse(NULL, 0, c), -EINVAL);
}

/* A listener on ::1 or 127.0.0.1 and n connections to it, both ends open. */
static int open_pairs(int family, int n, int *fds)
{
        struct sockaddr_storage ss = { .ss_family = (sa_family_t) family };
        socklen_t sl = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
        int l = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (family == AF_INET)
                ((struct sockaddr_in *) &ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        else
                ((struct sockaddr_in6 *) &ss)->sin6_addr = in6addr_loopback;
        if (l < 0 || bind(l, (struct sockaddr *) &ss, sl) < 0 || listen(l, n) < 0 ||
            getsockname(l, (struct sockaddr *) &ss, &sl) < 0)
                return -1;
        fds[0] = l;
        for (int i = 0; i < n; i++) {
                fds[1 + 2 * i] = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
                assert_int_equal(connect(fds[1 + 2 * i], (struct sockaddr *) &ss, sl), 0);
                fds[2 + 2 * i] = accept(l, NULL, NULL);
                assert_true(fds[2 + 2 * i] >= 0);
        }
        return 0;
}

static void test_sockdiag_live(void **state)
{
        uint64_t before[PV_TCP_N_STATES], after[PV_TCP_N_STATES];
        int fds[1 + 2 * 3], r;

        r = pv_sockdiag_count(AF_INET6, UINT64_MAX, before);
        if (r == -EPROTONOSUPPORT || r == -EAFNOSUPPORT || r == -EACCES || r == -EPERM ||
            r == -ENOENT)
                skip();                                 /* no sock_diag (or no IPv6) here */
        assert_int_equal(r, 0);
        if (open_pairs(AF_INET6, 3, fds) < 0)
                skip();
        assert_int_equal(pv_sockdiag_count(AF_INET6, UINT64_MAX, after), 0);
        /*
         * Others' sockets come and go in the same namespace: ours are there
         * at least (3 connections are 6 established ends, and the listener).
         */
        assert_true(after[PV_TCP_ESTABLISHED] >= 6);
        assert_true(after[PV_TCP_LISTEN] >= 1);
        assert_int_equal(pv_sockdiag_count(AF_INET6, 2, after), -E2BIG);
        assert_int_equal(pv_sockdiag_count(AF_UNIX, 10, after), -EINVAL);
        for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
                close(fds[i]);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_linux_6_18),
                cmocka_unit_test(test_linux_2_6_32),
                cmocka_unit_test(test_snmp_garbage),
                cmocka_unit_test(test_other_garbage),
                cmocka_unit_test(test_tcp_states),
                cmocka_unit_test(test_sockdiag_parse),
                cmocka_unit_test(test_sockdiag_live),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
