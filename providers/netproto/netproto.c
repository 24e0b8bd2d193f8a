/* SPDX-License-Identifier: MIT */
/*
 * Network protocols: Windows' single-instance countersets TCPv4, TCPv6,
 * UDPv4, UDPv6, IPv4, IPv6, ICMP and ICMPv6, from /proc/net/snmp,
 * netstat, snmp6, sockstat and sockstat6 (each read once per collection)
 * and, for the TCP connections by state, sock_diag per family.
 *
 * Each counterset is a table of the kernel's field names indexed by
 * counter id (netsnmp.h); the counters a table cannot name (sums, states)
 * are computed after.  A file that cannot be read leaves its counters 0
 * and is logged once, so a kernel without IPv6 shows IPv4 as usual.
 * Linux keeps one TCP MIB for both IP versions: TCPv4 and TCPv6 show the
 * same segment and open counts, and their own connections by state.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "instances.h"
#include "netsnmp.h"
#include "plugin.h"
#include "procfs.h"
#include "netproto.h"

/*
 * Counting the sockets by state costs per socket (sock_diag's records, or
 * /proc/net/tcp's lines); past this many sockets of a family a collection
 * stops counting (and says so once) rather than spend a second on a
 * socket-flooded host.
 */
#define MAX_SOCKETS     (UINT64_C(1) << 18)
/*
 * perflibd asks for a collection once per counterset of a query, and a
 * collection costs about a millisecond (mostly sock_diag, whose dump walks
 * the kernel's whole TCP hash table): one taken this recently serves the
 * rest of the query.  Rates stay true to within REUSE_NS over their
 * interval, 2 % of a one-second sample at worst.
 */
#define REUSE_NS        (UINT64_C(20) * 1000000)
/* Room for every counter id of any counterset and the aux slots after them. */
#define N_SLOTS         40

/* The TCPv4/TCPv6 (and other) pairs have the same ids: netproto.man was written so. */
_Static_assert(PV_TCPV6_TIMEOUTS == PV_TCPV4_TIMEOUTS, "TCPv6 ids are TCPv4's");
_Static_assert(PV_UDPV6_SOCKETS_IN_USE == PV_UDPV4_SOCKETS_IN_USE, "UDPv6 ids are UDPv4's");
_Static_assert(PV_IPV6_FRAGMENT_QUEUE_BYTES == PV_IPV4_FRAGMENT_QUEUE_BYTES, "IPv6 ids are IPv4's");

enum { F_SNMP, F_NETSTAT, F_SNMP6, F_SOCKSTAT, F_SOCKSTAT6, N_FILES };

static const struct source {
        const char *rel;                /* under /proc */
        int (*parse)(const char *, const char *const *, size_t, uint64_t *, size_t *);
} sources[N_FILES] = {
        [F_SNMP] = { "net/snmp", pv_netsnmp_parse },
        [F_NETSTAT] = { "net/netstat", pv_netsnmp_parse },
        [F_SNMP6] = { "net/snmp6", pv_snmp6_parse },
        [F_SOCKSTAT] = { "net/sockstat", pv_sockstat_parse },
        [F_SOCKSTAT6] = { "net/sockstat6", pv_sockstat_parse },
};

#define TCP_KEYS(inuse) \
        [PV_TCPV4_CONNECTIONS_ACTIVE] = "Tcp:ActiveOpens", \
        [PV_TCPV4_CONNECTIONS_PASSIVE] = "Tcp:PassiveOpens", \
        [PV_TCPV4_CONNECTION_FAILURES] = "Tcp:AttemptFails", \
        [PV_TCPV4_CONNECTIONS_RESET] = "Tcp:EstabResets", \
        [PV_TCPV4_SEGMENTS_RECEIVED] = "Tcp:InSegs", \
        [PV_TCPV4_SEGMENTS_SENT] = "Tcp:OutSegs", \
        [PV_TCPV4_SEGMENTS_RETRANSMITTED] = "Tcp:RetransSegs", \
        [PV_TCPV4_SOCKETS_IN_USE] = inuse, \
        [PV_TCPV4_SEGMENTS_RECEIVED_ERRORS] = "Tcp:InErrs", \
        [PV_TCPV4_RESETS_SENT] = "Tcp:OutRsts", \
        [PV_TCPV4_LISTEN_OVERFLOWS] = "TcpExt:ListenOverflows", \
        [PV_TCPV4_LISTEN_DROPS] = "TcpExt:ListenDrops", \
        [PV_TCPV4_SYN_COOKIES_SENT] = "TcpExt:SyncookiesSent", \
        [PV_TCPV4_TIMEOUTS] = "TcpExt:TCPTimeouts"

static const char *const tcpv4_keys[N_SLOTS] = { TCP_KEYS("TCP:inuse") };
static const char *const tcpv6_keys[N_SLOTS] = { TCP_KEYS("TCP6:inuse") };

/* pre: "Udp:" (/proc/net/snmp) or "Udp6" (snmp6); ss: the sockstat section. */
#define UDP_KEYS(pre, ss) \
        [PV_UDPV4_DATAGRAMS_RECEIVED] = pre "InDatagrams", \
        [PV_UDPV4_DATAGRAMS_NO_PORT] = pre "NoPorts", \
        [PV_UDPV4_DATAGRAMS_RECEIVED_ERRORS] = pre "InErrors", \
        [PV_UDPV4_DATAGRAMS_SENT] = pre "OutDatagrams", \
        [PV_UDPV4_RECEIVE_BUFFER_ERRORS] = pre "RcvbufErrors", \
        [PV_UDPV4_SEND_BUFFER_ERRORS] = pre "SndbufErrors", \
        [PV_UDPV4_CHECKSUM_ERRORS] = pre "InCsumErrors", \
        [PV_UDPV4_SOCKETS_IN_USE] = ss ":inuse"

static const char *const udpv4_keys[N_SLOTS] = { UDP_KEYS("Udp:", "UDP") };
static const char *const udpv6_keys[N_SLOTS] = { UDP_KEYS("Udp6", "UDP6") };

/* IPv4's forwarded count and octets have other names than IPv6's. */
#define IP_KEYS(pre, fwd, octets, frag) \
        [PV_IPV4_DATAGRAMS_RECEIVED] = pre "InReceives", \
        [PV_IPV4_DATAGRAMS_RECEIVED_HEADER_ERRORS] = pre "InHdrErrors", \
        [PV_IPV4_DATAGRAMS_RECEIVED_ADDRESS_ERRORS] = pre "InAddrErrors", \
        [PV_IPV4_DATAGRAMS_FORWARDED] = pre fwd, \
        [PV_IPV4_DATAGRAMS_RECEIVED_UNKNOWN_PROTOCOL] = pre "InUnknownProtos", \
        [PV_IPV4_DATAGRAMS_RECEIVED_DISCARDED] = pre "InDiscards", \
        [PV_IPV4_DATAGRAMS_RECEIVED_DELIVERED] = pre "InDelivers", \
        [PV_IPV4_DATAGRAMS_SENT] = pre "OutRequests", \
        [PV_IPV4_DATAGRAMS_OUTBOUND_DISCARDED] = pre "OutDiscards", \
        [PV_IPV4_DATAGRAMS_OUTBOUND_NO_ROUTE] = pre "OutNoRoutes", \
        [PV_IPV4_FRAGMENTS_RECEIVED] = pre "ReasmReqds", \
        [PV_IPV4_FRAGMENTS_REASSEMBLED] = pre "ReasmOKs", \
        [PV_IPV4_FRAGMENT_REASSEMBLY_FAILURES] = pre "ReasmFails", \
        [PV_IPV4_FRAGMENTED_DATAGRAMS] = pre "FragOKs", \
        [PV_IPV4_FRAGMENTATION_FAILURES] = pre "FragFails", \
        [PV_IPV4_FRAGMENTS_CREATED] = pre "FragCreates", \
        [PV_IPV4_BYTES_RECEIVED] = octets "InOctets", \
        [PV_IPV4_BYTES_SENT] = octets "OutOctets", \
        [PV_IPV4_FRAGMENT_QUEUES] = frag ":inuse", \
        [PV_IPV4_FRAGMENT_QUEUE_BYTES] = frag ":memory"

static const char *const ipv4_keys[N_SLOTS] = {
        IP_KEYS("Ip:", "ForwDatagrams", "IpExt:", "FRAG")
};
static const char *const ipv6_keys[N_SLOTS] = {
        IP_KEYS("Ip6", "OutForwDatagrams", "Ip6", "FRAG6")
};

#define ICMP_KEY(id, field) [PV_ICMP_##id] = "Icmp:" #field
static const char *const icmp_keys[N_SLOTS] = {
        ICMP_KEY(MESSAGES_RECEIVED, InMsgs),
        ICMP_KEY(MESSAGES_RECEIVED_ERRORS, InErrors),
        ICMP_KEY(RECEIVED_DEST_UNREACHABLE, InDestUnreachs),
        ICMP_KEY(RECEIVED_TIME_EXCEEDED, InTimeExcds),
        ICMP_KEY(RECEIVED_PARAMETER_PROBLEM, InParmProbs),
        ICMP_KEY(RECEIVED_SOURCE_QUENCH, InSrcQuenchs),
        ICMP_KEY(RECEIVED_REDIRECT, InRedirects),
        ICMP_KEY(RECEIVED_ECHO, InEchos),
        ICMP_KEY(RECEIVED_ECHO_REPLY, InEchoReps),
        ICMP_KEY(RECEIVED_TIMESTAMP, InTimestamps),
        ICMP_KEY(RECEIVED_TIMESTAMP_REPLY, InTimestampReps),
        ICMP_KEY(RECEIVED_ADDRESS_MASK, InAddrMasks),
        ICMP_KEY(RECEIVED_ADDRESS_MASK_REPLY, InAddrMaskReps),
        ICMP_KEY(MESSAGES_SENT, OutMsgs),
        ICMP_KEY(MESSAGES_OUTBOUND_ERRORS, OutErrors),
        ICMP_KEY(SENT_DESTINATION_UNREACHABLE, OutDestUnreachs),
        ICMP_KEY(SENT_TIME_EXCEEDED, OutTimeExcds),
        ICMP_KEY(SENT_PARAMETER_PROBLEM, OutParmProbs),
        ICMP_KEY(SENT_SOURCE_QUENCH, OutSrcQuenchs),
        ICMP_KEY(SENT_REDIRECT, OutRedirects),
        ICMP_KEY(SENT_ECHO, OutEchos),
        ICMP_KEY(SENT_ECHO_REPLY, OutEchoReps),
        ICMP_KEY(SENT_TIMESTAMP, OutTimestamps),
        ICMP_KEY(SENT_TIMESTAMP_REPLY, OutTimestampReps),
        ICMP_KEY(SENT_ADDRESS_MASK, OutAddrMasks),
        ICMP_KEY(SENT_ADDRESS_MASK_REPLY, OutAddrMaskReps),
        ICMP_KEY(RECEIVED_CHECKSUM_ERRORS, InCsumErrors),
};

/* Windows' Membership Report counts MLDv1 and MLDv2 reports; Linux counts them apart. */
enum { AUX_IN_MLDV2 = PV_ICMPV6_RECEIVED_CHECKSUM_ERRORS + 1, AUX_OUT_MLDV2 };
_Static_assert(AUX_OUT_MLDV2 < N_SLOTS, "N_SLOTS holds the aux slots");

#define ICMP6_KEY(id, field) [PV_ICMPV6_##id] = "Icmp6" #field
static const char *const icmpv6_keys[N_SLOTS] = {
        ICMP6_KEY(MESSAGES_RECEIVED, InMsgs),
        ICMP6_KEY(MESSAGES_RECEIVED_ERRORS, InErrors),
        ICMP6_KEY(RECEIVED_DEST_UNREACHABLE, InDestUnreachs),
        ICMP6_KEY(RECEIVED_PACKET_TOO_BIG, InPktTooBigs),
        ICMP6_KEY(RECEIVED_TIME_EXCEEDED, InTimeExcds),
        ICMP6_KEY(RECEIVED_PARAMETER_PROBLEM, InParmProblems),
        ICMP6_KEY(RECEIVED_ECHO, InEchos),
        ICMP6_KEY(RECEIVED_ECHO_REPLY, InEchoReplies),
        ICMP6_KEY(RECEIVED_MEMBERSHIP_QUERY, InGroupMembQueries),
        ICMP6_KEY(RECEIVED_MEMBERSHIP_REPORT, InGroupMembResponses),
        ICMP6_KEY(RECEIVED_MEMBERSHIP_REDUCTION, InGroupMembReductions),
        ICMP6_KEY(RECEIVED_ROUTER_SOLICIT, InRouterSolicits),
        ICMP6_KEY(RECEIVED_ROUTER_ADVERT, InRouterAdvertisements),
        ICMP6_KEY(RECEIVED_NEIGHBOR_SOLICIT, InNeighborSolicits),
        ICMP6_KEY(RECEIVED_NEIGHBOR_ADVERT, InNeighborAdvertisements),
        ICMP6_KEY(RECEIVED_REDIRECT, InRedirects),
        ICMP6_KEY(MESSAGES_SENT, OutMsgs),
        ICMP6_KEY(MESSAGES_OUTBOUND_ERRORS, OutErrors),
        ICMP6_KEY(SENT_DESTINATION_UNREACHABLE, OutDestUnreachs),
        ICMP6_KEY(SENT_PACKET_TOO_BIG, OutPktTooBigs),
        ICMP6_KEY(SENT_TIME_EXCEEDED, OutTimeExcds),
        ICMP6_KEY(SENT_PARAMETER_PROBLEM, OutParmProblems),
        ICMP6_KEY(SENT_ECHO, OutEchos),
        ICMP6_KEY(SENT_ECHO_REPLY, OutEchoReplies),
        ICMP6_KEY(SENT_MEMBERSHIP_QUERY, OutGroupMembQueries),
        ICMP6_KEY(SENT_MEMBERSHIP_REPORT, OutGroupMembResponses),
        ICMP6_KEY(SENT_MEMBERSHIP_REDUCTION, OutGroupMembReductions),
        ICMP6_KEY(SENT_ROUTER_SOLICIT, OutRouterSolicits),
        ICMP6_KEY(SENT_ROUTER_ADVERT, OutRouterAdvertisements),
        ICMP6_KEY(SENT_NEIGHBOR_SOLICIT, OutNeighborSolicits),
        ICMP6_KEY(SENT_NEIGHBOR_ADVERT, OutNeighborAdvertisements),
        ICMP6_KEY(SENT_REDIRECT, OutRedirects),
        ICMP6_KEY(RECEIVED_CHECKSUM_ERRORS, InCsumErrors),
        [AUX_IN_MLDV2] = "Icmp6InMLDv2Reports",
        [AUX_OUT_MLDV2] = "Icmp6OutMLDv2Reports",
};

/* What a collection read: the files' texts (NULL when unreadable) and the TCP states. */
struct reading {
        const char *text[N_FILES];
        uint64_t states[2][PV_TCP_N_STATES];    /* [0] AF_INET, [1] AF_INET6 */
};

struct cset {
        const GUID *guid;
        const PERF_COUNTERSET_INFO *info;
        const char *const *keys;                /* N_SLOTS of them */
        unsigned files;                         /* 1 << F_... of the files the keys name */
        int family;                             /* the TCP states' index, for TCP */
        void (*derive)(const struct cset *c, const struct reading *rd, uint64_t *v);
};

static void tcp_derive(const struct cset *c, const struct reading *rd, uint64_t *v)
{
        const uint64_t *st = rd->states[c->family];

        v[PV_TCPV4_SEGMENTS] = v[PV_TCPV4_SEGMENTS_RECEIVED] + v[PV_TCPV4_SEGMENTS_SENT];
        /* Windows' and the MIB's definition: ESTABLISHED or CLOSE-WAIT. */
        v[PV_TCPV4_CONNECTIONS_ESTABLISHED] = st[PV_TCP_ESTABLISHED] + st[PV_TCP_CLOSE_WAIT];
        v[PV_TCPV4_CONNECTIONS_LISTENING] = st[PV_TCP_LISTEN];
        v[PV_TCPV4_CONNECTIONS_SYN_SENT] = st[PV_TCP_SYN_SENT];
        v[PV_TCPV4_CONNECTIONS_SYN_RECEIVED] = st[PV_TCP_SYN_RECV] + st[PV_TCP_NEW_SYN_RECV];
        v[PV_TCPV4_CONNECTIONS_FIN_WAIT_1] = st[PV_TCP_FIN_WAIT1];
        v[PV_TCPV4_CONNECTIONS_FIN_WAIT_2] = st[PV_TCP_FIN_WAIT2];
        v[PV_TCPV4_CONNECTIONS_TIME_WAIT] = st[PV_TCP_TIME_WAIT];
        v[PV_TCPV4_CONNECTIONS_CLOSE_WAIT] = st[PV_TCP_CLOSE_WAIT];
        v[PV_TCPV4_CONNECTIONS_LAST_ACK] = st[PV_TCP_LAST_ACK];
        v[PV_TCPV4_CONNECTIONS_CLOSING] = st[PV_TCP_CLOSING];
}

static void udp_derive(const struct cset *c, const struct reading *rd, uint64_t *v)
{
        v[PV_UDPV4_DATAGRAMS] = v[PV_UDPV4_DATAGRAMS_RECEIVED] + v[PV_UDPV4_DATAGRAMS_SENT];
}

static void ip_derive(const struct cset *c, const struct reading *rd, uint64_t *v)
{
        v[PV_IPV4_DATAGRAMS] = v[PV_IPV4_DATAGRAMS_RECEIVED] + v[PV_IPV4_DATAGRAMS_SENT];
}

static void icmp_derive(const struct cset *c, const struct reading *rd, uint64_t *v)
{
        v[PV_ICMP_MESSAGES] = v[PV_ICMP_MESSAGES_RECEIVED] + v[PV_ICMP_MESSAGES_SENT];
}

static void icmpv6_derive(const struct cset *c, const struct reading *rd, uint64_t *v)
{
        v[PV_ICMPV6_MESSAGES] = v[PV_ICMPV6_MESSAGES_RECEIVED] + v[PV_ICMPV6_MESSAGES_SENT];
        v[PV_ICMPV6_RECEIVED_MEMBERSHIP_REPORT] += v[AUX_IN_MLDV2];
        v[PV_ICMPV6_SENT_MEMBERSHIP_REPORT] += v[AUX_OUT_MLDV2];
}

#define BIT(f) (1u << (f))
static const struct cset csets[] = {
        { &PV_TCPV4Guid, &PV_TCPV4Info.CounterSet, tcpv4_keys,
          BIT(F_SNMP) | BIT(F_NETSTAT) | BIT(F_SOCKSTAT), 0, tcp_derive },
        { &PV_TCPV6Guid, &PV_TCPV6Info.CounterSet, tcpv6_keys,
          BIT(F_SNMP) | BIT(F_NETSTAT) | BIT(F_SOCKSTAT6), 1, tcp_derive },
        { &PV_UDPV4Guid, &PV_UDPV4Info.CounterSet, udpv4_keys,
          BIT(F_SNMP) | BIT(F_SOCKSTAT), 0, udp_derive },
        { &PV_UDPV6Guid, &PV_UDPV6Info.CounterSet, udpv6_keys,
          BIT(F_SNMP6) | BIT(F_SOCKSTAT6), 1, udp_derive },
        { &PV_IPV4Guid, &PV_IPV4Info.CounterSet, ipv4_keys,
          BIT(F_SNMP) | BIT(F_NETSTAT) | BIT(F_SOCKSTAT), 0, ip_derive },
        { &PV_IPV6Guid, &PV_IPV6Info.CounterSet, ipv6_keys,
          BIT(F_SNMP6) | BIT(F_SOCKSTAT6), 1, ip_derive },
        { &PV_ICMPGuid, &PV_ICMPInfo.CounterSet, icmp_keys, BIT(F_SNMP), 0, icmp_derive },
        { &PV_ICMPV6Guid, &PV_ICMPV6Info.CounterSet, icmpv6_keys, BIT(F_SNMP6), 1,
          icmpv6_derive },
};
#define N_CSETS (sizeof(csets) / sizeof(csets[0]))

static PPERF_COUNTERSET_INSTANCE instances[N_CSETS];
/* The texts, big enough for a 6.x netstat several times over; static: one collection at a time. */
static char texts[N_FILES][32768];
/* The last error of each file and of each family's socket count, to log a change once. */
static int file_error[N_FILES];
static int states_error[2];
static int diag_error[2];
/* When the values were last collected (CLOCK_MONOTONIC ns), 0 before the first time. */
static uint64_t collected_at;

/* Logs what failed when it starts failing (or fails otherwise), not at every collection. */
static void note(int *last, const char *what, int r)
{
        if (r < 0 && r != *last)
                pv_log(LOG_WARNING, "%s: %s", what, strerror(-r));
        *last = r;
}

/* The /proc file ss falls back to without sock_diag. */
static int read_states_file(int idx, uint64_t *states)
{
        static const char *const rel[2] = { "net/tcp", "net/tcp6" };
        FILE *f = pv_fopen("/proc", rel[idx]);
        int r;

        if (!f)
                return -errno;
        r = pv_tcp_states_read(f, MAX_SOCKETS, states);
        fclose(f);
        return r;
}

/* The TCP sockets of a family by state; idx 0 is IPv4, 1 IPv6. */
static void read_states(int idx, uint64_t *states)
{
        static const char *const what[2][2] = {
                { "sock_diag of IPv4 (reading /proc/net/tcp instead)", "TCP states of IPv4" },
                { "sock_diag of IPv6 (reading /proc/net/tcp6 instead)", "TCP states of IPv6" },
        };
        int r = pv_sockdiag_count(idx ? AF_INET6 : AF_INET, MAX_SOCKETS, states);

        if (r != -E2BIG)
                note(&diag_error[idx], what[idx][0], r);
        if (r < 0 && r != -E2BIG)
                r = read_states_file(idx, states);
        if (r == -E2BIG) {
                /* The counts of the sockets seen stand: the bound is logged, once. */
                if (states_error[idx] != r)
                        pv_log(LOG_WARNING, "more than %llu TCP sockets of %s: counted no further",
                               (unsigned long long) MAX_SOCKETS, idx ? "IPv6" : "IPv4");
                states_error[idx] = r;
                return;
        }
        note(&states_error[idx], what[idx][1], r);
        if (r < 0)
                memset(states, 0, PV_TCP_N_STATES * sizeof(*states));
}

static void read_all(struct reading *rd)
{
        for (int f = 0; f < N_FILES; f++) {
                int r = pv_read_small("/proc", sources[f].rel, texts[f], sizeof(texts[f]));
                char what[64];

                snprintf(what, sizeof(what), "/proc/%s (its counters stay 0)", sources[f].rel);
                note(&file_error[f], what, r);
                rd->text[f] = r < 0 ? NULL : texts[f];
        }
        read_states(0, rd->states[0]);
        read_states(1, rd->states[1]);
}

static uint64_t monotonic_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static int collect(void)
{
        uint64_t now = monotonic_ns();
        struct reading rd;

        if (collected_at && now - collected_at < REUSE_NS)
                return 0;
        collected_at = now;
        read_all(&rd);
        for (size_t i = 0; i < N_CSETS; i++) {
                const struct cset *c = &csets[i];
                uint64_t v[N_SLOTS] = { 0 };

                for (int f = 0; f < N_FILES; f++)
                        if ((c->files & BIT(f)) && rd.text[f])
                                (void) sources[f].parse(rd.text[f], c->keys, N_SLOTS, v, NULL);
                c->derive(c, &rd, v);
                pv_set_values(PV_NETPROTO_PROVIDER, instances[i], c->info, v, N_SLOTS);
        }
        return 0;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status = CounterInitialize(callback, NULL, NULL, NULL);

        collected_at = 0;
        for (size_t i = 0; i < N_CSETS && status == ERROR_SUCCESS; i++)
                status = pv_single_instance(PV_NETPROTO_PROVIDER, csets[i].guid, CounterCleanup,
                                            &instances[i]);
        return status;
}

static void stop(void)
{
        CounterCleanup();
        memset(instances, 0, sizeof(instances));
}

const struct pv_provider pv_provider = {
        .name = "netproto", .start = start, .collect = collect, .stop = stop,
};
