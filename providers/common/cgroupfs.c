/* SPDX-License-Identifier: MIT */
/* The cgroup v2 hierarchy (cgroupfs.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "procfs.h"

int pv_cgroup2_mount(FILE *mountinfo, char *buf, size_t size)
{
        struct pv_mount m;
        int r;

        if (!mountinfo || !buf || size == 0)
                return -EINVAL;
        /* A line too long or malformed is another mount's: it is skipped. */
        while ((r = pv_mountinfo_next(mountinfo, &m)) != 0) {
                if (r == -EIO)
                        return r;
                if (r < 0 || strcmp(m.fstype, "cgroup2") != 0)
                        continue;
                if (strlen(m.point) >= size)
                        return -ENAMETOOLONG;
                strcpy(buf, m.point);
                return 0;
        }
        return -ENOENT;
}

/* A decimal number of at most 19 digits (no overflow), then only white space. */
static int parse_number(const char *p, uint64_t *ret)
{
        uint64_t v = 0;
        int n = 0;

        p += strspn(p, " \t");
        for (; *p >= '0' && *p <= '9'; p++, n++) {
                if (n == 19)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*p - '0');
        }
        if (n == 0 || p[strspn(p, " \t\n")] != '\0')
                return -EINVAL;
        *ret = v;
        return 0;
}

int pv_cgroup_limit_parse(const char *text, uint64_t *ret)
{
        if (!text || !ret)
                return -EINVAL;
        if (strcmp(text, "max\n") == 0 || strcmp(text, "max") == 0) {
                *ret = PV_CG_NO_LIMIT;
                return 0;
        }
        return parse_number(text, ret);
}

/* The "key=N" fields of one io.stat line, added into c; unknown keys are skipped. */
static int iostat_line(const char *p, struct pv_cgroup *c)
{
        static const char *const keys[] = { "rbytes=", "wbytes=", "rios=", "wios=" };
        uint64_t *sums[] = { &c->rbytes, &c->wbytes, &c->rios, &c->wios };
        unsigned maj, min;
        int pos = 0;

        if (sscanf(p, "%u:%u%n", &maj, &min, &pos) != 2 || pos == 0 || !strchr(" \t\n", p[pos]))
                return -EINVAL;
        for (p += pos; *p && *p != '\n'; p += strcspn(p, " \t\n"), p += strspn(p, " \t")) {
                for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                        size_t len = strlen(keys[i]);
                        char *end;

                        if (strncmp(p, keys[i], len) != 0)
                                continue;
                        if (p[len] < '0' || p[len] > '9')
                                return -EINVAL;
                        *sums[i] += strtoull(p + len, &end, 10);
                        p = end;
                        break;
                }
        }
        return 0;
}

int pv_cgroup_iostat_parse(const char *text, struct pv_cgroup *ret)
{
        struct pv_cgroup c = { 0 };

        if (!text || !ret)
                return -EINVAL;
        /* An empty io.stat is a group that did no I/O yet: all 0.  A bad line
         * is left out, the other devices still count. */
        for (const char *line = text; *line; ) {
                const char *nl = strchr(line, '\n');
                struct pv_cgroup one = { 0 };

                if (iostat_line(line, &one) == 0) {
                        c.rbytes += one.rbytes;
                        c.wbytes += one.wbytes;
                        c.rios += one.rios;
                        c.wios += one.wios;
                }
                if (!nl)
                        break;
                line = nl + 1;
        }
        ret->rbytes = c.rbytes;
        ret->wbytes = c.wbytes;
        ret->rios = c.rios;
        ret->wios = c.wios;
        return 0;
}

/* ---- one group's files ---- */

enum { CPU_USAGE, CPU_USER, CPU_SYSTEM, CPU_PERIODS, CPU_THROTTLED, CPU_THROTTLED_USEC, N_CPU };
static const char *const cpu_keys[N_CPU] = {
        "usage_usec", "user_usec", "system_usec", "nr_periods", "nr_throttled", "throttled_usec",
};
static const char *const event_keys[PV_CG_N_EV] = { "low", "high", "max", "oom", "oom_kill" };

/* The small files of a group fit: io.stat is one line per device that did I/O. */
#define FILE_MAX        16384

static void read_cpu(int dirfd, char *buf, struct pv_cgroup *c)
{
        uint64_t v[N_CPU] = { 0 }, found = 0;

        if (pv_read_at(dirfd, "cpu.stat", buf, FILE_MAX) < 0 ||
            pv_kv_parse(buf, cpu_keys, N_CPU, v, &found) < 0)
                return;
        c->usage_usec = v[CPU_USAGE];
        c->user_usec = v[CPU_USER];
        c->system_usec = v[CPU_SYSTEM];
        c->nr_periods = v[CPU_PERIODS];
        c->nr_throttled = v[CPU_THROTTLED];
        c->throttled_usec = v[CPU_THROTTLED_USEC];
        if ((found & 7) == 7)
                c->have |= PV_CG_CPU;
        if ((found & 070) == 070)
                c->have |= PV_CG_THROTTLE;
}

/* A file of one number (or "max" when limit), into *v with bit set in c->have. */
static void read_value(int dirfd, const char *name, bool limit, char *buf, uint64_t *v,
                       unsigned bit, struct pv_cgroup *c)
{
        uint64_t x;

        if (pv_read_at(dirfd, name, buf, FILE_MAX) < 0 ||
            (limit ? pv_cgroup_limit_parse(buf, &x) : parse_number(buf, &x)) < 0)
                return;
        *v = x;
        c->have |= bit;
}

static void read_psi(int dirfd, const char *name, char *buf, struct pv_psi *p, unsigned bit,
                     struct pv_cgroup *c)
{
        if (pv_read_at(dirfd, name, buf, FILE_MAX) >= 0 && pv_psi_parse(buf, p) == 0)
                c->have |= bit;
}

int pv_cgroup_read(int dirfd, struct pv_cgroup *ret)
{
        struct pv_cgroup c = { 0 };
        uint64_t found = 0;
        char *buf;

        if (dirfd < 0 || !ret)
                return -EINVAL;
        buf = malloc(FILE_MAX);
        if (!buf)
                return -ENOMEM;
        read_cpu(dirfd, buf, &c);
        read_value(dirfd, "memory.current", false, buf, &c.memory_current, PV_CG_MEMORY, &c);
        read_value(dirfd, "memory.peak", false, buf, &c.memory_peak, PV_CG_MEMORY_PEAK, &c);
        read_value(dirfd, "memory.max", true, buf, &c.memory_max, PV_CG_MEMORY_MAX, &c);
        if (pv_read_at(dirfd, "memory.events", buf, FILE_MAX) >= 0 &&
            pv_kv_parse(buf, event_keys, PV_CG_N_EV, c.events, &found) == 0 && found)
                c.have |= PV_CG_MEMORY_EVENTS;
        if (pv_read_at(dirfd, "io.stat", buf, FILE_MAX) >= 0 &&
            pv_cgroup_iostat_parse(buf, &c) == 0)
                c.have |= PV_CG_IO;
        read_value(dirfd, "pids.current", false, buf, &c.pids_current, PV_CG_PIDS, &c);
        read_value(dirfd, "pids.max", true, buf, &c.pids_max, PV_CG_PIDS_MAX, &c);
        read_psi(dirfd, "cpu.pressure", buf, &c.cpu, PV_CG_CPU_PRESSURE, &c);
        read_psi(dirfd, "memory.pressure", buf, &c.memory, PV_CG_MEMORY_PRESSURE, &c);
        read_psi(dirfd, "io.pressure", buf, &c.io, PV_CG_IO_PRESSURE, &c);
        free(buf);
        *ret = c;
        return 0;
}

/* ---- the walk ---- */

struct walk {
        struct pv_cgroup_walk *w;
        pv_cgroup_fn fn;
        void *userdata;
        char path[PATH_MAX];            /* of the group visited, relative; "" for the root */
};

static int visit(struct walk *k, int fd, size_t len, unsigned depth, uint64_t ino);

/* The subgroup name of the group listed by d (at depth, path of length len). */
static int visit_child(struct walk *k, DIR *d, const char *name, size_t len, unsigned depth,
                       uint64_t ino)
{
        size_t n = strlen(name) + (len ? 1 : 0);
        int fd;

        /* Its files are not directories, so O_DIRECTORY sorts them out
         * where the file system gives no d_type. */
        fd = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return 0;               /* vanished meanwhile, or not a group */
        if (depth == k->w->max_depth || k->w->n_groups >= k->w->max_groups ||
            len + n >= sizeof(k->path)) {
                k->w->truncated = true;
                close(fd);
                return 0;
        }
        if (len)
                k->path[len] = '/';
        strcpy(k->path + len + (len ? 1 : 0), name);
        k->w->n_groups++;
        return visit(k, fd, len + n, depth + 1, ino);
}

/* Calls fn for the group open as fd (owned here) and goes through its subgroups. */
static int visit(struct walk *k, int fd, size_t len, unsigned depth, uint64_t ino)
{
        struct dirent *e;
        DIR *d;
        int r;

        r = k->fn(len ? k->path : "/", fd, ino, k->userdata);
        if (r < 0) {
                close(fd);
                return r;
        }
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return 0;
        }
        while (r >= 0 && (e = readdir(d))) {
                if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
                        continue;
                r = visit_child(k, d, e->d_name, len, depth, e->d_ino);
                k->path[len] = '\0';
        }
        closedir(d);
        return r < 0 ? r : 0;
}

int pv_cgroup_walk(int root_fd, struct pv_cgroup_walk *w, pv_cgroup_fn fn, void *userdata)
{
        struct walk *k;
        struct stat st;
        int fd, r;

        if (root_fd < 0 || !w || !fn)
                return -EINVAL;
        w->n_groups = 0;
        w->truncated = false;
        if (w->max_groups == 0)
                return 0;
        /* The walk reads the root's listing: a descriptor of its own. */
        fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = -errno;
                if (fd >= 0)
                        close(fd);
                return r;
        }
        k = calloc(1, sizeof(*k));
        if (!k) {
                close(fd);
                return -ENOMEM;
        }
        *k = (struct walk) { .w = w, .fn = fn, .userdata = userdata };
        w->n_groups = 1;
        r = visit(k, fd, 0, 0, st.st_ino);
        free(k);
        return r;
}
