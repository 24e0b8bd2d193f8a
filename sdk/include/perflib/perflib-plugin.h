/* SPDX-License-Identifier: MIT */
/*
 * perflib-plugin.h: a provider built as a shared object that perflibd runs
 * from its plugin directory.  A plugin is an ordinary provider (perflib.h,
 * a ctrpp-generated header); perflibd never runs its code, but starts a
 * host process for it (perflib-plugin-host), which loads it, starts it and
 * stays its process: its segment and self-description join the namespace
 * like any other provider's, and its reference counters and collect
 * callbacks are served by the host's collect service.  perflibd supervises
 * the host: a crash, an exit, a start that does not return, a collect that
 * does not answer, too much memory or CPU end the host, are logged, and the
 * plugin is restarted with a doubling delay (perflibd(8), PLUGINS).  A
 * plugin's threads, signals and exit() therefore touch only its own host.
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
 * subdirectories.  perflibd acts on a file when it is closed after writing
 * or renamed into place, never when it is created, and loads it once
 * nothing has touched it for 0.1 s; it loads a private copy, so what
 * happens to the file afterwards never reaches the running plugin.  Every
 * usual way is safe, and replacing a loaded plugin's file by any of them
 * stops the old plugin and starts the new one, once each, with no error:
 *
 *      install -m 644 x.so DIR/   a new file (an old one removed first),
 *                                 loaded after install sets its mode
 *      cp x.so DIR/               written in place, over an old file too
 *      mv x.so DIR/               renamed into place (from another file
 *                                 system mv copies: as cp)
 *
 * A file still shorter than its ELF headers say once it settled is tried
 * again for 3 s before it is reported; see perflibd(8), PLUGINS.  Since a
 * copy is loaded, dladdr(3) and $ORIGIN name "/proc/self/fd/N", not the
 * file: a plugin finds its data from its configuration, not its path.
 *
 * Two plugins publishing the same provider or counterset GUID: the first
 * loaded keeps it (the one already running; of files found together, the
 * first by name), the other's host is stopped and an error names both
 * files, once.
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
 * What the server offers a plugin (through its host).  The table stays
 * valid from the call to start until stop returns, and log may be called
 * from any thread of the plugin in that time.  Later versions only append fields and grow size:
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
        void *server;                   /* the host's own; do not touch */
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
