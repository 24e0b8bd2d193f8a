/* SPDX-License-Identifier: MIT */
/*
 * netsnmp.h: parsers of the kernel's network protocol counters and its
 * TCP sockets by state.  Internal to providers/ (the netproto plugin and
 * the unit tests).
 *
 * The text parsers take a whole file read with pv_read_small() and a
 * table of keys; keys[i] names what values[i] receives, a NULL key names
 * nothing (the caller computes that value).  A value that the text does
 * not hold, or does not hold as a number, is left as it was, so a field
 * that an older kernel lacks keeps the caller's default.  Keys name a
 * field as its file does:
 *   /proc/net/snmp, /proc/net/netstat  "Tcp:ActiveOpens", "TcpExt:ListenDrops"
 *                                      (a line of names, then one of values)
 *   /proc/net/sockstat, sockstat6      "TCP:inuse", "FRAG6:memory"
 *                                      ("SECTION: name value name value ...")
 *   /proc/net/snmp6                    "Udp6InDatagrams" ("name value" lines)
 * Every parser matches only the keys of its own shape, so one table may
 * hold keys of several files.  They return 0 or -EINVAL, and the number
 * of values set in *ret_found (may be NULL).
 */
#ifndef PV_NETSNMP_H
#define PV_NETSNMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int pv_netsnmp_parse(const char *text, const char *const *keys, size_t n, uint64_t *values,
                     size_t *ret_found);
int pv_sockstat_parse(const char *text, const char *const *keys, size_t n, uint64_t *values,
                      size_t *ret_found);
int pv_snmp6_parse(const char *text, const char *const *keys, size_t n, uint64_t *values,
                   size_t *ret_found);

/* ---- TCP sockets by state ---- */

/* The kernel's TCP states (include/net/tcp_states.h), which index the counts. */
enum {
        PV_TCP_ESTABLISHED = 1, PV_TCP_SYN_SENT, PV_TCP_SYN_RECV, PV_TCP_FIN_WAIT1,
        PV_TCP_FIN_WAIT2, PV_TCP_TIME_WAIT, PV_TCP_CLOSE, PV_TCP_CLOSE_WAIT, PV_TCP_LAST_ACK,
        PV_TCP_LISTEN, PV_TCP_CLOSING, PV_TCP_NEW_SYN_RECV, PV_TCP_N_STATES
};

/*
 * /proc/net/tcp or tcp6: counts[state] is set to the number of sockets in
 * each state (all zeroed first); lines without a state are skipped.  At
 * most max sockets are counted: -E2BIG when there were more.
 */
int pv_tcp_states_read(FILE *f, uint64_t max, uint64_t counts[PV_TCP_N_STATES]);

/*
 * One buffer of a NETLINK_SOCK_DIAG dump of inet_diag_msg records: adds
 * each record's state to counts.  Returns 1 when the buffer ended the dump
 * (NLMSG_DONE), 0 when more is to come, -errno for a kernel error message
 * or a malformed buffer.
 */
int pv_sockdiag_parse(const void *buf, size_t len, uint64_t counts[PV_TCP_N_STATES]);

/*
 * The TCP sockets of family (AF_INET, AF_INET6) of this network namespace
 * by state, through sock_diag (no privilege needed).  At most max sockets
 * are counted: -E2BIG when there were more (counts hold what was read).
 * Every state is asked for, TIME_WAIT and request sockets included.
 */
int pv_sockdiag_count(int family, uint64_t max, uint64_t counts[PV_TCP_N_STATES]);

#endif /* PV_NETSNMP_H */
