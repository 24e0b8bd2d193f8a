/* SPDX-License-Identifier: MIT */
/*
 * plugins.h: perflibd's plugin supervisor.  A plugin is a provider built
 * as a shared object (perflib-plugin.h) and dropped into the plugin
 * directory.  perflibd never runs plugin code: each plugin runs in a host
 * process of its own (perflib-plugin-host, host-proto.h) that loads a
 * private copy of the file, checks its entry point, starts it and
 * publishes through the SDK like any provider process; the namespace finds
 * its segment by its normal scan.  The supervisor starts the hosts, holds
 * them to their limits (plugin-conf.h: memory, CPU, start deadline; the
 * collect deadline is the namespace's collect bound, reported here by
 * plugins_missed_deadline), restarts a failed one with a doubling delay,
 * and stops it when its file goes away or is replaced.
 *
 * Which files are plugins: NAME.so directly in the directory (no
 * recursion), a regular file or a symbolic link to one (followed: an
 * administrator may link a plugin installed elsewhere; only who may write
 * the directory can add one).  Names starting with '.' (an installer's
 * temporary file) are ignored; a file writable by others is refused.  A
 * version of a file is its device, inode, size, modification time and
 * mode; when that changes, the plugin is restarted with the new code.
 *
 * Files being written: a new or changed file is loaded only once it has
 * been left alone (its ctime unchanged) for the settle time, and from a
 * private copy taken while nothing touched it (plugin-image.h), so the
 * file may be rewritten in place while its plugin runs.  A copy shorter
 * than its ELF headers say is tried again, with a doubling delay, for 31
 * settle times before it is reported; so is, for as long as it changes,
 * one that changed while copied.
 *
 * Duplicates: a plugin that publishes a provider or counterset GUID that a
 * running plugin published is stopped and logged once, naming both files.
 * The plugin already running keeps it.  The refused one is tried again
 * once the other's file is gone or no longer publishes it.
 *
 * Faults: a host that ends by itself (a signal, an exit, a failed start)
 * or is killed for a limit or a deadline is logged once, at error, naming
 * the file and the cause, and restarted after restart_min, doubling to
 * restart_max; the delay starts over once a host ran for the healthy
 * stretch.  A plugin refused for what its file holds (no entry point, ABI,
 * unresolved symbols) is not restarted until its file changes.
 *
 * Not thread-safe: one thread (the server's main loop) calls these, and
 * the supervisor's event sources run on that loop.
 * Functions return 0 or -errno and write ret_ parameters only on success.
 */
#ifndef PERFLIBD_PLUGINS_H
#define PERFLIBD_PLUGINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "plugin-conf.h"

struct plugins;
struct sd_event;

struct plugins_config {
        /*
         * Receives the supervisor's messages and the plugins' own (their
         * services' log).  priority is a syslog(3) priority; file is the
         * plugin's file name in the directory ("x.so"), or NULL for a message
         * about the directory.  message is a complete line that names the
         * file too: the supervisor's say "plugin x.so: <what happened>", a
         * plugin's say "plugin <name> (x.so): <its text>".  NULL discards
         * every message.
         */
        void (*log)(void *userdata, int priority, const char *file, const char *message);
        /* Called after a plugin changed state (status lines); may be NULL. */
        void (*changed)(void *userdata);
        void *userdata;
        /* The loop the hosts are watched on (required); a reference is taken. */
        struct sd_event *event;
        /* The host program; NULL: plugins_default_host(). */
        const char *host;
        /* Every plugin's limits (plugin-conf.h); NULL: the defaults. */
        const struct plugin_limits *limits;
        /* Per-plugin lines over limits; NULL: none.  Borrowed until plugins_free. */
        const struct plugin_conf *conf;
        /* The collect deadline, for the log (the namespace enforces it), in ms. */
        unsigned collect_timeout_ms;
        /* Where the plugin table is written for perflibd --list-plugins; NULL: nowhere. */
        const char *state_file;
        /* How long a file must be left alone before it is loaded; 0: PLUGINS_SETTLE_MS. */
        unsigned settle_ms;
};

/*
 * Long enough for an installer's last steps after it closes the file
 * (install(1)'s chmod, cp -p's timestamps), short enough not to be noticed.
 */
#define PLUGINS_SETTLE_MS 100u

/*
 * The default plugin directory: $PERFLIB_PLUGIN_DIR, else the built-in
 * PERFLIB_PLUGIN_DIR_DEFAULT.  *ret is malloc'd, owned by the caller.
 */
int plugins_default_dir(char **ret);

/*
 * The host program: $PERFLIB_PLUGIN_HOST, else the installed one
 * (PERFLIB_PLUGIN_HOST_DEFAULT).  *ret is malloc'd, owned by the caller.
 */
int plugins_default_host(char **ret);

/*
 * A supervisor for dir, with nothing started yet (plugins_sync starts).
 * cfg is copied (its strings too); *ret is owned by the caller
 * (plugins_free).
 */
int plugins_new(const char *dir, const struct plugins_config *cfg, struct plugins **ret);

/*
 * Brings the hosts in line with the directory: stops the hosts of plugins
 * whose file disappeared or was replaced, then starts a host for every new
 * plugin file that has settled (in name order); a file still settling is
 * looked at again by a timer of the supervisor's.  Returns 0, or -errno
 * when the directory cannot be read (then nothing is stopped).
 */
int plugins_sync(struct plugins *p);

/*
 * The namespace's report that the provider process pid missed the collect
 * deadline: when it is a plugin's host and missed it before, within 5 s
 * (the namespace asks again only a second later), the host is killed, the
 * fault logged and the plugin restarted.  Returns 1 when pid was a host,
 * else 0.
 */
int plugins_missed_deadline(struct plugins *p, pid_t pid);

/*
 * Stops every host: SIGTERM, then SIGKILL to those still there after the
 * stop timeout, waiting for all of them; then frees p.  Accepts NULL.
 */
void plugins_free(struct plugins *p);

enum plugin_state {
        PLUGIN_RUNNING,                 /* its host started it */
        PLUGIN_FAILED,                  /* refused: waits for its file to change */
        PLUGIN_PENDING,                 /* its file is settling, or is tried again soon */
        PLUGIN_STARTING,                /* its host runs, start has not returned yet */
        PLUGIN_RESTARTING,              /* its host failed; started again after a delay */
        PLUGIN_STOPPING,                /* its host was asked to stop */
};

/* The state's name in status lines and the plugin table: "running" ... */
const char *plugin_state_name(enum plugin_state state);

struct plugin_info {
        const char *file;               /* "x.so", in the directory */
        const char *name;               /* the descriptor's name; NULL before its first start */
        enum plugin_state state;
        pid_t pid;                      /* its host, 0 when none runs */
        unsigned restarts;              /* hosts started after a fault */
        const char *last_fault;         /* "" when none */
};

/*
 * Whether anything is under way: a file waiting to be loaded, a host
 * starting or stopping (also one whose file is gone).  For tests, and for
 * a caller that waits for the directory to be in effect.
 */
bool plugins_busy(const struct plugins *p);

/* How many plugins are in that state (for the server's status line). */
size_t plugins_count(const struct plugins *p, enum plugin_state state);

/*
 * Calls cb for every plugin file known (in name order); the strings are
 * valid during the call only.  A non-zero return from cb stops the walk
 * and is returned.
 */
int plugins_foreach(const struct plugins *p,
                    int (*cb)(const struct plugin_info *info, void *userdata), void *userdata);

#endif /* PERFLIBD_PLUGINS_H */
