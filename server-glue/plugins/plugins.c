/* SPDX-License-Identifier: MIT */
/*
 * The plugin loader (plugins.h): scans the plugin directory, lets a new or
 * changed file settle, loads a private copy of it (plugin-image.h) with
 * libltdl, validates its descriptor, starts it, refuses it when it
 * publishes what another plugin already does (plugin-pub.h), and stops and
 * unloads it again when its file goes away or changes.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ltdl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "perflib-plugin.h"
#include "plugin-image.h"
#include "plugin-pub.h"
#include "plugins.h"
#include "reader.h"

/* A plugin's name is for logs: anything longer is cut. */
#define NAME_MAX_LEN    64
/* One log line, the plugin's text included; a longer one is cut. */
#define LOG_LINE_MAX    2048
/*
 * Tries of a file shorter than its ELF headers say, settle_ms apart and
 * doubling (with the default, 3.1 s in all), before it is reported: a
 * writer may pause for that long without closing the file.
 */
#define SHORT_TRIES     6u

typedef uint32_t (*start_fn)(const struct perflib_plugin_services *svc, void **state);

/* One NAME.so of the directory: waiting, running or failed. */
struct plugin {
        struct plugins *owner;
        char *file;                     /* "x.so" */
        char *name;                     /* for logs: the descriptor's, or the file's */
        struct file_id id;
        enum plugin_state state;
        uint64_t seen;                  /* µs, monotonic: this version found, untouched since */
        uint64_t retry_at;              /* PENDING: not tried before then (µs, monotonic) */
        unsigned short_tries;           /* PENDING: found shorter than its ELF headers say */
        bool said;                      /* its twin or duplicate refusal is logged */
        bool twin;                      /* FAILED: the same file as a running plugin */
        char dup_of[NAME_MAX + 1];      /* FAILED: the plugin that published the same first */
        struct pub *pubs;               /* what it published when last started (malloc'd) */
        size_t n_pubs;
        struct plugin_image image;      /* while running (fd -1 otherwise) */
        lt_dlhandle handle;             /* only while running */
        void (*stop)(void *state);
        void *opaque;                   /* the plugin's, from start */
        struct perflib_plugin_services svc;
};

struct plugins {
        char *dir;
        char *runtime_dir;
        void (*log)(void *userdata, int priority, const char *file, const char *message);
        void *userdata;
        uint64_t settle_usec;
        uint64_t next_sync;             /* plugins_next_sync */
        lt_dladvise advise;
        bool ltdl_up;
        struct plugin **list;           /* sorted by file name */
        size_t n;
};

static void __attribute__((format(printf, 4, 5)))
emit(const struct plugins *p, int priority, const char *file, const char *format, ...)
{
        char line[LOG_LINE_MAX];
        va_list ap;

        if (!p->log)
                return;
        va_start(ap, format);
        (void) vsnprintf(line, sizeof(line), format, ap);
        va_end(ap);
        p->log(p->userdata, priority, file, line);
}

/* The loader's words about one plugin file. */
#define plugin_log(e, priority, format, ...) \
        emit((e)->owner, priority, (e)->file, "plugin %s: " format, (e)->file, __VA_ARGS__)

/* services->log: what a plugin says, tagged with its name and file. */
static void __attribute__((format(printf, 3, 4)))
svc_log(const struct perflib_plugin_services *svc, int priority, const char *format, ...)
{
        const struct plugin *e;
        char text[LOG_LINE_MAX];
        va_list ap;

        if (!svc || !svc->server || !format)
                return;
        e = svc->server;
        va_start(ap, format);
        (void) vsnprintf(text, sizeof(text), format, ap);
        va_end(ap);
        /*
         * The facility is the server's, and a plugin may not raise alarms
         * on every terminal (journald wall(1)s LOG_EMERG).
         */
        priority &= LOG_PRIMASK;
        if (priority < LOG_CRIT)
                priority = LOG_CRIT;
        emit(e->owner, priority, e->file, "plugin %s (%s): %s", e->name, e->file, text);
}

int plugins_default_dir(char **ret)
{
        const char *e = getenv("PERFLIB_PLUGIN_DIR");
        char *s;

        if (!ret)
                return -EINVAL;
        s = strdup(e && *e ? e : PERFLIB_PLUGIN_DIR_DEFAULT);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/*
 * NAME.so with a non-empty NAME that does not start with a dot.  A name
 * with control characters is no plugin's: it would garble the log lines.
 */
static bool plugin_file_name(const char *name)
{
        size_t len = strlen(name);

        for (const char *c = name; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f)
                        return false;
        return len > 3 && name[0] != '.' && strcmp(name + len - 3, ".so") == 0;
}

static uint64_t now_usec(clockid_t clock)
{
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

static void plugin_free(struct plugin *e)
{
        if (!e)
                return;
        plugin_image_close(&e->image);
        free(e->pubs);
        free(e->name);
        free(e->file);
        free(e);
}

/* A new entry, waiting to be tried, for a version of file found at now. */
static int plugin_new(struct plugins *owner, const char *file, const struct file_id *id,
                      uint64_t now, struct plugin **ret)
{
        struct plugin *e = calloc(1, sizeof(*e));

        if (!e)
                return -ENOMEM;
        e->owner = owner;
        e->id = *id;
        e->seen = now;
        e->state = PLUGIN_PENDING;
        e->image.fd = -1;
        e->file = strdup(file);
        if (!e->file) {
                plugin_free(e);
                return -ENOMEM;
        }
        *ret = e;
        return 0;
}

static int compare_plugins(const void *a, const void *b)
{
        return strcmp((*(struct plugin *const *) a)->file, (*(struct plugin *const *) b)->file);
}

/* The slot of that file's plugin in a sorted list, or NULL. */
static struct plugin **find_slot(struct plugin **list, size_t n, const char *file)
{
        struct plugin key = { .file = (char *) file }, *k = &key;

        return n > 0 ? bsearch(&k, list, n, sizeof(*list), compare_plugins) : NULL;
}

/* A copy of the descriptor's name fit for a log line, or the file's name without ".so". */
static char *plugin_display_name(const char *name, const char *file)
{
        char *s;

        if (name && *name)
                s = strndup(name, NAME_MAX_LEN);
        else
                s = strndup(file, strlen(file) - 3);
        if (!s)
                return NULL;
        for (char *c = s; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f)
                        *c = '?';
        return s;
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

/*
 * The copy the dynamic linker maps: -EAGAIN (nothing logged) while the file
 * changes under the copy or is shorter than its ELF headers say, up to
 * SHORT_TRIES; other failures are logged.
 */
static int plugin_copy(struct plugin *e, const char *path)
{
        uint64_t need;
        int r;

        r = plugin_image_copy(path, e->file, &e->id, &e->image);
        if (r == -ESTALE) {
                plugin_log(e, LOG_DEBUG, "%s", "changed while being read; trying again");
                return -EAGAIN;
        }
        if (r == -EFBIG)
                plugin_log(e, LOG_ERR, "larger than %llu MiB; skipped",
                           (unsigned long long) (PLUGIN_IMAGE_MAX >> 20));
        else if (r < 0)
                plugin_log(e, LOG_ERR, "cannot read: %s; skipped", strerror(-r));
        if (r < 0)
                return r;
        r = plugin_image_short(&e->image, &need);
        if (r == 0)
                return 0;
        plugin_image_close(&e->image);
        if (r < 0) {
                plugin_log(e, LOG_ERR, "cannot read: %s; skipped", strerror(-r));
                return r;
        }
        if (++e->short_tries < SHORT_TRIES) {
                plugin_log(e, LOG_DEBUG, "%llu bytes of the %llu its ELF headers need; trying again",
                           (unsigned long long) e->id.size, (unsigned long long) need);
                return -EAGAIN;
        }
        plugin_log(e, LOG_ERR, "%llu bytes, shorter than the %llu its ELF headers need "
                   "(cut short, or still being written); skipped",
                   (unsigned long long) e->id.size, (unsigned long long) need);
        return -ENODATA;
}

/* dlerror()'s text without the copy's path in front: the log names the file. */
static const char *without_path(const char *text, const char *path)
{
        size_t len = strlen(path);

        if (text && strncmp(text, path, len) == 0 && strncmp(text + len, ": ", 2) == 0)
                return text + len + 2;
        return text ? text : "unknown error";
}

/*
 * After its last handle is closed, the object stays mapped when it cannot
 * be unloaded (RTLD_NODELETE; C++ unique symbols).  Its copy's descriptor
 * stays open with it: the dynamic linker knows the object by its path,
 * "/proc/self/fd/N", and would hand it out again for another plugin
 * opened under a reused N.
 */
static void plugin_release_image(struct plugin *e, bool closed)
{
        void *still = closed ? dlopen(e->image.path, RTLD_LAZY | RTLD_NOLOAD) : NULL;

        if (closed && !still) {
                plugin_image_close(&e->image);
                return;
        }
        if (still)
                (void) dlclose(still);
        plugin_log(e, LOG_NOTICE, "%s", "stays in memory after unloading; a restart frees it");
        e->image.fd = -1;
}

/*
 * Opens the copy with libltdl.  libltdl binds lazily, and a plugin with a
 * symbol that does not resolve would then kill the server at its first
 * call of it.  So the copy is first opened with RTLD_NOW, which fails on
 * any unresolved symbol and leaves the object relocated for libltdl's own
 * open of the same object; that first reference is then dropped.  On
 * failure the copy is released.
 */
static int plugin_open(struct plugin *e)
{
        const char *path = e->image.path;
        void *bound;

        bound = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!bound) {
                plugin_log(e, LOG_ERR, "cannot load: %s; skipped", without_path(dlerror(), path));
                plugin_image_close(&e->image);
                return -ENOEXEC;
        }
        e->handle = lt_dlopenadvise(path, e->owner->advise);
        if (!e->handle)
                plugin_log(e, LOG_ERR, "cannot load with libltdl: %s; skipped",
                           without_path(lt_dlerror(), path));
        (void) dlclose(bound);
        if (!e->handle)
                plugin_release_image(e, true);
        return e->handle ? 0 : -ENOEXEC;
}

/*
 * Fetches and validates the descriptor: abi and size before anything else,
 * then the functions.  Fills in e->name and e->stop; *ret_start is the
 * start function.
 */
static int plugin_describe(struct plugin *e, start_fn *ret_start)
{
        const struct perflib_plugin *d;
        void *sym;

        sym = lt_dlsym(e->handle, PERFLIB_PLUGIN_ENTRY_SYMBOL);
        if (!sym) {
                plugin_log(e, LOG_ERR, "no entry point %s: %s; skipped",
                           PERFLIB_PLUGIN_ENTRY_SYMBOL, lt_dlerror());
                return -ENOENT;
        }
        d = entry_from_symbol(sym)();
        if (!d) {
                plugin_log(e, LOG_ERR, "%s returned no descriptor; skipped",
                           PERFLIB_PLUGIN_ENTRY_SYMBOL);
                return -EINVAL;
        }
        if (d->abi != PERFLIB_PLUGIN_ABI) {
                plugin_log(e, LOG_ERR, "descriptor has ABI %u, this server knows ABI %u; skipped",
                           (unsigned) d->abi, PERFLIB_PLUGIN_ABI);
                return -EPROTONOSUPPORT;
        }
        if (d->size < sizeof(struct perflib_plugin)) {
                plugin_log(e, LOG_ERR, "descriptor size %u is less than %zu, ABI %u's; skipped",
                           (unsigned) d->size, sizeof(struct perflib_plugin), PERFLIB_PLUGIN_ABI);
                return -EBADMSG;
        }
        if (!d->start || !d->stop) {
                plugin_log(e, LOG_ERR, "descriptor has no %s function; skipped",
                           d->start ? "stop" : "start");
                return -EINVAL;
        }
        e->name = plugin_display_name(d->name, e->file);
        if (!e->name) {
                plugin_log(e, LOG_ERR, "%s", "out of memory; skipped");
                return -ENOMEM;
        }
        e->stop = d->stop;
        *ret_start = d->start;
        return 0;
}

/*
 * Refuses e when it published a GUID a running plugin published first:
 * said once per version of its file, and e is stopped.  -EEXIST then.
 */
static int plugin_check_unique(struct plugin *e)
{
        const struct plugins *p = e->owner;
        char guid[PUB_GUID_TEXT];

        for (size_t i = 0; i < p->n; i++) {
                const struct plugin *o = p->list[i];
                const struct pub *c;

                if (o == e || o->state != PLUGIN_RUNNING)
                        continue;
                c = pub_common(e->pubs, e->n_pubs, o->pubs, o->n_pubs);
                if (!c)
                        continue;
                pub_guid_text(&c->guid, guid);
                if (!e->said)
                        plugin_log(e, LOG_ERR, "%s %s is already published by plugin %s, "
                                   "which was loaded first; skipped",
                                   c->counterset ? "counterset" : "provider", guid, o->file);
                e->said = true;
                snprintf(e->dup_of, sizeof(e->dup_of), "%s", o->file);
                e->stop(e->opaque);
                return -EEXIST;
        }
        return 0;
}

/* Runs start, and records what it published. */
static int plugin_start(struct plugin *e, start_fn start)
{
        const char *runtime = e->owner->runtime_dir;
        struct pub_mark before = { 0 };
        struct pub *pubs = NULL;
        size_t n_pubs = 0;
        uint32_t status;
        void *state = NULL;
        int r;

        e->svc = (struct perflib_plugin_services) {
                .abi = PERFLIB_PLUGIN_ABI,
                .size = sizeof(e->svc),
                .log = svc_log,
                .runtime_dir = runtime,
                .server = e,
        };
        r = pub_mark(runtime, &before);
        status = start(&e->svc, &state);
        if (status != 0) {
                pub_mark_done(&before);
                plugin_log(e, LOG_ERR, "start failed with Win32 error %u; skipped",
                           (unsigned) status);
                return -EIO;
        }
        e->opaque = state;
        if (r == 0)
                r = pub_since(runtime, &before, &pubs, &n_pubs);
        pub_mark_done(&before);
        if (r < 0)
                plugin_log(e, LOG_WARNING, "cannot tell what it publishes (%s): "
                           "a duplicate of another plugin would not be noticed", strerror(-r));
        free(e->pubs);
        e->pubs = pubs;
        e->n_pubs = n_pubs;
        return plugin_check_unique(e);
}

static void plugin_close(struct plugin *e)
{
        bool closed = lt_dlclose(e->handle) == 0;

        if (!closed)
                plugin_log(e, LOG_WARNING, "unloading: %s", lt_dlerror());
        e->handle = NULL;
        plugin_release_image(e, closed);
}

/*
 * Loads, validates and starts the plugin of e's file.  0: running.
 * -EAGAIN: its file is not ready (nothing logged; e stays PLUGIN_PENDING).
 * Other failures are logged and leave e PLUGIN_FAILED.
 */
static int plugin_load(struct plugin *e, const char *path)
{
        start_fn start = NULL;
        int r;

        /* Whoever may write it could run code in the server. */
        if (e->id.mode & S_IWOTH) {
                plugin_log(e, LOG_ERR, "%s", "writable by others; skipped");
                r = -EPERM;
        } else
                r = plugin_copy(e, path);
        if (r == -EAGAIN)
                return r;
        if (r == 0)
                r = plugin_open(e);
        if (r < 0) {
                e->state = PLUGIN_FAILED;
                return r;
        }
        r = plugin_describe(e, &start);
        if (r >= 0)
                r = plugin_start(e, start);
        if (r < 0) {
                free(e->name);
                e->name = NULL;
                e->stop = NULL;
                plugin_close(e);
                e->state = PLUGIN_FAILED;
                return r;
        }
        e->state = PLUGIN_RUNNING;
        plugin_log(e, LOG_INFO, "started \"%s\"", e->name);
        return 0;
}

static void plugin_unload(struct plugin *e, const char *why)
{
        if (e->state != PLUGIN_RUNNING)
                return;
        e->stop(e->opaque);
        plugin_log(e, LOG_INFO, "stopped \"%s\" (%s)", e->name, why);
        plugin_close(e);
        e->state = PLUGIN_FAILED;
}

/* A running plugin loaded from the same file under another name, or NULL. */
static const struct plugin *same_file(const struct plugins *p, const struct plugin *e)
{
        for (size_t i = 0; i < p->n; i++) {
                const struct plugin *o = p->list[i];

                if (o != e && o->state == PLUGIN_RUNNING &&
                    o->id.dev == e->id.dev && o->id.ino == e->id.ino)
                        return o;
        }
        return NULL;
}

int plugins_new(const char *dir, const struct plugins_config *cfg, struct plugins **ret)
{
        struct plugins *p;
        int r;

        if (!dir || !*dir || !ret)
                return -EINVAL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->settle_usec = (uint64_t) PLUGINS_SETTLE_MS * 1000u;
        if (cfg) {
                p->log = cfg->log;
                p->userdata = cfg->userdata;
                if (cfg->settle_ms)
                        p->settle_usec = (uint64_t) cfg->settle_ms * 1000u;
        }
        p->dir = strdup(dir);
        if (!p->dir) {
                r = -ENOMEM;
                goto fail;
        }
        if (cfg && cfg->runtime_dir)
                r = (p->runtime_dir = strdup(cfg->runtime_dir)) ? 0 : -ENOMEM;
        else
                r = pl_runtime_dir(&p->runtime_dir);
        if (r < 0)
                goto fail;
        if (lt_dlinit() != 0) {
                emit(p, LOG_ERR, NULL, "plugins: libltdl: %s", lt_dlerror());
                r = -ENOMEM;
                goto fail;
        }
        p->ltdl_up = true;
        /* Local: two plugins' symbols never resolve to each other. */
        if (lt_dladvise_init(&p->advise) != 0 || lt_dladvise_local(&p->advise) != 0) {
                r = -ENOMEM;
                goto fail;
        }
        *ret = p;
        return 0;
fail:
        plugins_free(p);
        return r;
}

void plugins_free(struct plugins *p)
{
        if (!p)
                return;
        for (size_t i = p->n; i > 0; i--) {
                plugin_unload(p->list[i - 1], "server stopping");
                plugin_free(p->list[i - 1]);
        }
        free(p->list);
        if (p->advise)
                (void) lt_dladvise_destroy(&p->advise);
        if (p->ltdl_up)
                (void) lt_dlexit();
        free(p->runtime_dir);
        free(p->dir);
        free(p);
}

/* Appends a new entry for a plugin file found by a scan at now. */
static int scan_add(struct plugins *p, const char *file, const struct stat *st, uint64_t now,
                    struct plugin ***list, size_t *n, size_t *cap)
{
        struct file_id id;
        struct plugin *e;
        int r;

        if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 16;
                struct plugin **l = reallocarray(*list, c, sizeof(**list));

                if (!l)
                        return -ENOMEM;
                *list = l;
                *cap = c;
        }
        file_id_from_stat(st, &id);
        r = plugin_new(p, file, &id, now, &e);
        if (r < 0)
                return r;
        (*list)[(*n)++] = e;
        return 0;
}

/*
 * Every plugin file of the directory, as new pending entries sorted by
 * name; *ret is owned by the caller.  Symbolic links are followed; a
 * dangling one, a directory or a device is not a plugin.
 */
static int scan_dir(struct plugins *p, uint64_t now, struct plugin ***ret, size_t *ret_n)
{
        struct plugin **list = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        struct stat st;
        DIR *d;
        int r = 0;

        d = opendir(p->dir);
        if (!d) {
                r = errno;
                if (r != ENOENT)
                        return r > 0 ? -r : -EIO;
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        for (;;) {
                errno = 0;
                de = readdir(d);
                if (!de) {
                        r = -errno;
                        break;
                }
                if (!plugin_file_name(de->d_name) ||
                    fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
                        continue;
                r = scan_add(p, de->d_name, &st, now, &list, &n, &cap);
                if (r < 0)
                        break;
        }
        closedir(d);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        plugin_free(list[i]);
                free(list);
                return r;
        }
        if (n > 1)
                qsort(list, n, sizeof(*list), compare_plugins);
        *ret = list;
        *ret_n = n;
        return 0;
}

/*
 * Whether the old entry stands for the file a scan found now: the same
 * version for one that was tried; for one still waiting, also untouched
 * since, else it starts waiting again.
 */
static bool still_current(const struct plugin *old, const struct plugin *found)
{
        if (old->state == PLUGIN_PENDING)
                return file_id_untouched(&old->id, &found->id);
        return file_id_equal(&old->id, &found->id);
}

/*
 * Moves the old entries that still stand for their file into the new list
 * (in place of their fresh twin), and stops and frees the others: all of
 * them before anything new is loaded, so a replaced plugin is closed before
 * its new file is opened.
 */
static void retire_old(struct plugins *p, struct plugin **found, size_t n_found)
{
        for (size_t i = 0; i < p->n; i++) {
                struct plugin *old = p->list[i];
                struct plugin **slot = find_slot(found, n_found, old->file);

                if (slot && still_current(old, *slot)) {
                        plugin_free(*slot);
                        *slot = old;
                        continue;
                }
                plugin_unload(old, slot ? "file replaced" : "file removed");
                plugin_free(old);
        }
}

/*
 * Whether e's file has been left alone for the settle time: by its ctime
 * (a file older than that loads at once, at startup say), or, should the
 * wall clock be off, by how long this loader has seen it unchanged.  When
 * not, *ret_when is when it will have been.
 */
static bool settled(const struct plugins *p, const struct plugin *e, uint64_t now,
                    uint64_t *ret_when)
{
        const struct timespec *c = &e->id.ctime;
        int64_t age = (int64_t) now_usec(CLOCK_REALTIME) -
                      ((int64_t) c->tv_sec * 1000000 + c->tv_nsec / 1000);
        uint64_t when = e->seen + p->settle_usec;

        if (now >= when || (age >= 0 && (uint64_t) age >= p->settle_usec))
                return true;
        if (age >= 0 && now + (p->settle_usec - (uint64_t) age) < when)
                when = now + (p->settle_usec - (uint64_t) age);
        *ret_when = when;
        return false;
}

/*
 * Tries a pending entry whose time has come.  One that is the same file as
 * a running plugin is refused: it would publish the same providers again.
 * One whose file is not ready waits (e->retry_at).
 */
static void try_load(struct plugins *p, struct plugin *e, uint64_t now)
{
        const struct plugin *twin;
        char path[PATH_MAX];
        uint64_t when;

        if (now < e->retry_at)
                return;
        if (!settled(p, e, now, &when)) {
                e->retry_at = when;
                return;
        }
        twin = same_file(p, e);
        if (twin) {
                if (!e->said)
                        plugin_log(e, LOG_ERR, "same file as %s, already running; skipped",
                                   twin->file);
                e->said = e->twin = true;
                e->state = PLUGIN_FAILED;
                return;
        }
        if ((size_t) snprintf(path, sizeof(path), "%s/%s", p->dir, e->file) >= sizeof(path)) {
                plugin_log(e, LOG_ERR, "%s", "path too long; skipped");
                e->state = PLUGIN_FAILED;
                return;
        }
        /* Tried again after the settle time, doubling for a file found short. */
        if (plugin_load(e, path) == -EAGAIN)
                e->retry_at = now + (p->settle_usec << (e->short_tries ? e->short_tries - 1 : 0));
}

/*
 * Whether a refused twin or duplicate must wait still: while a running
 * plugin has its file or publishes what it published, or while the plugin
 * it lost to is being replaced (that one keeps its place).
 */
static bool still_refused(const struct plugins *p, const struct plugin *e)
{
        struct plugin **winner;

        if (e->twin)
                return same_file(p, e) != NULL;
        for (size_t i = 0; i < p->n; i++) {
                const struct plugin *o = p->list[i];

                if (o != e && o->state == PLUGIN_RUNNING &&
                    pub_common(e->pubs, e->n_pubs, o->pubs, o->n_pubs))
                        return true;
        }
        winner = find_slot(p->list, p->n, e->dup_of);
        return winner && (*winner)->state == PLUGIN_PENDING;
}

/*
 * New and changed files first, in name order; then the twins and
 * duplicates refused earlier whose way is clear now.
 */
static void load_pending(struct plugins *p, uint64_t now)
{
        for (size_t i = 0; i < p->n; i++)
                if (p->list[i]->state == PLUGIN_PENDING)
                        try_load(p, p->list[i], now);
        for (size_t i = 0; i < p->n; i++) {
                struct plugin *e = p->list[i];

                if (e->state != PLUGIN_FAILED || (!e->twin && !e->dup_of[0]) ||
                    still_refused(p, e))
                        continue;
                e->state = PLUGIN_PENDING;
                e->twin = false;
                e->dup_of[0] = '\0';
                try_load(p, e, now);
        }
}

int plugins_sync(struct plugins *p)
{
        struct plugin **found;
        size_t n_found;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        int r;

        if (!p)
                return -EINVAL;
        r = scan_dir(p, now, &found, &n_found);
        if (r < 0) {
                emit(p, LOG_ERR, NULL, "plugins: cannot read %s: %s", p->dir, strerror(-r));
                return r;
        }
        retire_old(p, found, n_found);
        free(p->list);
        p->list = found;
        p->n = n_found;
        load_pending(p, now);
        p->next_sync = 0;
        for (size_t i = 0; i < p->n; i++)
                if (p->list[i]->state == PLUGIN_PENDING &&
                    (p->next_sync == 0 || p->list[i]->retry_at < p->next_sync))
                        p->next_sync = p->list[i]->retry_at;
        return 0;
}

uint64_t plugins_next_sync(const struct plugins *p)
{
        return p ? p->next_sync : 0;
}

size_t plugins_count(const struct plugins *p, enum plugin_state state)
{
        size_t n = 0;

        for (size_t i = 0; p && i < p->n; i++)
                n += p->list[i]->state == state;
        return n;
}

int plugins_foreach(const struct plugins *p,
                    int (*cb)(const struct plugin_info *info, void *userdata), void *userdata)
{
        if (!p || !cb)
                return -EINVAL;
        for (size_t i = 0; i < p->n; i++) {
                const struct plugin *e = p->list[i];
                struct plugin_info info = {
                        .file = e->file,
                        .name = e->state == PLUGIN_RUNNING ? e->name : NULL,
                        .state = e->state,
                };
                int r = cb(&info, userdata);

                if (r != 0)
                        return r;
        }
        return 0;
}
