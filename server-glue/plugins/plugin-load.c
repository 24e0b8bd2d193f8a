/* SPDX-License-Identifier: MIT */
/*
 * Opening a plugin and checking its descriptor (plugin-load.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "plugin-load.h"

static int __attribute__((format(printf, 3, 4)))
refuse(int error, char why[PLOAD_WHY_MAX], const char *format, ...)
{
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(why, PLOAD_WHY_MAX, format, ap);
        va_end(ap);
        return error;
}

/* dlerror()'s text without the image's path in front: the log names the file. */
static const char *without_path(const char *text, const char *path)
{
        size_t len = strlen(path);

        if (text && strncmp(text, path, len) == 0 && strncmp(text + len, ": ", 2) == 0)
                return text + len + 2;
        return text ? text : "unknown error";
}

/*
 * libltdl binds lazily, and a plugin with a symbol that does not resolve
 * would then die at its first call of it, long after it was accepted.  So
 * the image is first opened with RTLD_NOW, which fails on any unresolved
 * symbol and leaves the object relocated for libltdl's own open of the
 * same object; that first reference is then dropped.
 */
int pload_open(const char *path, lt_dladvise advise, lt_dlhandle *ret, char why[PLOAD_WHY_MAX])
{
        lt_dlhandle handle;
        void *bound;

        bound = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!bound)
                return refuse(-ENOEXEC, why, "cannot load: %s", without_path(dlerror(), path));
        handle = lt_dlopenadvise(path, advise);
        if (!handle)
                (void) refuse(0, why, "cannot load with libltdl: %s",
                              without_path(lt_dlerror(), path));
        (void) dlclose(bound);
        if (!handle)
                return -ENOEXEC;
        *ret = handle;
        return 0;
}

/*
 * lt_dlsym gives a data pointer; POSIX guarantees it converts to the
 * function's, which ISO C cannot say.
 */
static perflib_plugin_entry_fn entry_from_symbol(void *sym)
{
        union {
                void *sym;
                perflib_plugin_entry_fn fn;
        } u = { .sym = sym };

        return u.fn;
}

int pload_describe(lt_dlhandle handle, const char *path, const struct perflib_plugin **ret,
                   char why[PLOAD_WHY_MAX])
{
        const struct perflib_plugin *d;
        void *sym;

        sym = lt_dlsym(handle, PERFLIB_PLUGIN_ENTRY_SYMBOL);
        if (!sym)
                return refuse(-ENOENT, why, "no entry point %s: %s",
                              PERFLIB_PLUGIN_ENTRY_SYMBOL, without_path(lt_dlerror(), path));
        d = entry_from_symbol(sym)();
        if (!d)
                return refuse(-EINVAL, why, "%s returned no descriptor",
                              PERFLIB_PLUGIN_ENTRY_SYMBOL);
        /* A descriptor of another ABI may be shorter than ours: nothing past size is read. */
        if (d->abi != PERFLIB_PLUGIN_ABI)
                return refuse(-EPROTONOSUPPORT, why,
                              "descriptor has ABI %u, this server knows ABI %u",
                              (unsigned) d->abi, PERFLIB_PLUGIN_ABI);
        if (d->size < sizeof(struct perflib_plugin))
                return refuse(-EBADMSG, why, "descriptor size %u is less than %zu, ABI %u's",
                              (unsigned) d->size, sizeof(struct perflib_plugin),
                              PERFLIB_PLUGIN_ABI);
        if (!d->start || !d->stop)
                return refuse(-EINVAL, why, "descriptor has no %s function",
                              d->start ? "stop" : "start");
        *ret = d;
        return 0;
}

char *pload_display_name(const char *name, const char *file)
{
        size_t len = strlen(file);
        char *s;

        if (name && *name)
                s = strndup(name, PLOAD_NAME_MAX);
        else
                s = strndup(file, len > 3 ? len - 3 : len);
        if (!s)
                return NULL;
        for (char *c = s; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f)
                        *c = '?';
        return s;
}

int pload_priority(int priority)
{
        priority &= LOG_PRIMASK;
        return priority < LOG_CRIT ? LOG_CRIT : priority;
}
