/* SPDX-License-Identifier: MIT */
/*
 * What a plugin published (plugin-pub.h).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin-pub.h"
#include "reader.h"

/* A growing array of struct pub. */
struct pubs {
        struct pub *v;
        size_t n, cap;
};

static int pubs_add(struct pubs *p, const GUID *guid, bool counterset)
{
        if (p->n == p->cap) {
                size_t cap = p->cap ? p->cap * 2 : 8;
                struct pub *v = reallocarray(p->v, cap, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                p->v = v;
                p->cap = cap;
        }
        p->v[p->n++] = (struct pub) { .guid = *guid, .counterset = counterset };
        return 0;
}

/*
 * "provider-PID-": how libperflib names this process's sockets (the pid
 * is checked again on the connection: the name only saves connecting to
 * every other provider of the directory).
 */
static void own_prefix(char *buf, size_t size)
{
        snprintf(buf, size, "%s%u-", PL_SVC_SOCKET_PREFIX, (unsigned) getpid());
}

static bool own_socket(const char *name, const char *prefix)
{
        size_t len = strlen(name), suf = strlen(PL_SVC_SOCKET_SUFFIX);

        return strncmp(name, prefix, strlen(prefix)) == 0 && len > suf &&
               strcmp(name + len - suf, PL_SVC_SOCKET_SUFFIX) == 0;
}

static int compare_names(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static int mark_add(struct pub_mark *m, size_t *cap, const char *name)
{
        if (m->n == *cap) {
                size_t c = *cap ? *cap * 2 : 8;
                char **v = reallocarray(m->names, c, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                m->names = v;
                *cap = c;
        }
        m->names[m->n] = strdup(name);
        if (!m->names[m->n])
                return -ENOMEM;
        m->n++;
        return 0;
}

int pub_mark(const char *dir, struct pub_mark *ret)
{
        struct pub_mark m = { 0 };
        char prefix[64];
        struct dirent *de;
        size_t cap = 0;
        int r = 0;
        DIR *d;

        if (!dir || !ret)
                return -EINVAL;
        d = opendir(dir);
        if (!d && errno != ENOENT)
                return -errno;
        own_prefix(prefix, sizeof(prefix));
        while (d && r == 0) {
                errno = 0;
                de = readdir(d);
                if (!de) {
                        r = -errno;
                        break;
                }
                if (own_socket(de->d_name, prefix))
                        r = mark_add(&m, &cap, de->d_name);
        }
        if (d)
                closedir(d);
        if (r < 0) {
                pub_mark_done(&m);
                return r;
        }
        if (m.n > 1)
                qsort(m.names, m.n, sizeof(*m.names), compare_names);
        *ret = m;
        return 0;
}

void pub_mark_done(struct pub_mark *m)
{
        if (!m)
                return;
        for (size_t i = 0; i < m->n; i++)
                free(m->names[i]);
        free(m->names);
        *m = (struct pub_mark) { 0 };
}

static bool marked(const struct pub_mark *m, const char *name)
{
        return m->n > 0 &&
               bsearch(&name, m->names, m->n, sizeof(*m->names), compare_names) != NULL;
}

/* Appends the provider and countersets of the socket at path, when it is ours and readable. */
static int read_provider(const char *path, struct pubs *out)
{
        const struct pl_counterset *cs;
        struct pl_reader *r = NULL;
        uint32_t header_pid;
        pid_t pid;
        GUID guid;
        int n, k;

        if (pl_reader_open(path, &r) < 0)
                return 0;
        k = pl_reader_peer_pid(r, &pid);
        if (k == 0 && pid == getpid())
                k = pl_reader_provider(r, &guid, &header_pid);
        else
                k = -ESRCH;
        n = k == 0 ? pl_reader_counterset_count(r) : 0;
        if (k == 0)
                k = pubs_add(out, &guid, false);
        for (int i = 0; k == 0 && i < n; i++)
                if (pl_reader_counterset(r, (uint32_t) i, &cs) == 0)
                        k = pubs_add(out, &cs->guid, true);
        pl_reader_close(r);
        return k == -ENOMEM ? k : 0;
}

int pub_since(const char *dir, const struct pub_mark *before, struct pub **ret, size_t *ret_n)
{
        struct pub_mark after;
        struct pubs out = { 0 };
        char path[PATH_MAX];
        int r;

        if (!dir || !before || !ret || !ret_n)
                return -EINVAL;
        r = pub_mark(dir, &after);
        for (size_t i = 0; r == 0 && i < after.n; i++) {
                if (marked(before, after.names[i]))
                        continue;
                if ((size_t) snprintf(path, sizeof(path), "%s/%s", dir, after.names[i]) >=
                    sizeof(path))
                        continue;
                r = read_provider(path, &out);
        }
        pub_mark_done(&after);
        if (r < 0) {
                free(out.v);
                return r;
        }
        *ret = out.v;
        *ret_n = out.n;
        return 0;
}

const struct pub *pub_common(const struct pub *a, size_t na, const struct pub *b, size_t nb)
{
        for (size_t i = 0; i < na; i++)
                for (size_t j = 0; j < nb; j++)
                        if (a[i].counterset == b[j].counterset &&
                            memcmp(&a[i].guid, &b[j].guid, sizeof(GUID)) == 0)
                                return &a[i];
        return NULL;
}

void pub_guid_text(const GUID *g, char buf[PUB_GUID_TEXT])
{
        snprintf(buf, PUB_GUID_TEXT, "{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}",
                 g->Data1, g->Data2, g->Data3, g->Data4[0], g->Data4[1], g->Data4[2],
                 g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
}
