/* SPDX-License-Identifier: MIT */
/*
 * registry.c: loading the registry directory for perflibd (reg_load,
 * reg_reload): each installed manifest parsed, checked against its name and
 * the entries before it, and made a description (reg-desc.c).  The
 * directory's format, names and files are reg-dir.c's.
 *
 * Readers take no lock: lodctr renames every file into place complete, so
 * a reader sees a provider's manifest whole or not at all.  Everything read
 * here is untrusted input: a file that does not parse, is too large, is not
 * a regular file or does not match its name is skipped with a warning, and
 * never stops the rest of the registry from loading.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfman.h"
#include "reg-desc.h"
#include "reg-dir.h"
#include "registry.h"

/* ---- loading ---- */

struct loader {
        const char *dir;
        void (*warn)(const char *msg, void *userdata);
        void *userdata;
        struct reg_entry *entries;      /* those loaded so far */
        size_t n;
        size_t *from;                   /* per entry: its index in prev, SIZE_MAX when parsed */
        struct reg_entry *prev;         /* reg_reload's, the caller's until it succeeds */
        size_t n_prev;
        size_t next_prev;               /* where the walk over prev is */
};

static void warnf(const struct loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(const struct loader *l, const char *fmt, ...)
{
        va_list ap;
        char *msg;
        int k;

        if (!l->warn)
                return;
        va_start(ap, fmt);
        k = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (k < 0)
                return;
        l->warn(msg, l->userdata);
        free(msg);
}

/* The first error found, as "line:col: message", for a warning that says why. */
static void warn_diag(const struct loader *l, const char *path, const struct pm_diags *d)
{
        const struct pm_diag *first = NULL;

        for (size_t i = 0; i < d->n; i++) {
                const struct pm_diag *x = &d->items[i];
                if ((x->severity == PM_ERROR || d->werror) && (!first || x->order < first->order))
                        first = x;
        }
        if (first)
                warnf(l, "%s: skipped, not a valid manifest: %u:%u: %s%s", path, first->loc.line,
                      first->loc.col, first->message,
                      d->n_errors > 1 ? " (and more errors)" : "");
        else
                warnf(l, "%s: skipped, not a valid manifest", path);
}

/* Parses and validates one installed copy; 1 when it was skipped (and said why). */
static int parse_installed(const struct loader *l, const char *path, struct pm_manifest **ret)
{
        struct pm_diags *d = NULL;
        struct pm_manifest *m = NULL;
        char *text = NULL;
        size_t size;
        int r;

        r = reg_read_file(path, REG_MANIFEST_MAX, true, &text, &size);
        if (r == -ENOMEM)
                return r;
        if (r == -ENOENT)
                return 1;       /* unlodctr removed it since it was listed: not worth a word */
        if (r < 0) {
                warnf(l, "%s: skipped, cannot read it: %s", path, strerror(-r));
                return 1;
        }
        if (!(d = pm_diags_new())) {
                free(text);
                return -ENOMEM;
        }
        r = pm_parse_memory(path, text, size, d, &m);
        free(text);
        if (r == -ENOMEM || (r == 0 && pm_diags_failed(d) && d->n == 0)) {
                r = -ENOMEM;    /* the diagnostics list itself ran out of memory */
        } else if (r < 0 || pm_diags_failed(d)) {
                warn_diag(l, path, d);
                r = 1;
        } else {
                *ret = m;
                m = NULL;
        }
        pm_manifest_free(m);
        pm_diags_free(d);
        return r;
}

static const struct pm_provider *find_provider(const struct pm_manifest *m, const GUID *g)
{
        for (size_t i = 0; i < m->n_providers; i++)
                if (memcmp(&m->providers[i].guid, g, sizeof(*g)) == 0)
                        return &m->providers[i];
        return NULL;
}

static void entry_clear(struct reg_entry *e)
{
        free(e->file);
        free(e->app_dir);
        free(e->source);
        reg_desc_free(e->desc);
        *e = (struct reg_entry) { 0 };
}

/* The entry loaded earlier that has a counterset of this GUID, or NULL. */
static const struct reg_entry *counterset_owner(const struct loader *l,
                                                const struct ctrpp_guid *g)
{
        for (size_t i = 0; i < l->n; i++) {
                const struct ctrpp_provider_desc *d = l->entries[i].desc;
                for (uint32_t j = 0; j < d->n_countersets; j++)
                        if (memcmp(&d->countersets[j].guid, g, sizeof(*g)) == 0)
                                return &l->entries[i];
        }
        return NULL;
}

static void format_guid(const struct ctrpp_guid *d, char text[REG_GUID_TEXT_MAX])
{
        GUID g = { .Data1 = d->data1, .Data2 = d->data2, .Data3 = d->data3 };

        memcpy(g.Data4, d->data4, sizeof(g.Data4));
        reg_guid_format(&g, text);
}

/* 1 (with a warning) when e repeats a GUID an entry accepted before it has. */
static int check_unique(const struct loader *l, const struct reg_entry *e)
{
        const struct ctrpp_provider_desc *d = e->desc;
        char text[REG_GUID_TEXT_MAX];

        for (size_t i = 0; i < l->n; i++)
                if (memcmp(&l->entries[i].desc->guid, &d->guid, sizeof(d->guid)) == 0) {
                        format_guid(&d->guid, text);
                        warnf(l, "%s: skipped, provider %s is installed twice (also %s)",
                              e->file, text, l->entries[i].file);
                        return 1;
                }
        for (uint32_t i = 0; i < d->n_countersets; i++) {
                const struct ctrpp_counterset_desc *cs = &d->countersets[i];
                const struct reg_entry *o = counterset_owner(l, &cs->guid);
                if (o) {
                        format_guid(&cs->guid, text);
                        warnf(l, "%s: skipped, its counterset %s (%s) is already installed by %s",
                              e->file, text, cs->name ? cs->name : "?", o->file);
                        return 1;
                }
        }
        return 0;
}

/*
 * The sidecar's values; a broken sidecar is warned about and ignored (the
 * manifest alone still describes the provider).  The owner it names counts
 * only when root or that user wrote the sidecar: lodctr lets nobody else
 * name one, and whoever can write the directory must not make a counterset
 * someone else's.  Else the counterset is the manifest file's owner's.
 */
static int load_info(const struct loader *l, const char *path, struct reg_entry *e)
{
        uid_t owner;
        int r = reg_info_read(path, &e->source, &e->app_dir, &owner);

        e->owner = e->man_stamp.uid;
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                warnf(l, "%s: ignored, cannot read it: %s", path,
                      r == -EBADMSG ? "not key=value lines" : strerror(-r));
        else if (owner != (uid_t) -1 && (e->info_stamp.uid == 0 || e->info_stamp.uid == owner))
                e->owner = owner;
        else if (owner != (uid_t) -1)
                warnf(l, "%s: owner=%u ignored: the file is uid %u's, neither root's nor that "
                      "user's", path, (unsigned) owner, (unsigned) e->info_stamp.uid);
        return 0;
}

/*
 * Parses the files of one entry into e (e->file and the stamps are set);
 * 1 when the manifest was skipped (and said why).
 */
static int load_one(const struct loader *l, const struct reg_file *f, const char *info,
                    struct reg_entry *e)
{
        struct pm_manifest *m = NULL;
        const struct pm_provider *p;
        char text[REG_GUID_TEXT_MAX];
        int r;

        if ((r = parse_installed(l, e->file, &m)) != 0)
                return r;
        r = 1;
        if (!(p = find_provider(m, &f->guid))) {
                reg_guid_format(&f->guid, text);
                warnf(l, "%s: skipped, the manifest has no provider %s", e->file, text);
                goto done;
        }
        if ((r = load_info(l, info, e)) < 0)
                goto done;
        pm_assign_ids(m);
        r = reg_desc_build(m, p, reg_base_name(e->source ? e->source : e->file), &e->desc);
done:
        pm_manifest_free(m);
        return r;
}

/* ---- stamps: what reg_reload compares to know a file unchanged ---- */

/* 0 with the stamp; -ENOENT when there is no such file (a zero stamp). */
static int stamp_of(const char *path, struct reg_stamp *ret)
{
        struct stat st;

        *ret = (struct reg_stamp) { 0 };
        if (lstat(path, &st) < 0)
                return -errno;
        *ret = (struct reg_stamp) {
                .dev = (uint64_t) st.st_dev, .ino = (uint64_t) st.st_ino,
                .size = (uint64_t) st.st_size,
                .mtime_ns = (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
                .ctime_ns = (int64_t) st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec,
                .uid = (uint32_t) st.st_uid,
        };
        return 0;
}

static bool same_stamp(const struct reg_stamp *a, const struct reg_stamp *b)
{
        return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
               a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns && a->uid == b->uid;
}

/*
 * The index in prev of this path's previous entry when its files are
 * unchanged, or SIZE_MAX.  prev is sorted by path as the files are, so one
 * pass over both finds them all.
 */
static size_t unchanged_prev(struct loader *l, const struct reg_entry *e)
{
        const struct reg_entry *p;

        while (l->next_prev < l->n_prev && strcmp(l->prev[l->next_prev].file, e->file) < 0)
                l->next_prev++;
        if (l->next_prev == l->n_prev)
                return SIZE_MAX;
        p = &l->prev[l->next_prev];
        if (strcmp(p->file, e->file) != 0 || !p->desc || !same_stamp(&p->man_stamp, &e->man_stamp) ||
            !same_stamp(&p->info_stamp, &e->info_stamp))
                return SIZE_MAX;
        return l->next_prev;
}

/* ---- loading ---- */

/*
 * One file: its previous entry (prev[*from]) copied into e when unchanged,
 * else parsed.  0 when e is an entry now, 1 when the file was skipped,
 * -errno.  A copied entry still belongs to prev until reg_reload succeeds.
 */
static int take_file(struct loader *l, const struct reg_file *f, struct reg_entry *e,
                     size_t *from)
{
        struct reg_entry fresh = { 0 };
        char *info = NULL;
        int r;

        *from = SIZE_MAX;
        if ((r = reg_path(l->dir, f->name, &fresh.file)) < 0 ||
            (r = reg_guid_path(l->dir, &f->guid, REG_INFO_SUFFIX, &info)) < 0)
                goto done;
        /* Stamped before they are read: a change meanwhile shows at the next reload. */
        if (stamp_of(fresh.file, &fresh.man_stamp) == -ENOENT) {
                r = 1;  /* unlodctr removed it since it was listed: not worth a word */
                goto done;
        }
        (void) stamp_of(info, &fresh.info_stamp);
        *from = unchanged_prev(l, &fresh);
        if (*from == SIZE_MAX)
                r = load_one(l, f, info, &fresh);
        if (r == 0 && (r = check_unique(l, *from == SIZE_MAX ? &fresh : &l->prev[*from])) == 0) {
                *e = *from == SIZE_MAX ? fresh : l->prev[*from];
                if (*from == SIZE_MAX)
                        fresh = (struct reg_entry) { 0 };       /* now e's */
        }
done:
        if (r != 0)
                *from = SIZE_MAX;
        entry_clear(&fresh);
        free(info);
        return r;
}

/* Frees what the loader made; prev stays the caller's. */
static void loader_fail(struct loader *l)
{
        for (size_t i = 0; i < l->n; i++)
                if (l->from[i] == SIZE_MAX)
                        entry_clear(&l->entries[i]);
        free(l->entries);
}

/*
 * Frees the previous entries not moved into the new array, and the old
 * array.  Moved ones were taken in order, so from[] rises with prev's index.
 */
static void loader_succeed(struct loader *l)
{
        size_t i = 0;

        for (size_t j = 0; j < l->n_prev; j++) {
                while (i < l->n && (l->from[i] == SIZE_MAX || l->from[i] < j))
                        i++;
                if (i == l->n || l->from[i] != j)
                        entry_clear(&l->prev[j]);
        }
        free(l->prev);
}

static int load_files(struct loader *l, const struct reg_file *files, size_t n_files)
{
        int r = 0;

        if (n_files > 0 && (!(l->entries = calloc(n_files, sizeof(*l->entries))) ||
                            !(l->from = calloc(n_files, sizeof(*l->from)))))
                return -ENOMEM;
        for (size_t i = 0; i < n_files; i++) {
                r = take_file(l, &files[i], &l->entries[l->n], &l->from[l->n]);
                if (r < 0)
                        return r;
                if (r == 0)
                        l->n++;
        }
        return 0;
}

int reg_reload(const char *dir, struct reg_entry *prev, size_t n_prev,
               void (*warn)(const char *msg, void *userdata), void *userdata,
               struct reg_entry **ret, size_t *ret_n)
{
        struct loader l = {
                .dir = dir, .warn = warn, .userdata = userdata, .prev = prev, .n_prev = n_prev,
        };
        struct reg_file *files = NULL;
        size_t n_files = 0;
        int r;

        if (!dir || !ret || !ret_n || (n_prev > 0 && !prev))
                return -EINVAL;
        r = reg_list(dir, &files, &n_files);
        if (r == 0)
                r = load_files(&l, files, n_files);
        reg_files_free(files, n_files);
        if (r < 0) {
                loader_fail(&l);
                free(l.from);
                return r;
        }
        loader_succeed(&l);
        free(l.from);
        *ret = l.entries;
        *ret_n = l.n;
        return 0;
}

int reg_load(const char *dir, void (*warn)(const char *msg, void *userdata), void *userdata,
             struct reg_entry **ret, size_t *ret_n)
{
        return reg_reload(dir, NULL, 0, warn, userdata, ret, ret_n);
}

void reg_entries_free(struct reg_entry *e, size_t n)
{
        if (!e)
                return;
        for (size_t i = 0; i < n; i++)
                entry_clear(&e[i]);
        free(e);
}
