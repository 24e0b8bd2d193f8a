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
#include "plugin-conf.h"        /* struct plugin_limits */

struct conn;
struct ns;
struct pv2_budget;
struct plugins;
struct reg_entry;
struct remote_auth;
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
        char *accounts;                 /* the accounts file; NULL: the default */
        char *keytab;                   /* Kerberos' keytab; NULL: no Kerberos */
        struct remote_auth *remote;     /* TCP's and Samba's logons, once either is served */
        struct rrp_titles *rrp_titles;  /* MS-RRP's title indexes on Samba's pipe (rrp-perf.h) */
        char hostname[256];             /* the PERF_DATA_BLOCK's SystemName */
        char *samba_np_dir;             /* Samba's external_rpc_pipe:socket_dir, NULL: none */
        bool samba_winbind;             /* logons on the pipe may use Samba's own passwords */
        char *samba_winreg;             /* Samba's own winreg server, for MS-RRP binds; NULL: ours */
        char *samba_np_socket;          /* DIR/np/winreg, once we made it */
        bool samba_np_passed;           /* systemd passed DIR/np/winreg: not ours to make */
        bool have_samba_np_group;
        gid_t samba_np_group;           /* the socket's group, mode 0660 then */
        gid_t *samba_gids;              /* --samba-group: an SMB user must be in one */
        size_t n_samba_gids;
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
        struct plugin_limits plugin_limits;     /* every plugin's, from the flags */
        struct plugin_conf *plugin_conf;        /* per plugin, from --plugin-config */
        char *plugin_host;              /* the host program; NULL: the default */
        char *plugin_config;            /* NULL: the default file */
        unsigned collect_timeout_ms;    /* the collect bound */
        bool list_plugins;              /* --list-plugins: print the table and exit */
        int missed_pipe[2];             /* the namespace's missed deadlines, to the loop */
        char last_status[256];          /* the STATUS= last sent */
        sd_event_source *missed_src;

        /* Client connections, each served by a thread of its own (conn.c). */
        pthread_mutex_t conns_lock;
        pthread_cond_t conns_cond;      /* a connection went away */
        struct conn *conns;
        size_t n_clients;               /* atomic */
        struct conn_limits limits;
        struct pv2_budget *budget;      /* for requests being reassembled, shared */
};

/* ---- supervise.c: the plugins' options and their supervisor ---- */

enum {
        OPT_PLUGIN_BASE = 512,
        OPT_PLUGIN_MEMORY_MAX = OPT_PLUGIN_BASE,
        OPT_PLUGIN_START_TIMEOUT,
        OPT_PLUGIN_STOP_TIMEOUT,
        OPT_PLUGIN_CPU_MAX,
        OPT_PLUGIN_CPU_WINDOW,
        OPT_PLUGIN_RESTART_MIN,
        OPT_PLUGIN_RESTART_MAX,
        OPT_PLUGIN_USER,                /* the last of those plugin_limits_set takes */
        OPT_PLUGIN_HOST,
        OPT_PLUGIN_CONFIG,
        OPT_COLLECT_TIMEOUT,
        OPT_LIST_PLUGINS,
};

/* One of those options: 0, or -EINVAL (told on stderr). */
int daemon_plugin_option(struct daemon *d, int opt, const char *name, const char *arg);
/* After the options: the collect bound, the plugin configuration file (errors told). */
int daemon_plugins_setup(struct daemon *d);
/*
 * Starts the supervisor on d->event, with the namespace set up; changed(d)
 * is called whenever a plugin changes state (for the status line).
 */
void daemon_plugins_start(struct daemon *d, void (*changed)(void *userdata));
/* The plugin directory changed (inotify, SIGHUP). */
void daemon_plugins_resync(struct daemon *d);
/* Stops every host and frees the supervisor; idempotent. */
void daemon_plugins_done(struct daemon *d);
/* --list-plugins: prints the running server's table. */
int daemon_list_plugins(const struct daemon *d);

/* ---- conn.c ---- */

/* Connections root and the server's user find beyond max_clients. */
#define CONN_PRIVILEGED_RESERVE 16u
/* The ceiling of --max-query-items: the operations' (PCQ_SESSION_MAX_ITEMS). */
#define CONN_MAX_QUERY_ITEMS 8192u

/* The defaults perflibd(8) documents. */
void conn_limits_default(struct conn_limits *l);

/*
 * What a listener's clients are: local programs authorised by their
 * credentials, remote ones that log on over TCP, or smbd handing over an
 * SMB client's \PIPE\winreg (samba-np.h), which logs on inside it.
 */
enum conn_kind {
        CONN_UNIX,
        CONN_TCP,
        CONN_SAMBA,
};

/* Listens on fd (a bound, listening stream socket; the daemon owns it from now on). */
int listener_add(struct daemon *d, int fd, enum conn_kind kind);

/* Closes every client connection and waits for their threads to finish. */
void conns_stop(struct daemon *d);

/* Makes, binds and listens on the Unix socket at path, of that mode; *ret_fd is ours. */
int listen_unix(const char *path, mode_t mode, int *ret_fd);
/* HOST:PORT (IPv6 as [addr]:port); *ret_fd is ours. */
int listen_tcp(const char *spec, int *ret_fd);

#endif /* PERFLIBD_DAEMON_H */
