/* SPDX-License-Identifier: MIT */
/*
 * reg-admin.c: installing and removing providers in the registry directory
 * (lodctr and unlodctr), under its lock, by whole-file renames.
 *
 * An install writes, for every provider of the manifest, the sidecar and a
 * copy of the manifest to temporary files (fsync'd), then renames each
 * sidecar and then each manifest into place: perflibd, watching for
 * IN_MOVED_TO of *.man, always finds a provider's sidecar already there.
 * Any failure before the last rename undoes the renames done so far.  A
 * removal unlinks the manifest first and its sidecar after.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfman.h"
#include "reg-admin.h"
#include "reg-dir.h"
#include "registry.h"
#include "suggest.h"

/* "PROG: message\n" on stderr. */
static void say(const struct regadm *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct regadm *a, const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "%s: ", a->prog);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

static void print_warning(const char *msg, void *userdata)
{
        fprintf(stderr, "%s: warning: %s\n", (const char *) userdata, msg);
}

/* ---- the directory and its lock ---- */

/*
 * mkdir -p.  The directories made are 0755 whatever the umask: perflibd
 * may run as another user and must read the registry.
 */
static int make_dirs(const char *dir)
{
        char *p = strdup(dir);
        struct stat st;
        int r = 0;

        if (!p)
                return -ENOMEM;
        for (char *s = p + 1; r == 0; s++) {
                bool end = *s == '\0';
                if (*s != '/' && !end)
                        continue;
                *s = '\0';
                if (mkdir(p, 0755) == 0)
                        (void) chmod(p, 0755);
                else if (errno != EEXIST)
                        r = -errno;
                if (end)
                        break;
                *s = '/';
        }
        free(p);
        if (r == 0 && stat(dir, &st) < 0)
                r = -errno;
        else if (r == 0 && !S_ISDIR(st.st_mode))
                r = -ENOTDIR;
        return r;
}

/* Whether DIR/{guid}.man exists for the sidecar DIR/<name> ("{guid}.info"). */
static bool info_has_manifest(int dfd, const char *name)
{
        size_t len = strlen(name), sfx = strlen(REG_INFO_SUFFIX);
        char man[NAME_MAX + 1];
        struct stat st;
        GUID g;

        if (len != REG_GUID_TEXT_MAX - 1 + sfx || strcmp(name + len - sfx, REG_INFO_SUFFIX) != 0)
                return true;            /* not a sidecar: not ours to remove */
        memcpy(man, name, len - sfx);
        man[len - sfx] = '\0';
        if (!pm_parse_guid(man, &g))
                return true;
        strcat(man, REG_MAN_SUFFIX);
        return fstatat(dfd, man, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
}

/*
 * Under the lock nobody else writes, so temporary files are what an
 * interrupted run left, and a sidecar without its manifest is the first
 * half of an install that never finished.  Best effort: a failure here
 * changes nothing that matters.
 */
static void remove_leftovers(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d)))
                if (strncmp(de->d_name, REG_TEMP_PREFIX, strlen(REG_TEMP_PREFIX)) == 0 ||
                    !info_has_manifest(dirfd(d), de->d_name))
                        (void) unlinkat(dirfd(d), de->d_name, 0);
        closedir(d);
}

/* For a registry the user may not write, such as the system's without root. */
static const char *hint(int r)
{
        return r == -EACCES || r == -EPERM || r == -EROFS
               ? " (choose another one with --registry-dir or $PERFLIB_REGISTRY_DIR)" : "";
}

static int open_lock(struct regadm *a, bool create)
{
        char *path;
        int fd, r;

        if ((r = reg_path(a->dir, REG_LOCK_NAME, &path)) < 0)
                return r;
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
        if (fd < 0 && errno == ENOENT && !create && access(a->dir, F_OK) < 0 && errno == ENOENT) {
                free(path);
                return 0;       /* no registry: nothing to lock, nothing installed */
        }
        if (fd < 0) {
                r = -errno;
                say(a, "cannot lock the registry %s: %s%s", path, strerror(-r), hint(r));
                free(path);
                return r;
        }
        while (flock(fd, LOCK_EX) < 0)
                if (errno != EINTR) {
                        r = -errno;
                        say(a, "cannot lock %s: %s", path, strerror(-r));
                        close(fd);
                        free(path);
                        return r;
                }
        free(path);
        a->lock_fd = fd;
        return 0;
}

int regadm_lock(struct regadm *a, bool create)
{
        int r;

        if (!a)
                return -EINVAL;
        a->lock_fd = -1;
        if (!a->dir) {
                r = a->registry_dir ? ((a->dir = strdup(a->registry_dir)) ? 0 : -ENOMEM)
                                    : reg_default_dir(&a->dir);
                if (r < 0)
                        return r;
        }
        if (create && (r = make_dirs(a->dir)) < 0) {
                say(a, "cannot create the registry %s: %s%s", a->dir, strerror(-r), hint(r));
                return r;
        }
        if ((r = open_lock(a, create)) < 0)
                return r;
        if (a->lock_fd >= 0)
                remove_leftovers(a->dir);
        return 0;
}

void regadm_unlock(struct regadm *a)
{
        if (!a)
                return;
        if (a->lock_fd >= 0)
                close(a->lock_fd);      /* releases the flock */
        a->lock_fd = -1;
        free(a->dir);
        a->dir = NULL;
}

/*
 * Makes the renames durable.  They are done and visible by now, so a
 * failure here is only worth a warning.
 */
static void sync_dir(const struct regadm *a)
{
        int fd = open(a->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;

        if (fd < 0 || fsync(fd) < 0)
                r = -errno;
        if (fd >= 0)
                close(fd);
        if (r < 0)
                say(a, "warning: cannot sync the registry %s: %s", a->dir, strerror(-r));
}

/* ---- reading what is there ---- */

struct installed {
        struct reg_file *files;         /* by name: what occupies a provider GUID */
        size_t n_files;
        struct reg_entry *entries;      /* what loads: their countersets */
        size_t n_entries;
};

static int installed_load(const struct regadm *a, bool with_entries, struct installed *ret)
{
        struct installed in = { 0 };
        int r = reg_list(a->dir, &in.files, &in.n_files);

        if (r == 0 && with_entries)
                r = reg_load(a->dir, print_warning, (void *) a->prog, &in.entries, &in.n_entries);
        if (r < 0) {
                say(a, "cannot read the registry %s: %s", a->dir, strerror(-r));
                reg_files_free(in.files, in.n_files);
                return r;
        }
        *ret = in;
        return 0;
}

static void installed_done(struct installed *in)
{
        reg_files_free(in->files, in->n_files);
        reg_entries_free(in->entries, in->n_entries);
        *in = (struct installed) { 0 };
}

static const struct reg_file *installed_file(const struct installed *in, const GUID *g)
{
        for (size_t i = 0; i < in->n_files; i++)
                if (memcmp(&in->files[i].guid, g, sizeof(*g)) == 0)
                        return &in->files[i];
        return NULL;
}

static GUID guid_of(const struct ctrpp_guid *d)
{
        GUID g = { .Data1 = d->data1, .Data2 = d->data2, .Data3 = d->data3 };

        memcpy(g.Data4, d->data4, sizeof(g.Data4));
        return g;
}

/* The installed entry of provider g, or NULL (also when its file does not load). */
static const struct reg_entry *installed_entry(const struct installed *in, const GUID *g)
{
        for (size_t i = 0; i < in->n_entries; i++) {
                GUID p = guid_of(&in->entries[i].desc->guid);
                if (memcmp(&p, g, sizeof(p)) == 0)
                        return &in->entries[i];
        }
        return NULL;
}

/* The installed entry that has counterset g, or NULL. */
static const struct reg_entry *installed_counterset(const struct installed *in, const GUID *g)
{
        for (size_t i = 0; i < in->n_entries; i++) {
                const struct ctrpp_provider_desc *d = in->entries[i].desc;
                for (uint32_t j = 0; j < d->n_countersets; j++) {
                        GUID c = guid_of(&d->countersets[j].guid);
                        if (memcmp(&c, g, sizeof(c)) == 0)
                                return &in->entries[i];
                }
        }
        return NULL;
}

/* ---- the manifest given on the command line ---- */

/* Every provider GUID as written parsed (all a removal needs). */
static bool provider_guids_ok(const struct pm_manifest *m)
{
        GUID g;

        for (size_t i = 0; i < m->n_providers; i++)
                if (!pm_parse_guid(m->providers[i].guid_text, &g))
                        return false;
        return true;
}

/* Why a parsed manifest is refused, or NULL. */
static const char *check_parsed(int r, const struct pm_manifest *m, const struct pm_diags *d,
                                bool strict)
{
        if (r == -EBADMSG)
                return "not a counter manifest";
        if (r < 0)
                return NULL;
        if (strict && pm_diags_failed(d))
                return "the manifest has errors";
        if (m->n_providers == 0)
                return "the manifest has no provider";
        if (!strict && !provider_guids_ok(m))
                return "the manifest has errors";
        return NULL;
}

/*
 * Reads and checks a manifest.  strict (lodctr): any error refuses it;
 * otherwise (unlodctr) the provider GUIDs are all that must be right.
 * Diagnostics are printed as ctrpp prints them, when strict or when they
 * refuse the manifest.  The text read is what was checked, so it is what
 * lodctr installs.  Both outputs are owned by the caller.
 */
static int read_manifest(const struct regadm *a, const char *path, bool strict,
                         char **ret_text, size_t *ret_size, struct pm_manifest **ret)
{
        struct pm_manifest *m = NULL;
        struct pm_diags *d = NULL;
        const char *why;
        char *text = NULL;
        size_t size = 0;
        int r;

        r = reg_read_file(path, REG_MANIFEST_MAX, false, &text, &size);
        if (r < 0) {
                say(a, "%s: cannot read it: %s", path,
                    r == -EFBIG ? "larger than any manifest" : strerror(-r));
                return r;
        }
        if (!(d = pm_diags_new())) {
                free(text);
                return -ENOMEM;
        }
        r = pm_parse_memory(path, text, size, d, &m);
        why = check_parsed(r, m, d, strict);
        if (why && r == 0)
                r = -EBADMSG;
        if (strict || r < 0)
                pm_diags_print(d, stderr);
        if (why)
                say(a, "%s: %s; nothing changed", path, why);
        else if (r < 0)
                say(a, "%s: %s", path, strerror(-r));
        pm_diags_free(d);
        if (r < 0) {
                pm_manifest_free(m);
                free(text);
                return r;
        }
        *ret_text = text;
        *ret_size = size;
        *ret = m;
        return 0;
}

/*
 * An absolute, single-line path (it goes into a key=value line), owned by
 * the caller.  must_be_dir: the applicationIdentityDirectory.
 */
static int absolute_path(const struct regadm *a, const char *path, bool must_be_dir, char **ret)
{
        struct stat st;
        char *abs = realpath(path, NULL);
        int r = 0;

        if (!abs)
                r = -errno;
        else if (strchr(abs, '\n'))
                r = -EINVAL;
        else if (must_be_dir && (stat(abs, &st) < 0 || !S_ISDIR(st.st_mode)))
                r = -ENOTDIR;
        if (r < 0) {
                say(a, "%s: %s%s", path, must_be_dir ? "not an applicationIdentityDirectory: " : "",
                    r == -EINVAL ? "a line break in the path" : strerror(-r));
                free(abs);
                return r;
        }
        *ret = abs;
        return 0;
}

/* ---- lodctr ---- */

/* How many of the manifest's GUIDs are installed already (each one reported). */
static size_t report_conflicts(const struct regadm *a, const char *manifest,
                               const struct pm_manifest *m, const struct installed *in)
{
        char g[REG_GUID_TEXT_MAX], og[REG_GUID_TEXT_MAX];
        size_t n = 0;

        for (size_t i = 0; i < m->n_providers; i++) {
                const struct pm_provider *p = &m->providers[i];
                const struct reg_file *f = installed_file(in, &p->guid);
                reg_guid_format(&p->guid, g);
                if (f) {
                        const struct reg_entry *e = installed_entry(in, &p->guid);
                        say(a, "%s: provider %s (%s) is already installed (%s/%s%s%s); "
                            "uninstall it first with unlodctr /G:%s", manifest, g, p->name,
                            a->dir, f->name, e && e->source ? ", from " : "",
                            e && e->source ? e->source : "", g);
                        n++;
                }
                for (size_t j = 0; j < p->n_countersets; j++) {
                        const struct pm_counterset *cs = &p->countersets[j];
                        const struct reg_entry *e = installed_counterset(in, &cs->guid);
                        GUID pg;
                        if (!e)
                                continue;
                        pg = guid_of(&e->desc->guid);
                        if (f && memcmp(&pg, &p->guid, sizeof(pg)) == 0)
                                continue;       /* said already: the provider is installed */
                        reg_guid_format(&cs->guid, g);
                        reg_guid_format(&pg, og);
                        say(a, "%s: counterset %s (%s) is already installed by provider %s (%s) "
                            "in %s%s%s; uninstall it first with unlodctr /G:%s", manifest, g,
                            cs->name ? cs->name : "?", og, e->desc->name ? e->desc->name : "?",
                            e->file, e->source ? ", from " : "", e->source ? e->source : "", og);
                        n++;
                }
        }
        return n;
}

/* One provider's two files on their way into the registry. */
struct staged {
        char *path[2];                  /* final: sidecar, manifest */
        char *tmp[2];                   /* temporary, until renamed */
        bool placed[2];
};

/* data into a new temporary file of dir, mode 0644, on disk: its path in *ret. */
static int write_temp(const struct regadm *a, const void *data, size_t size, char **ret)
{
        const char *p = data;
        char *tmp;
        int fd, r = 0;

        if (asprintf(&tmp, "%s/" REG_TEMP_PREFIX "XXXXXX", a->dir) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                say(a, "cannot create a file in %s: %s", a->dir, strerror(-r));
                free(tmp);
                return r;
        }
        while (size > 0 && r == 0) {
                ssize_t k = write(fd, p, size);
                if (k < 0 && errno != EINTR)
                        r = -errno;
                else if (k > 0)
                        p += k, size -= (size_t) k;
        }
        /* Readable by perflibd whatever user it runs as. */
        if (r == 0 && (fchmod(fd, 0644) < 0 || fsync(fd) < 0))
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r < 0) {
                say(a, "cannot write %s: %s", tmp, strerror(-r));
                (void) unlink(tmp);
                free(tmp);
                return r;
        }
        *ret = tmp;
        return 0;
}

/*
 * --owner USER as a uid in *ret ((uid_t) -1 without it).  Naming another
 * user than oneself gives that user a counterset, so only root may.
 */
static int owner_uid(const struct regadm *a, uid_t *ret)
{
        struct passwd *pw;

        if (!a->owner) {
                *ret = (uid_t) -1;
                return 0;
        }
        errno = 0;
        pw = getpwnam(a->owner);
        if (!pw) {
                say(a, "--owner %s: %s", a->owner, errno ? strerror(errno) : "no such user");
                return errno ? -errno : -ENOENT;
        }
        if (geteuid() != 0 && pw->pw_uid != geteuid()) {
                say(a, "--owner %s: only root may install countersets for another user",
                    a->owner);
                return -EPERM;
        }
        *ret = pw->pw_uid;
        return 0;
}

static int info_text(const char *source, const char *app_dir, uid_t owner, char **ret)
{
        char own[32] = "";
        int k;

        if (owner != (uid_t) -1)
                snprintf(own, sizeof(own), "%s=%u\n", REG_KEY_OWNER, (unsigned) owner);
        k = asprintf(ret, "# Written by lodctr; see lodctr(8).\n%s=%s\n%s%s%s%s%s",
                     REG_KEY_SOURCE, source, app_dir ? REG_KEY_APP_DIR : "",
                     app_dir ? "=" : "", app_dir ? app_dir : "", app_dir ? "\n" : "", own);
        return k < 0 ? -ENOMEM : 0;
}

static int stage(const struct regadm *a, const struct pm_provider *p, const char *text,
                 size_t size, const char *info, struct staged *s)
{
        int r;

        if ((r = reg_guid_path(a->dir, &p->guid, REG_INFO_SUFFIX, &s->path[0])) < 0 ||
            (r = reg_guid_path(a->dir, &p->guid, REG_MAN_SUFFIX, &s->path[1])) < 0)
                return r;
        if ((r = write_temp(a, info, strlen(info), &s->tmp[0])) < 0)
                return r;
        return write_temp(a, text, size, &s->tmp[1]);
}

/* Renames every staged file into place, sidecars first; on failure undoes it all. */
static int place(const struct regadm *a, struct staged *s, size_t n)
{
        int r = 0;

        for (size_t i = 0; i < n && r == 0; i++)
                for (int k = 0; k < 2 && r == 0; k++) {
                        if (rename(s[i].tmp[k], s[i].path[k]) < 0) {
                                r = -errno;
                                say(a, "cannot install %s: %s", s[i].path[k], strerror(-r));
                                break;
                        }
                        s[i].placed[k] = true;
                }
        if (r < 0)
                for (size_t i = n; i-- > 0;)
                        for (int k = 2; k-- > 0;)
                                if (s[i].placed[k] && unlink(s[i].path[k]) == 0)
                                        s[i].placed[k] = false;
        return r;
}

/* Removes what was not placed and frees it all. */
static void staged_free(struct staged *s, size_t n)
{
        if (!s)
                return;
        for (size_t i = 0; i < n; i++)
                for (int k = 0; k < 2; k++) {
                        if (s[i].tmp[k] && !s[i].placed[k])
                                (void) unlink(s[i].tmp[k]);
                        free(s[i].tmp[k]);
                        free(s[i].path[k]);
                }
        free(s);
}

static int install_providers(const struct regadm *a, const struct pm_manifest *m,
                             const char *text, size_t size, const char *info)
{
        struct staged *s = calloc(m->n_providers, sizeof(*s));
        int r = 0;

        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_providers && r == 0; i++)
                r = stage(a, &m->providers[i], text, size, info, &s[i]);
        if (r == 0)
                r = place(a, s, m->n_providers);
        if (r == 0)
                sync_dir(a);
        staged_free(s, m->n_providers);
        return r;
}

static void report_installed(const struct regadm *a, const char *manifest,
                             const struct pm_manifest *m)
{
        char g[REG_GUID_TEXT_MAX];

        for (size_t i = 0; i < m->n_providers; i++) {
                const struct pm_provider *p = &m->providers[i];
                reg_guid_format(&p->guid, g);
                printf("%s: installed provider %s (%s) from %s as %s/%s%s: %zu counterset%s\n",
                       a->prog, g, p->name, manifest, a->dir, g, REG_MAN_SUFFIX,
                       p->n_countersets, p->n_countersets == 1 ? "" : "s");
        }
}

int regadm_install(struct regadm *a, const char *manifest, const char *app_dir)
{
        char *text = NULL, *source = NULL, *app = NULL, *info = NULL;
        struct installed in = { 0 };
        struct pm_manifest *m = NULL;
        size_t size = 0;
        uid_t owner = (uid_t) -1;
        int r;

        if (!a || !manifest)
                return -EINVAL;
        /* Everything about the input first: a bad one never touches the registry. */
        if ((r = owner_uid(a, &owner)) < 0 ||
            (r = read_manifest(a, manifest, true, &text, &size, &m)) < 0 ||
            (r = absolute_path(a, manifest, false, &source)) < 0 ||
            (app_dir && (r = absolute_path(a, app_dir, true, &app)) < 0))
                goto done;
        if ((r = info_text(source, app, owner, &info)) < 0)
                goto done;
        if ((r = regadm_lock(a, true)) < 0 || (r = installed_load(a, true, &in)) < 0)
                goto done;
        if (report_conflicts(a, manifest, m, &in) > 0) {
                say(a, "%s: not installed; nothing changed", manifest);
                r = -EEXIST;
                goto done;
        }
        if ((r = install_providers(a, m, text, size, info)) < 0)
                say(a, "%s: not installed; nothing changed", manifest);
        else
                report_installed(a, manifest, m);
done:
        installed_done(&in);
        regadm_unlock(a);
        pm_manifest_free(m);
        free(text);
        free(source);
        free(app);
        free(info);
        return r;
}

/* ---- unlodctr ---- */

/* A provider to remove; name is borrowed, NULL when not known. */
struct target {
        GUID guid;
        const char *name;
};

/* Offers the GUID of every installed provider to sg: a digit mistyped in /G:. */
static void offer_guids(const struct installed *in, struct sg_suggest *sg)
{
        char g[REG_GUID_TEXT_MAX];

        for (size_t i = 0; i < in->n_files; i++) {
                reg_guid_format(&in->files[i].guid, g);
                sg_offer(sg, g, strlen(g));
        }
}

/* Each target's file, or an error naming every one that is not installed. */
static int find_targets(const struct regadm *a, const struct installed *in,
                        const struct target *t, size_t n, const struct reg_file **files)
{
        char g[REG_GUID_TEXT_MAX];
        struct sg_suggest sg;
        int r = 0;

        for (size_t i = 0; i < n; i++) {
                files[i] = installed_file(in, &t[i].guid);
                if (files[i])
                        continue;
                reg_guid_format(&t[i].guid, g);
                sg_begin(&sg, g);
                offer_guids(in, &sg);
                say(a, "provider %s%s%s%s is not installed (no %s/%s%s)%s", g,
                    t[i].name ? " (" : "", t[i].name ? t[i].name : "", t[i].name ? ")" : "",
                    a->dir, g, REG_MAN_SUFFIX, sg_hint(&sg));
                r = -ENOENT;
        }
        return r;
}

/* Unlinks one provider's manifest, then its sidecar. */
static int remove_one(const struct regadm *a, const struct target *t, const struct reg_file *f)
{
        char *man = NULL, *info = NULL, *source = NULL, *app_dir = NULL;
        char g[REG_GUID_TEXT_MAX];
        int r;

        reg_guid_format(&t->guid, g);
        if ((r = reg_path(a->dir, f->name, &man)) < 0 ||
            (r = reg_guid_path(a->dir, &t->guid, REG_INFO_SUFFIX, &info)) < 0)
                goto done;
        /* Only to say where it came from: a broken sidecar is no reason to stop. */
        (void) reg_info_read(info, &source, &app_dir, NULL);
        if (unlink(man) < 0) {
                r = -errno;
                say(a, "cannot remove provider %s: %s: %s", g, man, strerror(-r));
                goto done;
        }
        if (unlink(info) < 0 && errno != ENOENT)
                say(a, "warning: %s: %s (harmless: lodctr removes it next time)", info,
                    strerror(errno));
        printf("%s: removed provider %s%s%s%s: %s%s%s\n", a->prog, g,
               t->name ? " (" : "", t->name ? t->name : "", t->name ? ")" : "", man,
               source ? ", installed from " : "", source ? source : "");
done:
        free(man);
        free(info);
        free(source);
        free(app_dir);
        return r;
}

/*
 * Removes every target, or none when one of them is not installed.  in is
 * what the caller read under the lock it holds.
 */
static int remove_targets(const struct regadm *a, const struct installed *in,
                          const struct target *t, size_t n)
{
        const struct reg_file **files = calloc(n ? n : 1, sizeof(*files));
        int r;

        if (!files)
                return -ENOMEM;
        r = find_targets(a, in, t, n, files);
        for (size_t i = 0; i < n && r == 0; i++)
                r = remove_one(a, &t[i], files[i]);
        if (r == 0 && n > 0)
                sync_dir(a);
        free(files);
        return r;
}

int regadm_remove_manifest(struct regadm *a, const char *manifest)
{
        struct installed in = { 0 };
        struct pm_manifest *m = NULL;
        struct target *t = NULL;
        char *text = NULL;
        size_t size;
        int r;

        if (!a || !manifest)
                return -EINVAL;
        if ((r = read_manifest(a, manifest, false, &text, &size, &m)) < 0)
                return r;
        free(text);
        if (!(t = calloc(m->n_providers, sizeof(*t)))) {
                r = -ENOMEM;
                goto done;
        }
        for (size_t i = 0; i < m->n_providers; i++)
                t[i] = (struct target) { m->providers[i].guid, m->providers[i].name };
        if ((r = regadm_lock(a, false)) < 0 || (r = installed_load(a, false, &in)) < 0)
                goto done;
        r = remove_targets(a, &in, t, m->n_providers);
done:
        installed_done(&in);
        regadm_unlock(a);
        free(t);
        pm_manifest_free(m);
        return r;
}

int regadm_remove_guid(struct regadm *a, const char *guid_text)
{
        struct installed in = { 0 };
        struct target t = { 0 };
        int r;

        if (!a || !guid_text)
                return -EINVAL;
        if (!reg_guid_parse(guid_text, &t.guid)) {
                say(a, "'%s' is not a GUID ({xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx})", guid_text);
                return -EINVAL;
        }
        if ((r = regadm_lock(a, false)) == 0 && (r = installed_load(a, false, &in)) == 0)
                r = remove_targets(a, &in, &t, 1);
        installed_done(&in);
        regadm_unlock(a);
        return r;
}

/* The entries named name (case-insensitive, as Windows compares them): their count. */
static size_t match_name(const struct installed *in, const char *name, struct target *t)
{
        size_t n = 0;

        for (size_t i = 0; i < in->n_entries; i++) {
                const struct ctrpp_provider_desc *d = in->entries[i].desc;
                if (d->name && strcasecmp(d->name, name) == 0) {
                        if (n == 0)
                                *t = (struct target) { guid_of(&d->guid), d->name };
                        n++;
                }
        }
        return n;
}

static void report_ambiguous(const struct regadm *a, const struct installed *in, const char *name)
{
        char g[REG_GUID_TEXT_MAX];

        say(a, "several installed providers are named '%s'; remove one with /G:", name);
        for (size_t i = 0; i < in->n_entries; i++) {
                const struct ctrpp_provider_desc *d = in->entries[i].desc;
                GUID pg = guid_of(&d->guid);
                if (!d->name || strcasecmp(d->name, name) != 0)
                        continue;
                reg_guid_format(&pg, g);
                say(a, "  %s in %s", g, in->entries[i].file);
        }
}

/* No provider has that name: say so, with the installed one meant. */
static void report_unknown_name(const struct regadm *a, const struct installed *in,
                                const char *name)
{
        struct sg_suggest sg;

        sg_begin(&sg, name);
        for (size_t i = 0; i < in->n_entries; i++) {
                const char *n = in->entries[i].desc->name;

                if (n)
                        sg_offer(&sg, n, strlen(n));
        }
        say(a, "no installed provider is named '%s' (in %s)%s", name, a->dir, sg_hint(&sg));
}

int regadm_remove_name(struct regadm *a, const char *name)
{
        struct installed in = { 0 };
        struct target t = { 0 };
        size_t n;
        int r;

        if (!a || !name)
                return -EINVAL;
        if ((r = regadm_lock(a, false)) < 0 || (r = installed_load(a, true, &in)) < 0)
                goto done;
        n = match_name(&in, name, &t);
        if (n == 0) {
                report_unknown_name(a, &in, name);
                r = -ENOENT;
        } else if (n > 1) {
                report_ambiguous(a, &in, name);
                r = -ENOTUNIQ;
        } else
                r = remove_targets(a, &in, &t, 1);
done:
        installed_done(&in);
        regadm_unlock(a);
        return r;
}
