/* SPDX-License-Identifier: MIT */
/*
 * perflib-plugin.h: a provider built as a shared object that perflibd loads
 * from its plugin directory.  A plugin is an ordinary provider (perflib.h,
 * a ctrpp-generated header) whose code runs inside the server: its segment
 * and self-description join the namespace like any other provider's, and
 * its reference counters are dereferenced directly.
 *
 * A plugin exports exactly one symbol, PERFLIB_PLUGIN_ENTRY_SYMBOL, a
 * function returning its descriptor.  perflibd checks abi and size before
 * it reads any other field or calls anything, then calls start once and,
 * if start succeeded, stop once before unloading.  The server's services
 * reach the plugin only through the table passed to start (perflibd is not
 * linked with -export-dynamic).
 *
 *      static uint32_t start(const struct perflib_plugin_services *svc, void **state) {...}
 *      static void stop(void *state) {...}
 *      PERFLIB_PLUGIN_EXPORT const struct perflib_plugin *perflib_plugin_entry_v1(void)
 *      {
 *              static const struct perflib_plugin p = {
 *                      .abi = PERFLIB_PLUGIN_ABI, .size = sizeof p,
 *                      .name = "example", .start = start, .stop = stop,
 *              };
 *              return &p;
 *      }
 *
 * Build it as a module linked with the SDK, for example with libtool:
 * "-module -avoid-version -no-undefined" and -lperflib.  A plugin with a
 * symbol that does not resolve is refused when it is loaded.
 *
 * Installing: the plugin directory holds NAME.so files, each a regular file
 * or a symbolic link to one; names starting with '.' are ignored, so are
 * subdirectories.  perflibd loads new files, and stops and unloads a plugin
 * whose file is removed or replaced (a new inode or modification time).
 * Replace a plugin by renaming a new file over it (install(1) does), never
 * by rewriting it in place: the running copy is mapped from that file.
 */
#ifndef PERFLIB_PERFLIB_PLUGIN_H
#define PERFLIB_PERFLIB_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PERFLIB_PLUGIN_ABI              1u
#define PERFLIB_PLUGIN_ENTRY_SYMBOL     "perflib_plugin_entry_v1"
#define PERFLIB_PLUGIN_EXPORT           __attribute__((visibility("default")))

/*
 * What the server offers a plugin.  The table stays valid from the call to
 * start until stop returns, and log may be called from any thread of the
 * plugin in that time.  Later versions only append fields and grow size:
 * read a field past the first version's only when size covers it.
 */
struct perflib_plugin_services {
        uint32_t abi;                   /* PERFLIB_PLUGIN_ABI */
        uint32_t size;                  /* sizeof(struct perflib_plugin_services) */
        /*
         * Logs through the server (journal or stderr), tagged with the
         * plugin's name.  priority is a syslog(3) priority (LOG_ERR ...);
         * the server logs LOG_CRIT at most, in its own facility.
         */
        void (*log)(const struct perflib_plugin_services *svc, int priority,
                    const char *format, ...) __attribute__((format(printf, 3, 4)));
        const char *runtime_dir;        /* where segments are announced */
        void *server;                   /* the server's own; do not touch */
};

struct perflib_plugin {
        uint32_t abi;                   /* PERFLIB_PLUGIN_ABI */
        uint32_t size;                  /* sizeof(struct perflib_plugin) */
        const char *name;               /* short, for logs; NULL: the file's name */
        /*
         * Starts the provider(s): PerfStartProvider, PerfSetCounterSetInfo,
         * instances.  Returns 0 or a Win32 error code; on failure the plugin
         * must have released everything, and stop is not called.  *state is
         * handed back to stop.
         */
        uint32_t (*start)(const struct perflib_plugin_services *svc, void **state);
        /* Stops everything start started; called once, before unloading. */
        void (*stop)(void *state);
};

typedef const struct perflib_plugin *(*perflib_plugin_entry_fn)(void);

/* The entry point, declared so a plugin defining it gets its type checked. */
PERFLIB_PLUGIN_EXPORT const struct perflib_plugin *perflib_plugin_entry_v1(void);

#ifdef __cplusplus
}
#endif

#endif /* PERFLIB_PERFLIB_PLUGIN_H */
