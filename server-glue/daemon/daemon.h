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

struct conn;
struct ns;
struct plugins;
struct reg_entry;
struct ctrpp_provider_desc;

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

        struct reg_entry *reg;          /* the installed manifests */
        size_t n_reg;
        const struct ctrpp_provider_desc **reg_descs;
        struct plugins *plugins;

        /* Client connections, each served by a thread of its own (conn.c). */
        pthread_mutex_t conns_lock;
        pthread_cond_t conns_cond;      /* a connection went away */
        struct conn *conns;
        size_t n_clients;               /* atomic */
};

/* ---- conn.c ---- */

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
