/* SPDX-License-Identifier: MIT */
/*
 * perflibd: serves every provider's counters through the PerflibV2
 * interface of MS-PCQ, over DCE/RPC on a Unix socket (and TCP when asked).
 *
 * One sd-event loop does everything: it accepts clients, runs their
 * requests against the namespace (namespace/: installed manifests, live
 * segments, plugins), watches the runtime, registry and plugin directories with
 * inotify, and tells systemd how it is doing (readiness, status, watchdog).
 * It never daemonizes: under systemd it is Type=notify, in a shell it is a
 * foreground process that needs no root and no setup.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <syslog.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "log.h"
#include "ns-live.h"
#include "pcq.h"                /* PCQ_DEFAULT_TCP_PORT */
#include "perflibv2.h"
#include "plugins.h"
#include "reader.h"
#include "registry.h"
#include "remote-auth.h"
#include "rrp-perf.h"

#define SOCKET_NAME "perflibd.sock"

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: perflibd [OPTION]...\n"
                "Serve performance counters through the PerflibV2 interface (MS-PCQ).\n"
                "\n"
                "  -r, --runtime-dir=DIR    provider segments and our socket\n"
                "                           (env PERFLIB_RUNTIME_DIR; default /run/perflib)\n"
                "  -R, --registry-dir=DIR   installed manifests (env PERFLIB_REGISTRY_DIR;\n"
                "                           default %s)\n"
                "  -p, --plugin-dir=DIR     provider plugins, *.so (env PERFLIB_PLUGIN_DIR;\n"
                "                           default %s)\n"
                "  -l, --listen-tcp=HOST[:PORT]\n"
                "                           also serve over TCP, to clients that log on\n"
                "                           with NTLM or SPNEGO at packet privacy (env\n"
                "                           PERFLIB_LISTEN_TCP; default: no TCP; PORT\n"
                "                           default " PCQ_DEFAULT_TCP_PORT ")\n"
                "  -a, --accounts=FILE      the accounts that may log on over TCP, reread\n"
                "                           when it changes (env PERFLIB_ACCOUNTS; default\n"
                "                           %s; see perflib-passwd(8))\n"
                "  -k, --keytab=FILE        also accept Kerberos, with this keytab's key\n"
                "                           (env PERFLIB_KEYTAB; default: no Kerberos)\n"
                "  -s, --socket=PATH        the Unix socket (default RUNTIME_DIR/%s)\n"
                "  -g, --group=GROUP        members of GROUP may query, besides root and\n"
                "                           the server's user (env PERFLIB_GROUP)\n"
                "      --samba-np-dir=DIR   serve \\PIPE\\winreg to Samba's smbd on DIR/np/winreg,\n"
                "                           DIR being its external_rpc_pipe:socket_dir; SMB\n"
                "                           users log on inside with the accounts of\n"
                "                           --accounts (env PERFLIB_SAMBA_NP_DIR)\n"
                "      --samba-np-group=GROUP\n"
                "                           that socket's group, mode 0660 (default: only\n"
                "                           its owner, mode 0600)\n"
                "      --samba-group=GROUP  an SMB user must be in GROUP (repeatable: one\n"
                "                           of them); default: any account\n"
                "      --samba-winreg=PATH  pass pipes that bind MS-RRP first to Samba's own\n"
                "                           winreg server at PATH (samba-dcerpcd's\n"
                "                           NCALRPC_DIR/np/winreg); default: perflibd answers\n"
                "                           HKEY_PERFORMANCE_DATA itself (env PERFLIB_SAMBA_WINREG)\n"
                "      --samba-winbind      SMB users may log on inside with the password\n"
                "                           Samba holds, checked by winbindd, besides the\n"
                "                           accounts of --accounts (env PERFLIB_SAMBA_WINBIND=1)\n"
                "\n"
                "Limits (see LIMITS in perflibd(8); 0 turns a deadline or the per-user cap off):\n"
                "      --bind-timeout=SEC   close a connection not bound by then (default 10)\n"
                "      --idle-timeout=SEC   close a connection with no complete request for\n"
                "                           that long (default 300)\n"
                "      --max-clients=N      refuse others beyond N connections; root and the\n"
                "                           server's user get %u more (default 1024)\n"
                "      --max-clients-per-user=N\n"
                "                           connections per uid, or per address over TCP;\n"
                "                           root and the server's user exempt (default 32)\n"
                "      --max-request=BYTES  largest request (K, M, G; default %u, the\n"
                "                           largest MS-PCQ allows)\n"
                "      --request-memory=BYTES\n"
                "                           requests being received, all clients together,\n"
                "                           beyond 64K each (default 64M)\n"
                "      --max-queries=N      open query handles per connection (default 64)\n"
                "      --max-query-items=N  counters per query handle (default 4096, at\n"
                "                           most %u)\n"
                "      --query-memory=BYTES snapshots and replies of all queries together\n"
                "                           (default 256M, at least 1M)\n"
                "      --max-segment-size=SIZE\n"
                "                           refuse a provider whose segment is larger\n"
                "                           (K, M, G, T suffixes; default 1G)\n"
                "      --max-mapped=SIZE    map at most this much of all segments together\n"
                "                           (default 1T)\n"
                "      --max-countersets-per-user=N\n"
                "                           self-described countersets one user other than\n"
                "                           root and the server's may publish (default %d)\n"
                "\n"
                "Timings of discovery (see SLOW PROVIDERS in perflibd(8)), in milliseconds:\n"
                "      --state-check=MS     how old a look at whether a provider is stopped\n"
                "                           may be (default 10)\n"
                "      --retry-min=MS, --retry-max=MS\n"
                "                           retry a provider that could not be added after\n"
                "                           MIN, doubling to MAX (default 100, 2000)\n"
                "      --scan-wait=MS       how long a request waits for the scan it asked\n"
                "                           for (default 50)\n"
                "\n"
                "Plugins (see PLUGINS in perflibd(8); each runs in a host process of its\n"
                "own; TIME takes ms, s, min, h, SIZE K, M, G):\n"
                "      --plugin-host=PATH   the host program (env PERFLIB_PLUGIN_HOST;\n"
                "                           default %s)\n"
                "      --plugin-config=FILE per-plugin limits and users (env\n"
                "                           PERFLIB_PLUGIN_CONFIG; default %s)\n"
                "      --plugin-user=USER   the hosts' user when run as root (default %s)\n"
                "      --plugin-memory-max=SIZE\n"
                "                           a host's resident memory (default 256M)\n"
                "      --plugin-cpu-max=PERCENT, --plugin-cpu-window=TIME\n"
                "                           a host's CPU, of one CPU over the window\n"
                "                           (default 50, 10s)\n"
                "      --plugin-start-timeout=TIME\n"
                "                           for a plugin's start to return (default 10s)\n"
                "      --plugin-stop-timeout=TIME\n"
                "                           from SIGTERM to SIGKILL (default 2s)\n"
                "      --plugin-restart-min=TIME, --plugin-restart-max=TIME\n"
                "                           restart a failed plugin after MIN, doubling to\n"
                "                           MAX (default 1s, 5min)\n"
                "      --collect-timeout=TIME\n"
                "                           the collect deadline of every provider (env\n"
                "                           PERFLIB_COLLECT_TIMEOUT_MS; default 100ms)\n"
                "      --list-plugins       show the running server's plugins and exit\n"
                "\n"
                "  -d, --debug              log debug messages\n"
                "  -h, --help               show this help and exit\n"
                "  -V, --version            show the version and exit\n"
                "\n"
                "See perflibd(8).\n",
                PERFLIB_REGISTRY_DIR_DEFAULT, PERFLIB_PLUGIN_DIR_DEFAULT,
                PERFLIB_ACCOUNTS_DEFAULT, SOCKET_NAME,
                CONN_PRIVILEGED_RESERVE, PV2_MAX_REQUEST, CONN_MAX_QUERY_ITEMS,
                NS_MAX_PER_USER_DEFAULT, PERFLIB_PLUGIN_HOST_DEFAULT,
                PERFLIB_PLUGIN_CONFIG_DEFAULT, PLUGIN_USER_DEFAULT);
}

/* A number with an optional binary suffix (K, M, G, T), within [min, max]. */
static int parse_number(const char *name, const char *arg, size_t min, size_t max,
                        size_t *ret)
{
        unsigned long long v;
        char *end;
        int shift = 0;

        errno = 0;
        v = strtoull(arg, &end, 10);
        if (*end && strchr("KMGT", *end))
                shift = 10 * (int) (strchr("KMGT", *end) - "KMGT" + 1);
        if (shift)
                end++;
        if (errno || end == arg || *end || arg[0] == '-' || v > (max >> shift) ||
            (v << shift) < min) {
                fprintf(stderr, "perflibd: --%s: not a number in [%zu, %zu]: %s\n", name, min,
                        max, arg);
                return -EINVAL;
        }
        *ret = (size_t) (v << shift);
        return 0;
}

enum {
        OPT_BIND_TIMEOUT = 256,
        OPT_IDLE_TIMEOUT,
        OPT_MAX_CLIENTS,
        OPT_MAX_PER_USER,
        OPT_MAX_REQUEST,
        OPT_REQUEST_MEMORY,
        OPT_MAX_QUERIES,
        OPT_MAX_ITEMS,
        OPT_MAX_SEGMENT,
        OPT_MAX_MAPPED,
        OPT_MAX_COUNTERSETS,
        OPT_STATE_CHECK,
        OPT_RETRY_MIN,
        OPT_RETRY_MAX,
        OPT_SCAN_WAIT,
        OPT_QUERY_MEMORY,
        OPT_SAMBA_NP_DIR,
        OPT_SAMBA_NP_GROUP,
        OPT_SAMBA_GROUP,
        OPT_SAMBA_WINBIND,
        OPT_SAMBA_WINREG,
};

/* One of the timings' options, in ms (1 hour at most): 0, or -EINVAL (told). */
static int parse_timing(struct ns_timings *t, int opt, const char *name, const char *arg)
{
        uint64_t *dst = opt == OPT_STATE_CHECK ? &t->state_check :
                        opt == OPT_RETRY_MIN ? &t->retry_min :
                        opt == OPT_RETRY_MAX ? &t->retry_max : &t->scan_wait;
        size_t ms;

        if (parse_number(name, arg, opt == OPT_RETRY_MIN || opt == OPT_RETRY_MAX, 3600000,
                         &ms) < 0)
                return -EINVAL;
        *dst = (uint64_t) ms * 1000000u;
        return 0;
}

/* One of the limits' options: 0, or -EINVAL (told). */
static int parse_limit(struct conn_limits *l, int opt, const char *name, const char *arg)
{
        size_t v;
        int r;

        switch (opt) {
        case OPT_BIND_TIMEOUT:
        case OPT_IDLE_TIMEOUT:
                r = parse_number(name, arg, 0, 86400, &v);
                if (r == 0)
                        *(opt == OPT_BIND_TIMEOUT ? &l->bind_timeout_sec
                                                  : &l->idle_timeout_sec) = (unsigned) v;
                return r;
        case OPT_MAX_CLIENTS:
                return parse_number(name, arg, 1, 1u << 20, &l->max_clients);
        case OPT_MAX_PER_USER:
                return parse_number(name, arg, 0, 1u << 20, &l->max_per_user);
        case OPT_MAX_REQUEST:
                return parse_number(name, arg, PV2_MIN_REQUEST, PV2_MAX_REQUEST,
                                    &l->max_request);
        case OPT_REQUEST_MEMORY:
                return parse_number(name, arg, 0, SIZE_MAX / 2, &l->request_budget);
        case OPT_MAX_QUERIES:
                return parse_number(name, arg, 1, PV2_MAX_QUERIES, &l->max_queries);
        case OPT_MAX_ITEMS:
                return parse_number(name, arg, 1, CONN_MAX_QUERY_ITEMS, &l->max_items);
        case OPT_QUERY_MEMORY:
                return parse_number(name, arg, 1u << 20, SIZE_MAX / 2, &l->query_memory);
        default:
                return -EINVAL;
        }
}

static int dup_to(char **dst, const char *src)
{
        char *s = src ? strdup(src) : NULL;

        if (src && !s)
                return -ENOMEM;
        free(*dst);
        *dst = s;
        return 0;
}

/* "HOST" or "[v6]" without a port listens on the port clients assume. */
static int default_port(char **spec)
{
        const char *s = *spec;
        size_t len = strlen(s);
        char *t;

        if (s[0] == '[' ? s[len - 1] != ']' : strchr(s, ':') != NULL)
                return 0;
        if (asprintf(&t, "%s:%s", s, PCQ_DEFAULT_TCP_PORT) < 0)
                return -ENOMEM;
        free(*spec);
        *spec = t;
        return 0;
}

static int group_id(const char *name, gid_t *ret)
{
        struct group *g = getgrnam(name);

        if (!g) {
                fprintf(stderr, "perflibd: no such group: %s\n", name);
                return -ENOENT;
        }
        *ret = g->gr_gid;
        return 0;
}

static int set_group(struct daemon *d, const char *name)
{
        int r = group_id(name, &d->group);

        d->have_group = r == 0;
        return r;
}

/* --samba-np-group, or one more --samba-group. */
static int samba_group(struct daemon *d, int opt, const char *name)
{
        gid_t *gids;

        if (opt == OPT_SAMBA_NP_GROUP) {
                d->have_samba_np_group = group_id(name, &d->samba_np_group) == 0;
                return d->have_samba_np_group ? 0 : -ENOENT;
        }
        gids = reallocarray(d->samba_gids, d->n_samba_gids + 1, sizeof(*gids));
        if (!gids)
                return -ENOMEM;
        d->samba_gids = gids;
        if (group_id(name, &gids[d->n_samba_gids]) < 0)
                return -ENOENT;
        d->n_samba_gids++;
        return 0;
}

/* Environment first, flags over it.  Returns 0, 1 for "exit 0", or -errno. */
static int parse_args(struct daemon *d, int argc, char **argv)
{
        static const struct option opts[] = {
                { "runtime-dir", required_argument, NULL, 'r' },
                { "registry-dir", required_argument, NULL, 'R' },
                { "plugin-dir", required_argument, NULL, 'p' },
                { "listen-tcp", required_argument, NULL, 'l' },
                { "accounts", required_argument, NULL, 'a' },
                { "keytab", required_argument, NULL, 'k' },
                { "socket", required_argument, NULL, 's' },
                { "group", required_argument, NULL, 'g' },
                { "bind-timeout", required_argument, NULL, OPT_BIND_TIMEOUT },
                { "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
                { "max-clients", required_argument, NULL, OPT_MAX_CLIENTS },
                { "max-clients-per-user", required_argument, NULL, OPT_MAX_PER_USER },
                { "max-request", required_argument, NULL, OPT_MAX_REQUEST },
                { "request-memory", required_argument, NULL, OPT_REQUEST_MEMORY },
                { "max-queries", required_argument, NULL, OPT_MAX_QUERIES },
                { "max-query-items", required_argument, NULL, OPT_MAX_ITEMS },
                { "max-segment-size", required_argument, NULL, OPT_MAX_SEGMENT },
                { "max-mapped", required_argument, NULL, OPT_MAX_MAPPED },
                { "max-countersets-per-user", required_argument, NULL, OPT_MAX_COUNTERSETS },
                { "state-check", required_argument, NULL, OPT_STATE_CHECK },
                { "retry-min", required_argument, NULL, OPT_RETRY_MIN },
                { "retry-max", required_argument, NULL, OPT_RETRY_MAX },
                { "scan-wait", required_argument, NULL, OPT_SCAN_WAIT },
                { "query-memory", required_argument, NULL, OPT_QUERY_MEMORY },
                { "samba-np-dir", required_argument, NULL, OPT_SAMBA_NP_DIR },
                { "samba-np-group", required_argument, NULL, OPT_SAMBA_NP_GROUP },
                { "samba-group", required_argument, NULL, OPT_SAMBA_GROUP },
                { "samba-winbind", no_argument, NULL, OPT_SAMBA_WINBIND },
                { "samba-winreg", required_argument, NULL, OPT_SAMBA_WINREG },
                { "plugin-host", required_argument, NULL, OPT_PLUGIN_HOST },
                { "plugin-config", required_argument, NULL, OPT_PLUGIN_CONFIG },
                { "plugin-user", required_argument, NULL, OPT_PLUGIN_USER },
                { "plugin-memory-max", required_argument, NULL, OPT_PLUGIN_MEMORY_MAX },
                { "plugin-cpu-max", required_argument, NULL, OPT_PLUGIN_CPU_MAX },
                { "plugin-cpu-window", required_argument, NULL, OPT_PLUGIN_CPU_WINDOW },
                { "plugin-start-timeout", required_argument, NULL, OPT_PLUGIN_START_TIMEOUT },
                { "plugin-stop-timeout", required_argument, NULL, OPT_PLUGIN_STOP_TIMEOUT },
                { "plugin-restart-min", required_argument, NULL, OPT_PLUGIN_RESTART_MIN },
                { "plugin-restart-max", required_argument, NULL, OPT_PLUGIN_RESTART_MAX },
                { "collect-timeout", required_argument, NULL, OPT_COLLECT_TIMEOUT },
                { "list-plugins", no_argument, NULL, OPT_LIST_PLUGINS },
                { "debug", no_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        const char *group = getenv("PERFLIB_GROUP");
        bool help = false;
        int c, i;

        if (dup_to(&d->listen_tcp, getenv("PERFLIB_LISTEN_TCP")) < 0 ||
            dup_to(&d->accounts, getenv("PERFLIB_ACCOUNTS")) < 0 ||
            dup_to(&d->keytab, getenv("PERFLIB_KEYTAB")) < 0 ||
            dup_to(&d->samba_np_dir, getenv("PERFLIB_SAMBA_NP_DIR")) < 0 ||
            dup_to(&d->samba_winreg, getenv("PERFLIB_SAMBA_WINREG")) < 0)
                return -ENOMEM;
        d->samba_winbind = getenv("PERFLIB_SAMBA_WINBIND") &&
                           strcmp(getenv("PERFLIB_SAMBA_WINBIND"), "1") == 0;
        while ((c = getopt_long(argc, argv, "r:R:p:l:a:k:s:g:dhV", opts, &i)) >= 0) {
                char **dst = c == 'r' ? &d->runtime_dir : c == 'R' ? &d->registry_dir :
                             c == 'p' ? &d->plugin_dir : c == 'l' ? &d->listen_tcp :
                             c == 's' ? &d->socket_path : c == 'a' ? &d->accounts :
                             c == 'k' ? &d->keytab :
                             c == OPT_SAMBA_NP_DIR ? &d->samba_np_dir :
                             c == OPT_SAMBA_WINREG ? &d->samba_winreg : NULL;

                if (dst) {
                        if (dup_to(dst, optarg) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (c == OPT_SAMBA_WINBIND) {
                        d->samba_winbind = true;
                        continue;
                }
                if (c == OPT_SAMBA_NP_GROUP || c == OPT_SAMBA_GROUP) {
                        if (samba_group(d, c, optarg) < 0)
                                return -EINVAL;
                        continue;
                }
                if (c == OPT_MAX_COUNTERSETS) {
                        if (parse_number(opts[i].name, optarg, 0, 1000000,
                                         &d->max_countersets) < 0)
                                return -EINVAL;
                        continue;
                }
                if (c == OPT_MAX_SEGMENT || c == OPT_MAX_MAPPED) {
                        size_t v;

                        if (parse_number(opts[i].name, optarg, 1, SIZE_MAX, &v) < 0)
                                return -EINVAL;
                        *(c == OPT_MAX_SEGMENT ? &d->max_segment : &d->max_mapped) = v;
                        continue;
                }
                if (c >= OPT_PLUGIN_BASE) {
                        if (daemon_plugin_option(d, c, opts[i].name, optarg) < 0)
                                return -EINVAL;
                        continue;
                }
                if (c >= OPT_STATE_CHECK && c <= OPT_SCAN_WAIT) {
                        if (parse_timing(&d->ns_timings, c, opts[i].name, optarg) < 0)
                                return -EINVAL;
                        continue;
                }
                if (c >= OPT_BIND_TIMEOUT) {
                        if (parse_limit(&d->limits, c, opts[i].name, optarg) < 0)
                                return -EINVAL;
                        continue;
                }
                switch (c) {
                case 'g': group = optarg; break;
                case 'd': log_set_debug(true); break;
                case 'h': help = true; break;
                case 'V': printf("perflibd %s\n", PACKAGE_VERSION); return 1;
                default: usage(stderr); return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "perflibd: unexpected argument: %s\n", argv[optind]);
                return -EINVAL;
        }
        /* Checked before --help answers, so that --help can test a command line. */
        if (d->ns_timings.retry_min > d->ns_timings.retry_max) {
                fprintf(stderr, "perflibd: --retry-min is longer than --retry-max\n");
                return -EINVAL;
        }
        if (d->plugin_limits.restart_min > d->plugin_limits.restart_max) {
                fprintf(stderr, "perflibd: --plugin-restart-min is longer than "
                        "--plugin-restart-max\n");
                return -EINVAL;
        }
        if (help) {
                usage(stdout);
                return 1;
        }
        if (d->listen_tcp && !*d->listen_tcp)
                dup_to(&d->listen_tcp, NULL);
        if (d->samba_np_dir && !*d->samba_np_dir)
                dup_to(&d->samba_np_dir, NULL);
        if (d->samba_winreg && !*d->samba_winreg)
                dup_to(&d->samba_winreg, NULL);
        if (d->samba_winreg && !d->samba_np_dir) {
                fprintf(stderr, "perflibd: --samba-winreg is for Samba's pipe: it needs "
                        "--samba-np-dir\n");
                return -EINVAL;
        }
        if (d->samba_winbind && !d->samba_np_dir) {
                fprintf(stderr, "perflibd: --samba-winbind is for Samba's pipe: it needs "
                        "--samba-np-dir\n");
                return -EINVAL;
        }
        if (d->listen_tcp && default_port(&d->listen_tcp) < 0)
                return -ENOMEM;
        return group && *group ? set_group(d, group) : 0;
}

/*
 * Resolves the three directories.  The runtime directory is also exported,
 * so that the plugins' hosts, which inherit it, announce their segments
 * where we look.
 */
static int resolve_dirs(struct daemon *d)
{
        int r;

        if (d->runtime_dir && setenv("PERFLIB_RUNTIME_DIR", d->runtime_dir, 1) < 0)
                return -errno;
        free(d->runtime_dir);
        d->runtime_dir = NULL;
        r = pl_runtime_server_dir(&d->runtime_dir);
        if (r < 0) {
                log_error("cannot use the runtime directory: %s", strerror(-r));
                return r;
        }
        /* Other users publish in directories of their own, below ours. */
        r = pl_runtime_make_users(d->runtime_dir);
        if (r < 0)
                log_warning("%s/" PL_RUNTIME_USERS ": %s; only this user's and root's providers "
                            "can publish", d->runtime_dir, strerror(-r));
        if (setenv("PERFLIB_RUNTIME_DIR", d->runtime_dir, 1) < 0)
                return -errno;
        if (!d->registry_dir) {
                r = reg_default_dir(&d->registry_dir);
                if (r < 0)
                        return r;
        }
        return d->plugin_dir ? 0 : plugins_default_dir(&d->plugin_dir);
}

/*
 * Every provider costs a descriptor (its service connection) and every
 * client one more: the soft limit's usual 1,024 is a few hundred of each.
 * The hard limit is what the administrator (LimitNOFILE=) allows.
 */
static void raise_nofile(void)
{
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
                log_debug("getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
                return;
        }
        if (rl.rlim_cur < rl.rlim_max) {
                rlim_t was = rl.rlim_cur;

                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
                        log_debug("cannot raise the open-file limit from %llu to %llu: %s",
                                  (unsigned long long) was, (unsigned long long) rl.rlim_max,
                                  strerror(errno));
                        return;
                }
        }
        log_debug("open-file limit: %llu", (unsigned long long) rl.rlim_cur);
}

/* The namespace's reports, rate-limited by format like the daemon's own. */
static void ns_log_to_log(void *userdata, int priority, const char *format, va_list ap)
{
        log_msgv(priority, format, ap);
}

/* ---- the registry ---- */

static void reg_warn(const char *msg, void *userdata)
{
        log_warning("registry: %s", msg);
}

static void registry_drop(struct daemon *d)
{
        reg_entries_free(d->reg, d->n_reg);
        free(d->reg_descs);
        d->reg = NULL;
        d->reg_descs = NULL;
        d->n_reg = 0;
}

/*
 * The descriptions for the namespace, and after them (in the same block,
 * freed with reg_descs) the uid owning each: *ret_owners.
 */
static const struct ctrpp_provider_desc **registry_descs(const struct reg_entry *e, size_t n,
                                                         uid_t **ret_owners)
{
        const struct ctrpp_provider_desc **descs;
        uid_t *owners;

        descs = calloc(1, (n ? n : 1) * (sizeof(*descs) + sizeof(*owners)));
        if (!descs)
                return NULL;
        owners = (uid_t *) (descs + (n ? n : 1));
        for (size_t i = 0; i < n; i++) {
                descs[i] = e[i].desc;
                owners[i] = e[i].owner;
        }
        *ret_owners = owners;
        return descs;
}

/*
 * (Re)reads the installed manifests, parsing only the files that changed;
 * on failure the previous ones stay served.
 */
static int registry_load_locked(struct daemon *d)
{
        const struct ctrpp_provider_desc **descs;
        uid_t *owners = NULL;
        struct reg_entry *e;
        size_t n;
        int r;

        r = d->reg ? reg_reload(d->registry_dir, d->reg, d->n_reg, reg_warn, d, &e, &n)
                   : reg_load(d->registry_dir, reg_warn, d, &e, &n);
        if (r < 0) {
                log_warning("cannot read the registry %s: %s", d->registry_dir, strerror(-r));
                return r;
        }
        /* The old entries are consumed: the namespace must not see them again. */
        d->reg = e;
        d->n_reg = n;
        descs = registry_descs(e, n, &owners);
        if (!descs)
                log_warning("out of memory: serving no installed manifest until the next reload");
        ns_set_installed(d->ns, descs, owners, descs ? n : 0);
        free(d->reg_descs);
        d->reg_descs = descs;
        r = ns_refresh(d->ns);
        if (r < 0)
                log_warning("refreshing the namespace: %s", strerror(-r));
        log_debug("registry %s: %zu installed provider(s)", d->registry_dir, n);
        return 0;
}

/* The descriptions are replaced only while no request is waiting on a provider. */
static int registry_load(struct daemon *d)
{
        int r;

        ns_lock(d->ns);
        ns_wait_idle(d->ns);
        r = registry_load_locked(d);
        ns_unlock(d->ns);
        return r;
}

/* ---- watching directories ---- */

static int on_runtime(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
        struct daemon *d = userdata;

        ns_lock(d->ns);
        ns_runtime_changed(d->ns);
        ns_unlock(d->ns);
        return 0;
}

static int on_registry(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
        /* lodctr renames finished files into place; ignore its temporary files. */
        if (ev->len > 0 && ev->name[0] == '.')
                return 0;
        registry_load(userdata);
        return 0;
}

static int on_plugins(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
        if (ev->len > 0 && ev->name[0] == '.')
                return 0;
        daemon_plugins_resync(userdata);
        return 0;
}

/*
 * Watches dir (made when missing and possible).  A directory we cannot
 * watch is logged, not fatal: its contents are still read at startup and
 * on SIGHUP.
 */
static void watch(struct daemon *d, const char *what, const char *dir, uint32_t mask,
                  sd_event_inotify_handler_t cb)
{
        int r;

        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                log_debug("cannot create the %s directory %s: %s", what, dir, strerror(errno));
        r = sd_event_add_inotify(d->event, NULL, dir, mask | IN_ONLYDIR, cb, d);
        if (r < 0)
                log_notice("not watching the %s directory %s: %s", what, dir, strerror(-r));
}

static void watch_all(struct daemon *d)
{
        char *users = NULL;
        const uint32_t files = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                               IN_CLOSE_WRITE;

        watch(d, "runtime", d->runtime_dir, IN_CREATE | IN_MOVED_TO | IN_DELETE, on_runtime);
        /*
         * Users' own directories appear there; what they hold is noticed at
         * the next request (ns_refresh stats them) or the next tick.
         */
        if (asprintf(&users, "%s/" PL_RUNTIME_USERS, d->runtime_dir) >= 0 &&
            access(users, F_OK) == 0)
                watch(d, "users'", users, IN_CREATE | IN_MOVED_TO | IN_DELETE, on_runtime);
        free(users);
        watch(d, "registry", d->registry_dir, files, on_registry);
        /*
         * Not IN_CREATE: a file created is still being written.  The loader
         * lets it settle (install(1) changes its mode after closing it).
         */
        watch(d, "plugin", d->plugin_dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
              IN_DELETE | IN_ATTRIB, on_plugins);
}

/* ---- listeners ---- */

/* The accounts TCP clients log on with: read once, before the first TCP listener. */
static int remote_setup(struct daemon *d)
{
        if (d->remote)
                return 0;
        if (!d->accounts && dup_to(&d->accounts, PERFLIB_ACCOUNTS_DEFAULT) < 0)
                return -ENOMEM;
        if (d->keytab && !*d->keytab)
                dup_to(&d->keytab, NULL);
        return remote_auth_new(d->accounts, d->keytab, &d->remote);
}

/* Whether fd is bound to Samba's pipe, DIR/np/winreg of --samba-np-dir. */
static bool is_samba_np(const struct daemon *d, int fd)
{
        char *path;
        bool r;

        if (!d->samba_np_dir || asprintf(&path, "%s/np/winreg", d->samba_np_dir) < 0)
                return false;
        r = sd_is_socket_unix(fd, SOCK_STREAM, 1, path, 0) > 0;
        free(path);
        return r;
}

/*
 * Socket activation: take what systemd passed, Samba's pipe among them
 * when it is bound where --samba-np-dir says (smbd's first open of the
 * pipe then starts perflibd).
 */
static int listen_activated(struct daemon *d, int n)
{
        for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
                bool tcp = sd_is_socket_inet(fd, 0, SOCK_STREAM, 1, 0) > 0;
                bool samba = !tcp && is_samba_np(d, fd);

                if (!tcp && sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0) {
                        log_warning("ignoring passed descriptor %d: not a listening stream socket", fd);
                        close(fd);
                        continue;
                }
                if ((tcp || samba) && remote_setup(d) < 0)
                        return -ENOMEM;
                d->samba_np_passed |= samba;
                if (listener_add(d, fd, tcp ? CONN_TCP : samba ? CONN_SAMBA : CONN_UNIX) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int listen_own(struct daemon *d)
{
        int fd, r;

        if (!d->socket_path && asprintf(&d->socket_path, "%s/%s", d->runtime_dir, SOCKET_NAME) < 0) {
                d->socket_path = NULL;
                return -ENOMEM;
        }
        /* Anyone may connect: peer credentials decide who may query. */
        r = listen_unix(d->socket_path, 0666, &fd);
        if (r < 0) {
                log_error("cannot listen on %s: %s%s", d->socket_path, strerror(-r),
                          r == -EADDRINUSE ? " (is another perflibd running?)" : "");
                free(d->socket_path);
                d->socket_path = NULL;  /* not ours: do not remove it at exit */
                return r;
        }
        r = listener_add(d, fd, CONN_UNIX);
        if (r < 0 || !d->listen_tcp)
                return r;
        r = listen_tcp(d->listen_tcp, &fd);
        if (r < 0) {
                log_error("cannot listen on TCP %s: %s", d->listen_tcp, strerror(-r));
                return r;
        }
        r = remote_setup(d);
        if (r < 0) {
                close(fd);
                return r;
        }
        log_info("serving TCP on %s to the accounts of %s (NTLM%s)", d->listen_tcp,
                 d->accounts, d->keytab ? ", Kerberos" : "");
        return listener_add(d, fd, CONN_TCP);
}

/* DIR/np, made when missing: smbd looks for its pipes' sockets there. */
static int samba_np_path(struct daemon *d)
{
        char *np;
        int r = 0;

        if (asprintf(&np, "%s/np", d->samba_np_dir) < 0)
                return -ENOMEM;
        (void) mkdir(d->samba_np_dir, 0755);
        if (mkdir(np, 0755) < 0 && errno != EEXIST) {
                r = -errno;
                log_error("cannot create %s: %s", np, strerror(errno));
        } else if (asprintf(&d->samba_np_socket, "%s/winreg", np) < 0) {
                d->samba_np_socket = NULL;
                r = -ENOMEM;
        }
        free(np);
        return r;
}

/*
 * Samba's \PIPE\winreg on DIR/np/winreg.  smbd connects as root; nobody
 * else may (mode 0600), or only the --samba-np-group (0660).
 */
static int listen_samba(struct daemon *d)
{
        int fd, r;

        if (d->samba_np_passed)
                log_info("serving \\PIPE\\winreg to Samba on %s/np/winreg (from systemd), "
                         "to the accounts of %s%s", d->samba_np_dir, d->accounts,
                         d->samba_winbind ? " and Samba's, through winbind" : "");
        if (!d->samba_np_dir || d->samba_np_passed)
                return 0;
        if ((r = samba_np_path(d)) < 0)
                return r;
        r = listen_unix(d->samba_np_socket, d->have_samba_np_group ? 0660 : 0600, &fd);
        if (r == 0 && d->have_samba_np_group &&
            chown(d->samba_np_socket, (uid_t) -1, d->samba_np_group) < 0) {
                r = -errno;
                close(fd);
        }
        if (r < 0) {
                log_error("cannot listen on %s: %s", d->samba_np_socket, strerror(-r));
                free(d->samba_np_socket);
                d->samba_np_socket = NULL;      /* not ours: do not remove it at exit */
                return r;
        }
        r = remote_setup(d);
        if (r < 0) {
                close(fd);
                return r;
        }
        log_info("serving \\PIPE\\winreg to Samba on %s, to the accounts of %s%s",
                 d->samba_np_socket, d->accounts,
                 d->samba_winbind ? " and Samba's, through winbind" : "");
        return listener_add(d, fd, CONN_SAMBA);
}

static int listen_all(struct daemon *d)
{
        int n = sd_listen_fds(1);

        if (n < 0) {
                log_error("socket activation: %s", strerror(-n));
                return n;
        }
        n = n > 0 ? listen_activated(d, n) : listen_own(d);
        return n < 0 ? n : listen_samba(d);
}

/* ---- status, signals, the loop ---- */

/*
 * Said to the service manager only when it changed: the tick runs every
 * second, and a notify socket nobody drains for a while (systemd's never
 * is, a test's may be) must not fill with copies and hold up the watchdog.
 */
static void status_update(struct daemon *d)
{
        char status[256];
        size_t n_sets, n_provs;

        ns_lock(d->ns);
        ns_refresh(d->ns);
        n_sets = ns_count(d->ns);
        n_provs = ns_providers(d->ns);
        ns_unlock(d->ns);
        snprintf(status, sizeof(status), "STATUS=%zu countersets, %zu providers, "
                 "%zu plugins running (%zu restarting, %zu given up), %zu clients",
                 n_sets, n_provs, plugins_count(d->plugins, PLUGIN_RUNNING),
                 plugins_count(d->plugins, PLUGIN_RESTARTING),
                 plugins_count(d->plugins, PLUGIN_FAILED),
                 __atomic_load_n(&d->n_clients, __ATOMIC_RELAXED));
        if (strcmp(status, d->last_status) == 0)
                return;
        snprintf(d->last_status, sizeof(d->last_status), "%s", status);
        sd_notify(0, status);
}

/*
 * Once a second: dead providers vanish from the status.  (A lost inotify
 * event needs no rescan here: every refresh compares the runtime
 * directory's mtime, and a rescan probes every provider's socket.)
 */
static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct daemon *d = userdata;

        status_update(d);
        sd_event_source_set_time(s, usec + 1000000);
        return 0;
}

static void plugins_changed(void *userdata)
{
        status_update(userdata);
}

static int on_hup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        struct daemon *d = userdata;

        sd_notify(0, "RELOADING=1");
        registry_load(d);
        daemon_plugins_resync(d);
        status_update(d);
        sd_notify(0, "READY=1");
        return 0;
}

static int setup_loop(struct daemon *d)
{
        sigset_t ss;
        uint64_t now;
        int r;

        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
                return -errno;
        r = sd_event_default(&d->event);
        if (r < 0)
                return r;
        /* NULL handlers: leave the loop cleanly. */
        if ((r = sd_event_add_signal(d->event, NULL, SIGTERM, NULL, NULL)) < 0 ||
            (r = sd_event_add_signal(d->event, NULL, SIGINT, NULL, NULL)) < 0 ||
            (r = sd_event_add_signal(d->event, NULL, SIGHUP, on_hup, d)) < 0)
                return r;
        r = sd_event_set_watchdog(d->event, true);
        if (r < 0)
                return r;
        sd_event_now(d->event, CLOCK_MONOTONIC, &now);
        return sd_event_add_time(d->event, NULL, CLOCK_MONOTONIC, now + 1000000, 100000,
                                 on_tick, d);
}

static void daemon_done(struct daemon *d)
{
        /*
         * Hosts first: a request waiting on a hung plugin's collect ends when
         * its host does, so SIGTERM ends everything within the stop grace,
         * whatever the collect deadline.
         */
        daemon_plugins_done(d);
        conns_stop(d);
        if (d->socket_path)
                unlink(d->socket_path);
        if (d->samba_np_socket)
                unlink(d->samba_np_socket);
        sd_event_unref(d->event);
        ns_free(d->ns);
        rrp_titles_free(d->rrp_titles);
        /* After conns_stop: no connection draws on it any more. */
        pv2_budget_free(d->budget);
        registry_drop(d);
        free(d->runtime_dir);
        free(d->registry_dir);
        free(d->plugin_dir);
        free(d->socket_path);
        free(d->listen_tcp);
        /* After conns_stop: no connection logs on any more. */
        remote_auth_free(d->remote);
        free(d->accounts);
        free(d->keytab);
        free(d->samba_np_dir);
        free(d->samba_winreg);
        free(d->samba_np_socket);
        free(d->samba_gids);
}

static int run(struct daemon *d)
{
        int r;

        if ((r = resolve_dirs(d)) < 0)
                return r;
        if (d->list_plugins)
                return daemon_list_plugins(d) < 0 ? -ENOENT : 1;
        if ((r = setup_loop(d)) < 0)
                return r;
        raise_nofile();
        if ((r = ns_new(d->runtime_dir, &d->ns)) < 0)
                return r;
        ns_set_threaded(d->ns);
        if ((r = pv2_budget_new(d->limits.request_budget, &d->budget)) < 0)
                return r;
        ns_set_map_limits(d->ns, d->max_segment, d->max_mapped);
        ns_set_log(d->ns, ns_log_to_log, d);
        ns_set_max_per_user(d->ns, d->max_countersets);
        (void) ns_set_timings(d->ns, &d->ns_timings);   /* checked by parse_args */
        /* Once it is set up: from here on its threads use it too. */
        if ((r = ns_start_discovery(d->ns)) < 0)
                return r;
        ns_set_query_memory(d->ns, d->limits.query_memory);
        if (d->samba_np_dir) {
                if ((r = rrp_titles_new(&d->rrp_titles)) < 0)
                        return r;
                if (gethostname(d->hostname, sizeof(d->hostname) - 1) < 0)
                        snprintf(d->hostname, sizeof(d->hostname), "localhost");
        }
        registry_load(d);
        /* Watching first: a plugin installed meanwhile is not missed. */
        watch_all(d);
        daemon_plugins_start(d, plugins_changed);
        if ((r = listen_all(d)) < 0)
                return r;
        status_update(d);
        log_info("serving %zu countersets from %s (registry %s, plugins %s) on %s",
                 ns_count(d->ns), d->runtime_dir, d->registry_dir, d->plugin_dir,
                 d->socket_path ? d->socket_path : "sockets from systemd");
        sd_notify(0, "READY=1");
        r = sd_event_loop(d->event);
        sd_notify(0, "STOPPING=1");
        return r;
}

int main(int argc, char **argv)
{
        struct daemon d = { .conns_lock = PTHREAD_MUTEX_INITIALIZER,
                            .conns_cond = PTHREAD_COND_INITIALIZER,
                            .max_segment = NS_MAX_SEGMENT_DEFAULT,
                            .max_mapped = NS_MAX_MAPPED_DEFAULT,
                            .max_countersets = NS_MAX_PER_USER_DEFAULT,
                            .ns_timings = NS_TIMINGS_DEFAULT,
                            .missed_pipe = { -1, -1 } };
        int r;

        log_setup();
        conn_limits_default(&d.limits);
        plugin_limits_default(&d.plugin_limits);
        r = parse_args(&d, argc, argv);
        if (r == 0)
                r = daemon_plugins_setup(&d);
        if (r == 0) {
                r = run(&d);
                if (r < 0 && r != -ENOENT)
                        log_error("%s", strerror(-r));
        }
        daemon_done(&d);
        /* What the rate limit held back is said before we go. */
        log_flush();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
