/* SPDX-License-Identifier: MIT */
/*
 * The /proc and /sys parsers of the Linux providers (procfs.h).  Lines are
 * read with getline(3); a line that does not have the expected shape is
 * -EBADMSG, except in the files whose format grows over kernel versions
 * (meminfo, vmstat, stat), where unknown lines are skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"

#define CLEANUP_FREE __attribute__((cleanup(free_ptr)))

static void free_ptr(void *p)
{
        free(*(void **) p);
}

FILE *pv_fopen(const char *root, const char *rel)
{
        char path[PATH_MAX];

        if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int) sizeof(path)) {
                errno = ENAMETOOLONG;
                return NULL;
        }
        return fopen(path, "re");
}

/* Reads fd to its end (or until buf is full) and closes it. */
static int read_all_close(int fd, char *buf, size_t size)
{
        size_t len = 0;
        ssize_t n;

        /* /proc files come in one read when small, but may come in several. */
        while ((n = read(fd, buf + len, size - 1 - len)) > 0) {
                len += (size_t) n;
                if (len == size - 1)
                        break;
        }
        if (n < 0) {
                n = -errno;
                close(fd);
                return (int) n;
        }
        close(fd);
        if (len == size - 1)
                return -ENOBUFS;
        buf[len] = '\0';
        return (int) len;
}

int pv_read_small(const char *root, const char *rel, char *buf, size_t size)
{
        char path[PATH_MAX];
        int fd;

        if (!buf || size == 0)
                return -EINVAL;
        if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return read_all_close(fd, buf, size);
}

int pv_read_at(int dirfd, const char *name, char *buf, size_t size)
{
        ssize_t n;
        int fd;

        if (!name || !buf || size == 0)
                return -EINVAL;
        fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        /* One read: the files this is for are made whole by one show() (seq_file's
         * single_open) and handed out as much as fits, so a short read is the end
         * and a second read to see the end would cost another system call. */
        n = read(fd, buf, size - 1);
        if (n < 0)
                n = -errno;
        close(fd);
        if (n < 0)
                return (int) n;
        if ((size_t) n == size - 1)
                return -ENOBUFS;
        buf[n] = '\0';
        return (int) n;
}

int pv_read_s64(const char *root, const char *rel, int64_t *ret)
{
        char buf[64], *end;
        long long v;
        int r;

        r = pv_read_small(root, rel, buf, sizeof(buf));
        if (r < 0)
                return r;
        errno = 0;
        v = strtoll(buf, &end, 10);
        if (errno || end == buf || (*end && *end != '\n'))
                return -EBADMSG;
        *ret = v;
        return 0;
}

/* ---- /proc/stat ---- */

static int parse_cpu_times(const char *s, struct pv_cpu_times *t)
{
        uint64_t v[8] = { 0 };
        int n = sscanf(s, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                       " %" SCNu64 " %" SCNu64 " %" SCNu64,
                       &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);

        /* Kernels before 2.6.11 had no steal field; every kernel since has 4. */
        if (n < 4)
                return -EBADMSG;
        *t = (struct pv_cpu_times) { v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7] };
        return 0;
}

static int stat_add_cpu(struct pv_stat *s, unsigned id, const char *rest)
{
        struct pv_cpu_times t, *c;
        unsigned *ids;

        if (parse_cpu_times(rest, &t) < 0)
                return -EBADMSG;
        c = realloc(s->cpu, (s->n_cpu + 1) * sizeof(*c));
        if (!c)
                return -ENOMEM;
        s->cpu = c;
        ids = realloc(s->cpu_id, (s->n_cpu + 1) * sizeof(*ids));
        if (!ids)
                return -ENOMEM;
        s->cpu_id = ids;
        c[s->n_cpu] = t;
        ids[s->n_cpu++] = id;
        return 0;
}

static int stat_line(struct pv_stat *s, const char *line)
{
        static const struct {
                const char *key;
                size_t off;
        } scalars[] = {
                { "intr ", offsetof(struct pv_stat, intr) },
                { "ctxt ", offsetof(struct pv_stat, ctxt) },
                { "processes ", offsetof(struct pv_stat, processes) },
                { "procs_running ", offsetof(struct pv_stat, procs_running) },
                { "procs_blocked ", offsetof(struct pv_stat, procs_blocked) },
                { "btime ", offsetof(struct pv_stat, btime) },
        };
        unsigned id;
        int pos;

        if (strncmp(line, "cpu ", 4) == 0)
                return parse_cpu_times(line + 4, &s->total);
        if (sscanf(line, "cpu%u %n", &id, &pos) == 1 && pos > 3)
                return stat_add_cpu(s, id, line + pos);
        for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
                size_t len = strlen(scalars[i].key);

                if (strncmp(line, scalars[i].key, len) == 0)
                        return sscanf(line + len, "%" SCNu64,
                                      (uint64_t *) ((char *) s + scalars[i].off)) == 1
                                       ? 0 : -EBADMSG;
        }
        return 0;
}

int pv_stat_read(FILE *f, struct pv_stat *ret)
{
        struct pv_stat s = { 0 };
        CLEANUP_FREE char *line = NULL;
        size_t cap = 0;
        int r = 0;

        if (!f || !ret)
                return -EINVAL;
        while (getline(&line, &cap, f) > 0)
                if ((r = stat_line(&s, line)) < 0)
                        break;
        if (r == 0 && ferror(f))
                r = -EIO;
        if (r < 0) {
                pv_stat_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

void pv_stat_done(struct pv_stat *s)
{
        if (!s)
                return;
        free(s->cpu);
        free(s->cpu_id);
        s->cpu = NULL;
        s->cpu_id = NULL;
        s->n_cpu = 0;
}

int pv_stat_read_file(const char *root, struct pv_stat *ret)
{
        FILE *f = pv_fopen(root, "stat");
        int r;

        if (!f)
                return -errno;
        r = pv_stat_read(f, ret);
        fclose(f);
        return r;
}

/* ---- /proc/interrupts ---- */

/* The header "CPU0 CPU1 ...": each column's position in cpu_id, or -1. */
static int interrupt_columns(const char *header, const unsigned *cpu_id, size_t n,
                             int **ret_col, size_t *ret_ncol)
{
        size_t ncol = 0;
        int *col = NULL;
        unsigned id;
        int pos;

        while (sscanf(header, " CPU%u%n", &id, &pos) == 1) {
                int *c = realloc(col, (ncol + 1) * sizeof(*c));

                if (!c) {
                        free(col);
                        return -ENOMEM;
                }
                col = c;
                col[ncol] = -1;
                for (size_t k = 0; k < n; k++)
                        if (cpu_id[k] == id)
                                col[ncol] = (int) k;
                ncol++;
                header += pos;
        }
        *ret_col = col;
        *ret_ncol = ncol;
        return 0;
}

/* One "NAME: c0 c1 ... description" line; lines with fewer columns (ERR, MIS) count what they have. */
static void interrupt_line(const char *line, const int *col, size_t ncol, uint64_t *per_cpu)
{
        const char *p = strchr(line, ':');
        uint64_t v;
        int pos;

        if (!p)
                return;
        p++;
        for (size_t c = 0; c < ncol; c++) {
                if (sscanf(p, " %" SCNu64 "%n", &v, &pos) != 1)
                        return;
                if (col[c] >= 0)
                        per_cpu[col[c]] += v;
                p += pos;
        }
}

int pv_interrupts_read(FILE *f, const unsigned *cpu_id, size_t n, uint64_t *per_cpu)
{
        CLEANUP_FREE char *line = NULL;
        CLEANUP_FREE int *col = NULL;
        size_t cap = 0, ncol = 0;
        int r;

        if (!f || (n && (!cpu_id || !per_cpu)))
                return -EINVAL;
        if (getline(&line, &cap, f) <= 0)
                return -EBADMSG;
        r = interrupt_columns(line, cpu_id, n, &col, &ncol);
        if (r < 0)
                return r;
        if (ncol == 0)
                return -EBADMSG;
        memset(per_cpu, 0, n * sizeof(*per_cpu));
        while (getline(&line, &cap, f) > 0)
                interrupt_line(line, col, ncol, per_cpu);
        return ferror(f) ? -EIO : 0;
}

/* ---- key/value files ---- */

/* One line "KEY[:] VALUE [kB]", ended by a newline or the end of the text. */
static void kv_line(const char *line, const char *const *keys, size_t n, uint64_t *values,
                    uint64_t *found)
{
        size_t klen = strcspn(line, ": \t\n");
        const char *p;
        char *end;
        uint64_t v;

        for (size_t i = 0; i < n; i++) {
                if (strlen(keys[i]) != klen || strncmp(line, keys[i], klen) != 0)
                        continue;
                p = line + klen;
                p += strspn(p, ": \t");
                if (*p < '0' || *p > '9')
                        return;
                v = strtoull(p, &end, 10);
                end += strspn(end, " \t");
                if (end[0] == 'k' && end[1] == 'B' && strchr(" \t\n", end[2]))
                        v *= 1024;
                values[i] = v;
                *found |= UINT64_C(1) << i;
                return;
        }
}

int pv_kv_read(FILE *f, const char *const *keys, size_t n, uint64_t *values,
               uint64_t *ret_found)
{
        CLEANUP_FREE char *line = NULL;
        uint64_t found = 0;
        size_t cap = 0;

        if (!f || !keys || !values || n > 64)
                return -EINVAL;
        while (getline(&line, &cap, f) > 0)
                kv_line(line, keys, n, values, &found);
        if (ferror(f))
                return -EIO;
        if (ret_found)
                *ret_found = found;
        return 0;
}

int pv_kv_read_file(const char *root, const char *rel, const char *const *keys, size_t n,
                    uint64_t *values, uint64_t *ret_found)
{
        FILE *f = pv_fopen(root, rel);
        int r;

        if (!f)
                return -errno;
        r = pv_kv_read(f, keys, n, values, ret_found);
        fclose(f);
        return r;
}

int pv_kv_parse(const char *text, const char *const *keys, size_t n, uint64_t *values,
                uint64_t *ret_found)
{
        uint64_t found = 0;

        if (!text || !keys || !values || n > 64)
                return -EINVAL;
        for (const char *line = text; *line; ) {
                const char *nl = strchr(line, '\n');

                kv_line(line, keys, n, values, &found);
                if (!nl)
                        break;
                line = nl + 1;
        }
        if (ret_found)
                *ret_found = found;
        return 0;
}

/* ---- /proc/loadavg ---- */

int pv_loadavg_read(FILE *f, uint64_t *ret_running, uint64_t *ret_threads)
{
        uint64_t running, threads;

        if (!f || !ret_running || !ret_threads)
                return -EINVAL;
        if (fscanf(f, "%*s %*s %*s %" SCNu64 "/%" SCNu64, &running, &threads) != 2)
                return -EBADMSG;
        *ret_running = running;
        *ret_threads = threads;
        return 0;
}

/* ---- /proc/diskstats ---- */

int pv_diskstats_next(FILE *f, struct pv_disk *ret)
{
        CLEANUP_FREE char *line = NULL;
        struct pv_disk d = { 0 };
        size_t cap = 0;

        if (!f || !ret)
                return -EINVAL;
        if (getline(&line, &cap, f) <= 0)
                return ferror(f) ? -EIO : 0;
        /* 14 fields since 2.6; discard and flush fields (4.18, 5.5) follow and are not needed. */
        if (sscanf(line, "%u %u %63s %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                   " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                   " %" SCNu64 " %" SCNu64 " %" SCNu64,
                   &d.major, &d.minor, d.name, &d.reads, &d.reads_merged, &d.sectors_read,
                   &d.ms_reading, &d.writes, &d.writes_merged, &d.sectors_written,
                   &d.ms_writing, &d.in_flight, &d.ms_io, &d.ms_weighted) != 14)
                return -EBADMSG;
        *ret = d;
        return 1;
}

/* ---- /proc/net/dev ---- */

int pv_netdev_next(FILE *f, struct pv_netdev *ret)
{
        CLEANUP_FREE char *line = NULL;
        struct pv_netdev d = { 0 };
        size_t cap = 0, len;
        char *colon, *name;

        if (!f || !ret)
                return -EINVAL;
        do {
                if (getline(&line, &cap, f) <= 0)
                        return ferror(f) ? -EIO : 0;
                /* The header lines have '|' where an interface line has its ':'. */
                colon = strchr(line, ':');
        } while (!colon || strchr(line, '|'));
        *colon = '\0';
        name = line + strspn(line, " ");
        len = strlen(name);
        if (len == 0 || len >= sizeof(d.name))
                return -EBADMSG;
        memcpy(d.name, name, len + 1);
        if (sscanf(colon + 1, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                   " %*u %*u %*u %*u %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
                   &d.rx_bytes, &d.rx_packets, &d.rx_errs, &d.rx_drop,
                   &d.tx_bytes, &d.tx_packets, &d.tx_errs, &d.tx_drop) != 8)
                return -EBADMSG;
        *ret = d;
        return 1;
}

/* ---- /proc/self/mountinfo ---- */

/* Copies one space-separated field, decoding \ooo escapes; -ENAMETOOLONG if it does not fit. */
static int mount_field(const char **p, char *out, size_t size)
{
        const char *s = *p + strspn(*p, " ");
        size_t n = 0;

        while (*s && *s != ' ' && *s != '\n') {
                char c = *s++;

                if (c == '\\' && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' && s[1] <= '7' &&
                    s[2] >= '0' && s[2] <= '7') {
                        c = (char) ((s[0] - '0') << 6 | (s[1] - '0') << 3 | (s[2] - '0'));
                        s += 3;
                }
                if (n + 1 >= size)
                        return -ENAMETOOLONG;
                out[n++] = c;
        }
        out[n] = '\0';
        *p = s;
        return n > 0 ? 0 : -EBADMSG;
}

static int mount_parse(const char *line, struct pv_mount *m)
{
        char skip[512];
        int pos = 0, r;

        if (sscanf(line, "%*u %*u %u:%u%n", &m->major, &m->minor, &pos) != 2 || pos == 0)
                return -EBADMSG;
        line += pos;
        if ((r = mount_field(&line, m->root, sizeof(m->root))) < 0 ||
            (r = mount_field(&line, m->point, sizeof(m->point))) < 0)
                return r;
        /* Options, then optional fields up to the "-" separator. */
        do {
                if ((r = mount_field(&line, skip, sizeof(skip))) < 0)
                        return r;
        } while (strcmp(skip, "-") != 0);
        if ((r = mount_field(&line, m->fstype, sizeof(m->fstype))) < 0 ||
            (r = mount_field(&line, m->source, sizeof(m->source))) < 0)
                return r;
        return 0;
}

int pv_mountinfo_next(FILE *f, struct pv_mount *ret)
{
        CLEANUP_FREE char *line = NULL;
        struct pv_mount m = { 0 };
        size_t cap = 0;
        int r;

        if (!f || !ret)
                return -EINVAL;
        if (getline(&line, &cap, f) <= 0)
                return ferror(f) ? -EIO : 0;
        r = mount_parse(line, &m);
        if (r < 0)
                return r;
        *ret = m;
        return 1;
}

bool pv_fs_is_pseudo(const char *fstype)
{
        static const char *const pseudo[] = {
                "autofs", "binfmt_misc", "bpf", "cgroup", "cgroup2", "configfs", "debugfs",
                "devpts", "devtmpfs", "efivarfs", "fusectl", "hugetlbfs", "mqueue", "nsfs",
                "proc", "pstore", "ramfs", "rpc_pipefs", "securityfs", "selinuxfs", "sysfs",
                "tmpfs", "tracefs", "fuse.gvfsd-fuse", "fuse.portal",
        };

        if (!fstype)
                return true;
        for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
                if (strcmp(fstype, pseudo[i]) == 0)
                        return true;
        return false;
}

/* ---- /proc/PID/stat ---- */

/* Field k (proc(5)'s numbering: 4 is the ppid) of the fields after the comm. */
static void pid_stat_field(struct pv_pid_stat *s, unsigned k, uint64_t v)
{
        switch (k) {
        case 4: s->ppid = (uint32_t) v; break;
        case 14: s->utime = v; break;
        case 15: s->stime = v; break;
        case 20: s->num_threads = v; break;
        case 22: s->starttime = v; break;
        case 23: s->vsize = v; break;
        case 24: s->rss = v; break;
        }
}

/* The fields 3 (state) to 24 (rss) after the comm; by hand: sscanf is most of the cost. */
static int pid_stat_fields(const char *p, struct pv_pid_stat *s)
{
        static const uint32_t wanted = 1u << 4 | 1u << 14 | 1u << 15 | 1u << 20 | 1u << 22 |
                                       1u << 23 | 1u << 24;
        char *end;

        for (unsigned k = 3; k <= 24; k++) {
                p += strspn(p, " ");
                if (*p == '\0' || *p == '\n')
                        return -EBADMSG;
                if (k == 3)
                        s->state = *p;
                else if (wanted & 1u << k) {
                        if (*p < '0' || *p > '9')
                                return -EBADMSG;
                        pid_stat_field(s, k, strtoull(p, &end, 10));
                }
                p += strcspn(p, " \n");
        }
        return 0;
}

int pv_pid_stat_parse(const char *line, struct pv_pid_stat *ret)
{
        struct pv_pid_stat s = { 0 };
        const char *open, *close;
        char *end;
        size_t len;

        if (!line || !ret)
                return -EINVAL;
        open = strchr(line, '(');
        close = strrchr(line, ')');
        if (!open || !close || close < open || *line < '0' || *line > '9')
                return -EBADMSG;
        s.pid = (uint32_t) strtoul(line, &end, 10);
        len = (size_t) (close - open - 1);
        if (len >= sizeof(s.comm))
                len = sizeof(s.comm) - 1;
        memcpy(s.comm, open + 1, len);
        if (pid_stat_fields(close + 1, &s) < 0)
                return -EBADMSG;
        *ret = s;
        return 0;
}

int pv_pid_statm_parse(const char *text, struct pv_pid_statm *ret)
{
        uint64_t v[3];
        const char *p = text;
        char *end;

        if (!text || !ret)
                return -EINVAL;
        /* size resident shared text lib data dt, in pages. */
        for (int i = 0; i < 3; i++) {
                p += strspn(p, " ");
                if (*p < '0' || *p > '9')
                        return -EBADMSG;
                v[i] = strtoull(p, &end, 10);
                p = end;
        }
        *ret = (struct pv_pid_statm) { .size = v[0], .resident = v[1], .shared = v[2] };
        return 0;
}

/* ---- directories ---- */

/* Calls fn on each entry of the directory fd from its start, until fn returns non-0. */
static int walk_entries(int fd, int (*fn)(const struct dirent64 *e, void *userdata),
                        void *userdata)
{
        /* Small: a walk that stops early costs the entries it saw, and each PID the
         * kernel lists costs a lookup. */
        char buf[1024] __attribute__((aligned(8)));
        ssize_t len;

        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        while ((len = getdents64(fd, buf, sizeof(buf))) > 0)
                for (ssize_t off = 0; off < len; ) {
                        const struct dirent64 *e = (const struct dirent64 *) (buf + off);

                        if (fn(e, userdata))
                                return 0;
                        off += e->d_reclen;
                }
        return len < 0 ? -errno : 0;
}

/* ---- /proc/PID/fd ---- */

static int count_fd(const struct dirent64 *e, void *userdata)
{
        *(uint64_t *) userdata += e->d_name[0] != '.';
        return 0;
}

/* The entries of fd/ but "." and "..". */
static int count_listing(int pid_dirfd, uint64_t *ret)
{
        uint64_t n = 0;
        int fd, r;

        fd = openat(pid_dirfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = walk_entries(fd, count_fd, &n);
        close(fd);
        if (r < 0)
                return r;
        *ret = n;
        return 0;
}

int pv_pid_count_fds(int pid_dirfd, bool by_size, uint64_t *ret)
{
        struct stat st;

        if (!ret)
                return -EINVAL;
        if (!by_size)
                return count_listing(pid_dirfd, ret);
        if (fstatat(pid_dirfd, "fd", &st, 0) < 0)
                return -errno;
        *ret = (uint64_t) st.st_size;
        return 0;
}

bool pv_fds_by_size(int proc_dirfd)
{
        struct stat st;

        /* This process holds proc_dirfd open: a kernel that counts says at least 1. */
        return fstatat(proc_dirfd, "self/fd", &st, 0) == 0 && st.st_size > 0;
}

/* ---- the processes of /proc ---- */

static bool is_pid(const char *name)
{
        return name[0] >= '0' && name[0] <= '9';
}

static int count_pid(const struct dirent64 *e, void *userdata)
{
        *(uint64_t *) userdata += is_pid(e->d_name);
        return 0;
}

/* /proc lists its own directories first, then the processes: stops at the first PID. */
static int count_static_dir(const struct dirent64 *e, void *userdata)
{
        if (is_pid(e->d_name))
                return 1;
        *(uint64_t *) userdata += e->d_type == DT_DIR;
        return 0;
}

int pv_proc_count_listed(int proc_dirfd, uint64_t *ret)
{
        uint64_t n = 0;
        int r;

        if (!ret)
                return -EINVAL;
        if ((r = walk_entries(proc_dirfd, count_pid, &n)) < 0)
                return r;
        *ret = n;
        return 0;
}

int pv_proc_count_by_links(int proc_dirfd, uint64_t *ret)
{
        uint64_t dirs = 0;
        struct stat st;
        int r;

        if (!ret)
                return -EINVAL;
        if ((r = walk_entries(proc_dirfd, count_static_dir, &dirs)) < 0)
                return r;
        if (fstat(proc_dirfd, &st) < 0)
                return -errno;
        if ((uint64_t) st.st_nlink < dirs)
                return -EBADMSG;
        *ret = (uint64_t) st.st_nlink - dirs;
        return 0;
}

bool pv_proc_links_count(int proc_dirfd)
{
        uint64_t listed, before, after;

        /* Processes come and go meanwhile: a few tries for a quiet moment. */
        for (int i = 0; i < 5; i++)
                if (pv_proc_count_by_links(proc_dirfd, &before) == 0 &&
                    pv_proc_count_listed(proc_dirfd, &listed) == 0 &&
                    pv_proc_count_by_links(proc_dirfd, &after) == 0 &&
                    before == after)
                        return listed == before;
        return false;
}

/* ---- shared by the CPU providers ---- */

void pv_cpu_times_add(struct pv_cpu_times *sum, const struct pv_cpu_times *t)
{
        sum->user += t->user;
        sum->nice += t->nice;
        sum->system += t->system;
        sum->idle += t->idle;
        sum->iowait += t->iowait;
        sum->irq += t->irq;
        sum->softirq += t->softirq;
        sum->steal += t->steal;
}

void pv_interrupts_read_file(const char *root, const unsigned *cpu_id, size_t n,
                             uint64_t *per_cpu)
{
        FILE *f = pv_fopen(root, "interrupts");

        if (!f || pv_interrupts_read(f, cpu_id, n, per_cpu) < 0)
                for (size_t i = 0; i < n; i++)
                        per_cpu[i] = 0;
        if (f)
                fclose(f);
}

int pv_dir_walk(int fd, int (*fn)(const struct dirent64 *e, void *userdata), void *userdata)
{
        return walk_entries(fd, fn, userdata);
}

int pv_escaped_field(const char **p, char *out, size_t size)
{
        return mount_field(p, out, size);
}

uint64_t pv_tick_100ns(void)
{
        long hz = sysconf(_SC_CLK_TCK);

        return hz > 0 ? (uint64_t) (10000000 / hz) : 100000;
}
