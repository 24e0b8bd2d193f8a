/* SPDX-License-Identifier: MIT */
/*
 * plugins.h: perflibd's plugin loader.  A plugin is a provider built as a
 * shared object (perflib-plugin.h) and dropped into the plugin directory;
 * the loader opens a private copy of it with libltdl, checks its versioned
 * entry point, starts it with the services table, and stops and unloads it
 * when its file goes away or is replaced.  A plugin runs the SDK in the server's process, so
 * its segment is announced in the runtime directory like any provider's
 * and the server finds it by its normal scan: the loader does no discovery.
 *
 * Which files are plugins: NAME.so directly in the directory (no
 * recursion), a regular file or a symbolic link to one (followed: an
 * administrator may link a plugin installed elsewhere; only who may write
 * the directory can add one).  Names starting with '.' (an installer's
 * temporary file) are ignored; a file writable by others is refused.  A
 * version of a file is its device, inode, size, modification time and
 * mode; when that changes, the plugin is reloaded.
 *
 * Files being written: a new or changed file is loaded only once it has
 * been left alone (its ctime unchanged) for the settle time, and from a
 * private copy taken while nothing touched it (plugin-image.h), so the
 * file may be rewritten in place while its plugin runs.  A copy shorter
 * than its ELF headers say is tried again, with a doubling delay, for 31
 * settle times before it is reported; so is, for as long as it changes,
 * one that changed while copied.  The caller syncs again at
 * plugins_next_sync(), or the waiting files wait for the next event.
 *
 * Duplicates: a plugin that publishes a provider or counterset GUID that a
 * running plugin published (in what their start functions published) is
 * stopped, unloaded and logged once, naming both files.  The plugin
 * already running keeps it; of files loaded in one sync, the first in name
 * order.  The refused one is tried again once the other's file is gone or
 * no longer publishes it; a replaced file keeps its plugin's place.
 *
 * Not thread-safe: one thread (the server's main loop) calls these.  The
 * log callback, though, is also called from the plugins' own threads.
 * Functions return 0 or -errno and write ret_ parameters only on success.
 */
#ifndef PERFLIBD_PLUGINS_H
#define PERFLIBD_PLUGINS_H

#include <stddef.h>
#include <stdint.h>

struct plugins;

struct plugins_config {
        /*
         * Receives the loader's messages and the plugins' own (their
         * services' log).  priority is a syslog(3) priority; file is the
         * plugin's file name in the directory ("x.so"), or NULL for a message
         * about the directory.  message is a complete line that names the
         * file too: the loader's say "plugin x.so: <what happened>", a
         * plugin's say "plugin <name> (x.so): <its text>".  Called from any
         * thread; NULL discards every message.
         */
        void (*log)(void *userdata, int priority, const char *file, const char *message);
        void *userdata;
        /* Handed to plugins as services->runtime_dir; NULL: pl_runtime_dir(). */
        const char *runtime_dir;
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
 * A loader for dir, with nothing loaded yet (plugins_sync loads).  cfg is
 * copied (its strings too); *ret is owned by the caller (plugins_free).
 */
int plugins_new(const char *dir, const struct plugins_config *cfg, struct plugins **ret);

/*
 * Brings the loaded set in line with the directory: stops and unloads the
 * plugins whose file disappeared or was replaced, then loads every new
 * plugin file that has settled (in name order).  A plugin that fails to
 * load is logged once with its file name and the reason, and tried again
 * only once its file changes; the others keep running.  A missing
 * directory is an empty one.  Returns 0, or -errno when the directory
 * cannot be read (then nothing is unloaded).
 */
int plugins_sync(struct plugins *p);

/*
 * When a file waits (to settle, or to be tried again): the CLOCK_MONOTONIC
 * time in microseconds to call plugins_sync at.  0 when none waits.
 */
uint64_t plugins_next_sync(const struct plugins *p);

/* Stops and unloads every plugin, then frees p; accepts NULL. */
void plugins_free(struct plugins *p);

enum plugin_state {
        PLUGIN_RUNNING,                 /* started, stop not called yet */
        PLUGIN_FAILED,                  /* refused or failed to start; not loaded */
        PLUGIN_PENDING,                 /* its file is settling, or is tried again soon */
};

struct plugin_info {
        const char *file;               /* "x.so", in the directory */
        const char *name;               /* the descriptor's name; NULL when failed */
        enum plugin_state state;
};

/* How many plugins are in that state (for the server's status line). */
size_t plugins_count(const struct plugins *p, enum plugin_state state);

/*
 * Calls cb for every plugin file known (in name order), running or failed;
 * the strings are valid during the call only.  A non-zero return from cb
 * stops the walk and is returned.
 */
int plugins_foreach(const struct plugins *p,
                    int (*cb)(const struct plugin_info *info, void *userdata), void *userdata);

#endif /* PERFLIBD_PLUGINS_H */
