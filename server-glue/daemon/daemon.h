/* SPDX-License-Identifier: MIT */
/*
 * daemon.h: the state perflibd's main (perflibd.c) and its listeners and
 * connections (conn.c) share.  Internal to perflibd.
 */
#ifndef PERFLIBD_DAEMON_H
#define PERFLIBD_DAEMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "ns-live.h"            /* struct ns_timings */

struct conn;
struct ns;
struct pv2_budget;
struct plugins;
struct reg_entry;
struct ctrpp_provider_desc;

/*
 * What one client may hold (perflibd(8), LIMITS); 0 turns a deadline or the
 * per-user cap off.  Set from the command line before the listeners start.
 */
struct conn_limits {
        unsigned bind_timeout_sec;      /* accepted to bind_ack */
        unsigned idle_timeout_sec;      /* between complete requests, and per blocked send */
        size_t max_clients;             /* others are refused beyond it */
        size_t max_per_user;            /* per uid (Unix) or remote address (TCP) */
        size_t max_request;             /* stub bytes of one reassembled request */
        size_t request_budget;          /* request buffers of all connections together */
        size_t max_queries;             /* open query handles per connection */
        size_t max_items;               /* items per query handle */
        size_t query_memory;            /* snapshots and replies of all queries together */
};

struct daemon {
        sd_event *event;
        struct ns *ns;

        char *runtime_dir;
        char *registry_dir;
        char *plugin_dir;
        char *socket_path;              /* the Unix socket we made, NULL under socket activation */
        char *listen_tcp;               /* HOST:PORT, NULL = no TCP */
        bool have_group;
        gid_t group;                    /* members may query, besides root and our own user */
        uint64_t max_segment;           /* bytes: one provider's segment, at most */
        uint64_t max_mapped;            /* bytes: all segments mapped together, at most */
        size_t max_countersets;         /* self-described, per user but root and ours */
        struct ns_timings ns_timings;   /* the namespace's, in ns */

        struct reg_entry *reg;          /* the installed manifests */
        size_t n_reg;
        const struct ctrpp_provider_desc **reg_descs;
        struct plugins *plugins;
        sd_event_source *plugin_timer;  /* a plugin file waits: plugins_next_sync */

        /* Client connections, each served by a thread of its own (conn.c). */
        pthread_mutex_t conns_lock;
        pthread_cond_t conns_cond;      /* a connection went away */
        struct conn *conns;
        size_t n_clients;               /* atomic */
        struct conn_limits limits;
        struct pv2_budget *budget;      /* for requests being reassembled, shared */
};

/* ---- conn.c ---- */

/* Connections root and the server's user find beyond max_clients. */
#define CONN_PRIVILEGED_RESERVE 16u
/* The ceiling of --max-query-items: the operations' (PCQ_SESSION_MAX_ITEMS). */
#define CONN_MAX_QUERY_ITEMS 8192u

/* The defaults perflibd(8) documents. */
void conn_limits_default(struct conn_limits *l);

/*
 * Listens on fd (a bound, listening stream socket; the daemon owns it from
 * now on).  tcp: connections from it are not authorised by credentials.
 */
int listener_add(struct daemon *d, int fd, bool tcp);

/* Closes every client connection and waits for their threads to finish. */
void conns_stop(struct daemon *d);

/* Makes, binds and listens on the Unix socket at path; *ret_fd is ours. */
int listen_unix(const char *path, int *ret_fd);
/* HOST:PORT (IPv6 as [addr]:port); *ret_fd is ours. */
int listen_tcp(const char *spec, int *ret_fd);

#endif /* PERFLIBD_DAEMON_H */
