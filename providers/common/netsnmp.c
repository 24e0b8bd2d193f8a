/* SPDX-License-Identifier: MIT */
/*
 * The network protocol counter parsers of the Linux providers (netsnmp.h).
 * The text files grow with every kernel (new sections, new fields at the
 * ends of lines), so whatever is not understood is skipped, never an
 * error: a field missing from an old kernel keeps its default, and a
 * damaged line costs only its own values.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>

#include "netsnmp.h"

/* A run of characters of a line, not NUL-terminated. */
struct span {
        const char *s;
        size_t len;
};

#define BLANKS " \t"
#define LINE_END "\n"

/* The next blank-separated token of the line at *p; false at the line's end. */
static bool next_token(const char **p, struct span *ret)
{
        const char *s = *p + strspn(*p, BLANKS);
        size_t len = strcspn(s, BLANKS LINE_END);

        *p = s + len;
        if (len == 0)
                return false;
        *ret = (struct span) { s, len };
        return true;
}

/* The start of the line after the one at p; NULL after the last. */
static const char *next_line(const char *p)
{
        const char *nl = strchr(p, '\n');

        return nl ? nl + 1 : NULL;
}

/*
 * A decimal count.  A negative figure (Tcp MaxConn's -1, "no limit") is 0:
 * the counters are unsigned and no count is below zero.  Anything else,
 * an overflow included, is not a number.
 */
static bool parse_count(struct span t, uint64_t *ret)
{
        uint64_t v = 0;
        size_t i = 0;

        if (t.len > 1 && t.s[0] == '-') {
                for (i = 1; i < t.len; i++)
                        if (t.s[i] < '0' || t.s[i] > '9')
                                return false;
                *ret = 0;
                return true;
        }
        for (; i < t.len; i++) {
                unsigned d = (unsigned) (t.s[i] - '0');

                if (d > 9 || v > (UINT64_MAX - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *ret = v;
        return true;
}

static bool is_number(struct span t)
{
        return t.s[0] == '-' || (t.s[0] >= '0' && t.s[0] <= '9');
}

/* Whether key is "SECTION:NAME" (sect.len > 0) or "NAME" (no section). */
static bool key_is(const char *key, struct span sect, struct span name)
{
        if (sect.len) {
                if (strncmp(key, sect.s, sect.len) != 0 || key[sect.len] != ':')
                        return false;
                key += sect.len + 1;
        }
        return strncmp(key, name.s, name.len) == 0 && key[name.len] == '\0';
}

struct table {
        const char *const *keys;
        size_t n;
        uint64_t *values;
        size_t found;
};

/* Sets the value of the key that names (sect, name), if any and if value is a number. */
static void table_set(struct table *t, struct span sect, struct span name, struct span value)
{
        uint64_t v;

        for (size_t i = 0; i < t->n; i++) {
                if (!t->keys[i] || !key_is(t->keys[i], sect, name))
                        continue;
                if (parse_count(value, &v)) {
                        t->values[i] = v;
                        t->found++;
                }
                return;
        }
}

/* "Section:" at the start of the line: its name, and *p after the colon. */
static bool line_section(const char **p, struct span *ret)
{
        const char *s = *p;
        size_t len = strcspn(s, ":" BLANKS LINE_END);

        if (len == 0 || s[len] != ':')
                return false;
        *ret = (struct span) { s, len };
        *p = s + len + 1;
        return true;
}

/* A line of names after its header and the line of values that follows it. */
static void netsnmp_pair(struct table *t, struct span sect, const char *names,
                         const char *values)
{
        struct span name, value;

        while (next_token(&names, &name) && next_token(&values, &value))
                table_set(t, sect, name, value);
}

int pv_netsnmp_parse(const char *text, const char *const *keys, size_t n, uint64_t *values,
                     size_t *ret_found)
{
        struct table t = { keys, n, values, 0 };
        struct span pending = { 0 }, sect, first;
        const char *pending_rest = NULL, *p;

        if (!text || (n && (!keys || !values)))
                return -EINVAL;
        for (const char *line = text; line && *line; line = next_line(line)) {
                const char *rest = line;

                if (!line_section(&rest, &sect)) {
                        pending_rest = NULL;
                        continue;
                }
                p = rest;
                if (!next_token(&p, &first)) {
                        pending_rest = NULL;
                        continue;
                }
                if (!is_number(first)) {
                        /* A line of names: its values come on the next line. */
                        pending = sect;
                        pending_rest = rest;
                        continue;
                }
                if (pending_rest && pending.len == sect.len &&
                    memcmp(pending.s, sect.s, sect.len) == 0)
                        netsnmp_pair(&t, sect, pending_rest, rest);
                pending_rest = NULL;
        }
        if (ret_found)
                *ret_found = t.found;
        return 0;
}

int pv_sockstat_parse(const char *text, const char *const *keys, size_t n, uint64_t *values,
                      size_t *ret_found)
{
        struct table t = { keys, n, values, 0 };
        struct span sect, name, value;

        if (!text || (n && (!keys || !values)))
                return -EINVAL;
        for (const char *line = text; line && *line; line = next_line(line)) {
                const char *p = line;

                if (!line_section(&p, &sect))
                        continue;
                while (next_token(&p, &name) && next_token(&p, &value))
                        table_set(&t, sect, name, value);
        }
        if (ret_found)
                *ret_found = t.found;
        return 0;
}

int pv_snmp6_parse(const char *text, const char *const *keys, size_t n, uint64_t *values,
                   size_t *ret_found)
{
        struct table t = { keys, n, values, 0 };
        struct span name, value, none = { "", 0 };

        if (!text || (n && (!keys || !values)))
                return -EINVAL;
        for (const char *line = text; line && *line; line = next_line(line)) {
                const char *p = line;

                /* A name with a colon is another file's: its keys are not for this one. */
                if (next_token(&p, &name) && !memchr(name.s, ':', name.len) &&
                    next_token(&p, &value))
                        table_set(&t, none, name, value);
        }
        if (ret_found)
                *ret_found = t.found;
        return 0;
}

/* ---- TCP sockets by state ---- */

int pv_tcp_states_read(FILE *f, uint64_t max, uint64_t counts[PV_TCP_N_STATES])
{
        char *line = NULL;
        size_t cap = 0;
        uint64_t total = 0;
        int r = 0;

        if (!f || !counts)
                return -EINVAL;
        memset(counts, 0, PV_TCP_N_STATES * sizeof(*counts));
        while (r == 0 && getline(&line, &cap, f) > 0) {
                /* "sl: local remote st ...": st is the state, two hex digits. */
                const char *p = line;
                struct span t[4];
                unsigned long st;
                char *end;
                int i;

                for (i = 0; i < 4 && next_token(&p, &t[i]); i++)
                        ;
                if (i < 4 || t[0].s[t[0].len - 1] != ':' || t[3].len != 2)
                        continue;
                st = strtoul(t[3].s, &end, 16);
                if (end != t[3].s + 2 || st == 0 || st >= PV_TCP_N_STATES)
                        continue;
                counts[st]++;
                if (++total > max)
                        r = -E2BIG;
        }
        free(line);
        return ferror(f) ? -EIO : r;
}

int pv_sockdiag_parse(const void *buf, size_t len, uint64_t counts[PV_TCP_N_STATES])
{
        const struct nlmsghdr *h = buf;
        int left = (int) len;

        if (!buf || !counts || len > INT_MAX)
                return -EINVAL;
        for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
                const struct inet_diag_msg *m = NLMSG_DATA(h);

                if (h->nlmsg_type == NLMSG_DONE)
                        return 1;
                if (h->nlmsg_type == NLMSG_ERROR) {
                        const struct nlmsgerr *e = NLMSG_DATA(h);

                        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)) || e->error >= 0)
                                return -EBADMSG;
                        return e->error;
                }
                if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
                        continue;
                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
                        return -EBADMSG;
                if (m->idiag_state < PV_TCP_N_STATES)
                        counts[m->idiag_state]++;
        }
        /* The kernel sends whole messages: anything left over is damage. */
        return left == 0 ? 0 : -EBADMSG;
}

static int sockdiag_request(int fd, int family)
{
        struct {
                struct nlmsghdr h;
                struct inet_diag_req_v2 r;
        } req = {
                .h = {
                        .nlmsg_len = sizeof(req),
                        .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                        .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
                        .nlmsg_seq = 1,
                },
                .r = {
                        .sdiag_family = (uint8_t) family,
                        .sdiag_protocol = IPPROTO_TCP,
                        .idiag_states = (1u << PV_TCP_N_STATES) - 1,
                },
        };
        struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
        /* A dump never blocks a collection for long, whatever the kernel does. */
        struct timeval timeout = { .tv_sec = 1 };

        if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) < 0)
                return -errno;
        if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *) &kernel, sizeof(kernel)) < 0)
                return -errno;
        return 0;
}

/* The dump's buffers, counted until NLMSG_DONE or max. */
static int sockdiag_receive(int fd, uint64_t max, uint64_t counts[PV_TCP_N_STATES])
{
        /* ss's size: the kernel fills dump buffers of up to 32 KiB. */
        enum { BUF_SIZE = 32768 };
        void *buf = malloc(BUF_SIZE);
        int r = 0;

        if (!buf)
                return -ENOMEM;
        while (r == 0) {
                struct iovec iov = { buf, BUF_SIZE };
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
                ssize_t got = recvmsg(fd, &mh, 0);
                uint64_t total = 0;

                if (got < 0 && errno == EINTR)
                        continue;
                if (got <= 0) {
                        r = got < 0 ? -errno : -EBADMSG;
                        break;
                }
                if (mh.msg_flags & MSG_TRUNC) {
                        r = -EMSGSIZE;
                        break;
                }
                r = pv_sockdiag_parse(buf, (size_t) got, counts);
                for (int s = 0; s < PV_TCP_N_STATES; s++)
                        total += counts[s];
                if (r >= 0 && total > max)
                        r = -E2BIG;
        }
        free(buf);
        return r < 0 ? r : 0;
}

int pv_sockdiag_count(int family, uint64_t max, uint64_t counts[PV_TCP_N_STATES])
{
        int fd, r;

        if (!counts || (family != AF_INET && family != AF_INET6))
                return -EINVAL;
        memset(counts, 0, PV_TCP_N_STATES * sizeof(*counts));
        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
        if (fd < 0)
                return -errno;
        r = sockdiag_request(fd, family);
        if (r == 0)
                r = sockdiag_receive(fd, max, counts);
        close(fd);
        return r;
}
