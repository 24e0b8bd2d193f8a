/* SPDX-License-Identifier: MIT */
/*
 * reg-dir.c: the registry directory's format (lodctr(8) documents it), what
 * the reader (registry.c) and the writer (reg-admin.c) both need: where the
 * directory is, the names in it, reading its files whole, listing its
 * entries, and the sidecar.  Parses no manifest.
 *
 * Everything read here is untrusted input: sizes are bounded, names are
 * checked, and a file that is not regular is refused.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfman.h"
#include "reg-dir.h"
#include "registry.h"

#ifndef PERFLIB_REGISTRY_DIR_DEFAULT
#define PERFLIB_REGISTRY_DIR_DEFAULT "/var/lib/perflib/registry"
#endif

int reg_default_dir(char **ret)
{
        const char *e = getenv("PERFLIB_REGISTRY_DIR");
        char *d;

        if (!ret)
                return -EINVAL;
        d = strdup(e && *e ? e : PERFLIB_REGISTRY_DIR_DEFAULT);
        if (!d)
                return -ENOMEM;
        *ret = d;
        return 0;
}

/* ---- names ---- */

void reg_guid_format(const GUID *g, char buf[REG_GUID_TEXT_MAX])
{
        snprintf(buf, REG_GUID_TEXT_MAX,
                 "{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}",
                 (unsigned) g->Data1, (unsigned) g->Data2, (unsigned) g->Data3,
                 g->Data4[0], g->Data4[1], g->Data4[2], g->Data4[3],
                 g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
}

bool reg_guid_parse(const char *text, GUID *ret)
{
        char braced[REG_GUID_TEXT_MAX];

        if (!text || !ret)
                return false;
        if (text[0] == '{')
                return pm_parse_guid(text, ret);
        if (strlen(text) != REG_GUID_TEXT_MAX - 3)
                return false;
        snprintf(braced, sizeof(braced), "{%s}", text);
        return pm_parse_guid(braced, ret);
}

int reg_path(const char *dir, const char *name, char **ret)
{
        char *p;

        if (!dir || !name || !ret)
                return -EINVAL;
        if (asprintf(&p, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        *ret = p;
        return 0;
}

int reg_guid_path(const char *dir, const GUID *g, const char *suffix, char **ret)
{
        char text[REG_GUID_TEXT_MAX], *p;

        if (!dir || !g || !suffix || !ret)
                return -EINVAL;
        reg_guid_format(g, text);
        if (asprintf(&p, "%s/%s%s", dir, text, suffix) < 0)
                return -ENOMEM;
        *ret = p;
        return 0;
}

const char *reg_base_name(const char *path)
{
        const char *s;

        if (!path)
                return NULL;
        s = strrchr(path, '/');
        return s ? s + 1 : path;
}

/* ---- files ---- */

static int read_fd(int fd, size_t max, char **ret, size_t *ret_size)
{
        struct stat st;
        size_t size = 0;
        char *buf;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
        if (st.st_size < 0 || (uint64_t) st.st_size > max)
                return -EFBIG;
        /* One byte more than stat says, to notice a file that grows meanwhile. */
        buf = malloc((size_t) st.st_size + 2);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = read(fd, buf + size, (size_t) st.st_size + 1 - size);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        int r = -errno;
                        free(buf);
                        return r;
                }
                if (k == 0)
                        break;
                size += (size_t) k;
                if (size > (size_t) st.st_size) {
                        free(buf);
                        return -EAGAIN;         /* changed while read */
                }
        }
        buf[size] = '\0';
        *ret = buf;
        *ret_size = size;
        return 0;
}

int reg_read_file(const char *path, size_t max, bool nofollow, char **ret, size_t *ret_size)
{
        int fd, r;

        if (!path || !ret || !ret_size)
                return -EINVAL;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
        if (fd < 0)
                return -errno;
        r = read_fd(fd, max, ret, ret_size);
        close(fd);
        return r;
}

/* "{guid}.man" -> the GUID; false for any other name. */
static bool entry_name(const char *name, GUID *ret)
{
        size_t len = strlen(name), sfx = strlen(REG_MAN_SUFFIX);
        char stem[REG_GUID_TEXT_MAX];

        if (name[0] != '{' || len != REG_GUID_TEXT_MAX - 1 + sfx ||
            strcmp(name + len - sfx, REG_MAN_SUFFIX) != 0)
                return false;
        memcpy(stem, name, len - sfx);
        stem[len - sfx] = '\0';
        return pm_parse_guid(stem, ret);
}

static int cmp_files(const void *a, const void *b)
{
        return strcmp(((const struct reg_file *) a)->name, ((const struct reg_file *) b)->name);
}

static int add_file(struct reg_file **files, size_t *n, size_t *cap, const char *name,
                    const GUID *g)
{
        if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 32;
                struct reg_file *f = realloc(*files, c * sizeof(*f));
                if (!f)
                        return -ENOMEM;
                *files = f;
                *cap = c;
        }
        (*files)[*n].name = strdup(name);
        if (!(*files)[*n].name)
                return -ENOMEM;
        (*files)[*n].guid = *g;
        ++*n;
        return 0;
}

int reg_list(const char *dir, struct reg_file **ret, size_t *ret_n)
{
        struct reg_file *files = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (!dir || !ret || !ret_n)
                return -EINVAL;
        d = opendir(dir);
        if (!d && errno != ENOENT)
                return -errno;
        while (d) {
                GUID g;
                errno = 0;
                if (!(de = readdir(d))) {
                        r = -errno;
                        break;
                }
                if (entry_name(de->d_name, &g) && (r = add_file(&files, &n, &cap, de->d_name, &g)) < 0)
                        break;
        }
        if (d)
                closedir(d);
        if (r < 0) {
                reg_files_free(files, n);
                return r;
        }
        if (n > 1)
                qsort(files, n, sizeof(*files), cmp_files);
        *ret = files;
        *ret_n = n;
        return 0;
}

void reg_files_free(struct reg_file *f, size_t n)
{
        if (!f)
                return;
        for (size_t i = 0; i < n; i++)
                free(f[i].name);
        free(f);
}

/* ---- the sidecar ---- */

/* Sets *slot to a copy of value, once: a key given twice is malformed. */
static int info_value(char **slot, const char *value)
{
        if (*slot)
                return -EBADMSG;
        *slot = strdup(value);
        return *slot ? 0 : -ENOMEM;
}

/* A uid in decimal, never (uid_t) -1; set once, as info_value. */
static int info_uid(uid_t *slot, const char *value)
{
        unsigned long long v = 0;

        if (*slot != (uid_t) -1 || !*value || strlen(value) > 10)
                return -EBADMSG;
        for (const char *c = value; *c; c++) {
                if (*c < '0' || *c > '9')
                        return -EBADMSG;
                v = v * 10 + (unsigned) (*c - '0');
        }
        if (v >= (uid_t) -1)
                return -EBADMSG;
        *slot = (uid_t) v;
        return 0;
}

static int info_parse(char *text, size_t size, char **source, char **app_dir, uid_t *owner)
{
        char *line = text, *end = text + size;

        if (memchr(text, '\0', size))
                return -EBADMSG;
        while (line < end) {
                char *nl = memchr(line, '\n', (size_t) (end - line)), *eq;
                int r = 0;
                if (nl)
                        *nl = '\0';
                if (line[0] != '\0' && line[0] != '#') {
                        if (!(eq = strchr(line, '=')))
                                return -EBADMSG;
                        *eq = '\0';
                        if (strcmp(line, REG_KEY_SOURCE) == 0)
                                r = info_value(source, eq + 1);
                        else if (strcmp(line, REG_KEY_APP_DIR) == 0)
                                r = info_value(app_dir, eq + 1);
                        else if (strcmp(line, REG_KEY_OWNER) == 0)
                                r = info_uid(owner, eq + 1);
                        /* Other keys are a later version's: ignored. */
                }
                if (r < 0)
                        return r;
                line = nl ? nl + 1 : end;
        }
        return 0;
}

int reg_info_read(const char *path, char **ret_source, char **ret_app_dir, uid_t *ret_owner)
{
        char *text = NULL, *source = NULL, *app_dir = NULL;
        uid_t owner = (uid_t) -1;
        size_t size;
        int r;

        if (!path || !ret_source || !ret_app_dir)
                return -EINVAL;
        r = reg_read_file(path, REG_INFO_MAX, true, &text, &size);
        if (r == -ENOENT) {
                *ret_source = *ret_app_dir = NULL;
                if (ret_owner)
                        *ret_owner = owner;
                return 0;
        }
        if (r < 0)
                return r;
        r = info_parse(text, size, &source, &app_dir, &owner);
        free(text);
        if (r < 0) {
                free(source);
                free(app_dir);
                return r;
        }
        *ret_source = source;
        *ret_app_dir = app_dir;
        if (ret_owner)
                *ret_owner = owner;
        return 0;
}
