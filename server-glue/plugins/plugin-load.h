/* SPDX-License-Identifier: MIT */
/*
 * plugin-load.h: opening a plugin's image and checking its descriptor, and
 * the two rules about what a plugin says (its name, its log priority) that
 * both ends keep: the host, which runs plugin code, and the supervisor,
 * which trusts nothing the host sends.
 *
 * A refusal is returned as its reason, a text for the log without the
 * plugin's file name, e.g. "descriptor has no stop function"; the caller
 * adds who and what now.  Functions return 0 or -errno and write ret_
 * parameters only on success.
 */
#ifndef PERFLIBD_PLUGIN_LOAD_H
#define PERFLIBD_PLUGIN_LOAD_H

#include <ltdl.h>
#include <stddef.h>

#include "perflib-plugin.h"

/* A plugin's name is for logs: anything longer is cut. */
#define PLOAD_NAME_MAX          64

/* Room for any reason text (a dynamic linker's message is cut to fit). */
#define PLOAD_WHY_MAX           1024

/*
 * Opens the image at path ("/proc/self/fd/N") with libltdl under advise,
 * every symbol bound first (see plugin-load.c).  -ENOEXEC with why filled
 * when it cannot be loaded.  *ret is the caller's (lt_dlclose).
 */
int pload_open(const char *path, lt_dladvise advise, lt_dlhandle *ret,
               char why[PLOAD_WHY_MAX]);

/*
 * The descriptor of a plugin pload_open opened from path, checked: abi
 * and size before any other field, then start and stop.  On failure
 * (-ENOENT, -EINVAL, -EPROTONOSUPPORT, -EBADMSG) why says what is wrong.
 * *ret points into the plugin and lives as long as its handle.
 */
int pload_describe(lt_dlhandle handle, const char *path, const struct perflib_plugin **ret,
                   char why[PLOAD_WHY_MAX]);

/*
 * A copy of name fit for a log line (cut to PLOAD_NAME_MAX, control
 * characters replaced), or of file ("x.so") without ".so" when name is
 * NULL or empty.  malloc'd, the caller's; NULL when out of memory.
 */
char *pload_display_name(const char *name, const char *file);

/*
 * A plugin's syslog priority as the server logs it: the facility dropped,
 * and nothing above LOG_CRIT (journald wall(1)s LOG_EMERG to every
 * terminal, and a plugin may not raise alarms there).
 */
int pload_priority(int priority);

#endif /* PERFLIBD_PLUGIN_LOAD_H */
