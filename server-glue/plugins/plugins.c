/* SPDX-License-Identifier: MIT */
/*
 * The plugin loader (plugins.h): scans the plugin directory, opens each
 * plugin with libltdl, validates its descriptor, starts it, and stops and
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
#include <unistd.h>

#include "perflib-plugin.h"
#include "plugins.h"
#include "reader.h"

/* A plugin's name is for logs: anything longer is cut. */
#define NAME_MAX_LEN    64
/* One log line, the plugin's text included; a longer one is cut. */
#define LOG_LINE_MAX    2048

typedef uint32_t (*start_fn)(const struct perflib_plugin_services *svc, void **state);

/* What identifies one version of a plugin file. */
struct file_id {
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
        mode_t mode;
};

/* One NAME.so of the directory, running or failed. */
struct plugin {
        struct plugins *owner;
        char *file;                     /* "x.so" */
        char *name;                     /* for logs: the descriptor's, or the file's */
        struct file_id id;
        enum plugin_state state;
        bool pending;                   /* found by this sync, not tried yet */
        bool twin;                      /* failed: the same file as a running plugin */
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

static bool file_id_equal(const struct file_id *a, const struct file_id *b)
{
        return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
               a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
               a->mode == b->mode;
}

static void file_id_from_stat(const struct stat *st, struct file_id *ret)
{
        *ret = (struct file_id) {
                .dev = st->st_dev, .ino = st->st_ino, .size = st->st_size,
                .mtime = st->st_mtim, .mode = st->st_mode,
        };
}

static void plugin_free(struct plugin *e)
{
        if (!e)
                return;
        free(e->name);
        free(e->file);
        free(e);
}

static int plugin_new(struct plugins *owner, const char *file, const struct file_id *id,
                      struct plugin **ret)
{
        struct plugin *e = calloc(1, sizeof(*e));

        if (!e)
                return -ENOMEM;
        e->owner = owner;
        e->id = *id;
        e->state = PLUGIN_FAILED;
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
 * Opens the file with libltdl.  libltdl binds lazily, and a plugin with a
 * symbol that does not resolve would then kill the server at its first
 * call of it.  So the file is first opened with RTLD_NOW, which fails on
 * any unresolved symbol and leaves the object relocated for libltdl's own
 * open of the same object; that first reference is then dropped.
 */
static int plugin_open(struct plugin *e, const char *path)
{
        void *bound;

        bound = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!bound) {
                plugin_log(e, LOG_ERR, "cannot load: %s; skipped", dlerror());
                return -ENOEXEC;
        }
        e->handle = lt_dlopenadvise(path, e->owner->advise);
        if (!e->handle)
                plugin_log(e, LOG_ERR, "cannot load with libltdl: %s; skipped", lt_dlerror());
        (void) dlclose(bound);
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

static int plugin_start(struct plugin *e, start_fn start)
{
        uint32_t status;
        void *state = NULL;

        e->svc = (struct perflib_plugin_services) {
                .abi = PERFLIB_PLUGIN_ABI,
                .size = sizeof(e->svc),
                .log = svc_log,
                .runtime_dir = e->owner->runtime_dir,
                .server = e,
        };
        status = start(&e->svc, &state);
        if (status != 0) {
                plugin_log(e, LOG_ERR, "start failed with Win32 error %u; skipped",
                           (unsigned) status);
                return -EIO;
        }
        e->opaque = state;
        return 0;
}

/* Loads, validates and starts the plugin of e's file; on failure e stays PLUGIN_FAILED. */
static int plugin_load(struct plugin *e, const char *path)
{
        start_fn start = NULL;
        int r;

        /* Whoever may write it could run code in the server. */
        if (e->id.mode & S_IWOTH) {
                plugin_log(e, LOG_ERR, "%s", "writable by others; skipped");
                return -EPERM;
        }
        r = plugin_open(e, path);
        if (r < 0)
                return r;
        r = plugin_describe(e, &start);
        if (r >= 0)
                r = plugin_start(e, start);
        if (r < 0) {
                free(e->name);
                e->name = NULL;
                e->stop = NULL;
                (void) lt_dlclose(e->handle);
                e->handle = NULL;
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
        if (lt_dlclose(e->handle) != 0)
                plugin_log(e, LOG_WARNING, "unloading: %s", lt_dlerror());
        e->handle = NULL;
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
        if (cfg) {
                p->log = cfg->log;
                p->userdata = cfg->userdata;
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

/* Appends a new entry for a plugin file found by a scan. */
static int scan_add(struct plugins *p, const char *file, const struct stat *st,
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
        r = plugin_new(p, file, &id, &e);
        if (r < 0)
                return r;
        e->pending = true;
        (*list)[(*n)++] = e;
        return 0;
}

/*
 * Every plugin file of the directory, as new pending entries sorted by
 * name; *ret is owned by the caller.  Symbolic links are followed; a
 * dangling one, a directory or a device is not a plugin.
 */
static int scan_dir(struct plugins *p, struct plugin ***ret, size_t *ret_n)
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
                r = scan_add(p, de->d_name, &st, &list, &n, &cap);
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
 * Moves the old entries whose file is unchanged into the new list (in
 * place of their fresh twin), and stops and frees the others: all of them
 * before anything new is loaded, so a replaced plugin is closed before its
 * new file is opened.
 */
static void retire_old(struct plugins *p, struct plugin **found, size_t n_found)
{
        for (size_t i = 0; i < p->n; i++) {
                struct plugin *old = p->list[i];
                struct plugin **slot = find_slot(found, n_found, old->file);

                if (slot && file_id_equal(&(*slot)->id, &old->id)) {
                        plugin_free(*slot);
                        *slot = old;
                        continue;
                }
                plugin_unload(old, slot ? "file replaced" : "file removed");
                plugin_free(old);
        }
}

/*
 * Loads the pending entries.  One that is the same file as a running plugin
 * (the dynamic linker would hand out the running copy again) is refused,
 * said once, and tried on every sync until that other plugin is gone.
 */
static void load_pending(struct plugins *p)
{
        char path[PATH_MAX];

        for (size_t i = 0; i < p->n; i++) {
                struct plugin *e = p->list[i];
                const struct plugin *twin;

                if (!e->pending && !e->twin)
                        continue;
                twin = same_file(p, e);
                if (twin) {
                        if (e->pending)
                                plugin_log(e, LOG_ERR,
                                           "same file as %s, already running; skipped",
                                           twin->file);
                        e->pending = false;
                        e->twin = true;
                        continue;
                }
                e->pending = e->twin = false;
                if ((size_t) snprintf(path, sizeof(path), "%s/%s", p->dir, e->file) >=
                    sizeof(path)) {
                        plugin_log(e, LOG_ERR, "%s", "path too long; skipped");
                        continue;
                }
                (void) plugin_load(e, path);
        }
}

int plugins_sync(struct plugins *p)
{
        struct plugin **found;
        size_t n_found;
        int r;

        if (!p)
                return -EINVAL;
        r = scan_dir(p, &found, &n_found);
        if (r < 0) {
                emit(p, LOG_ERR, NULL, "plugins: cannot read %s: %s", p->dir, strerror(-r));
                return r;
        }
        retire_old(p, found, n_found);
        free(p->list);
        p->list = found;
        p->n = n_found;
        load_pending(p);
        return 0;
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
