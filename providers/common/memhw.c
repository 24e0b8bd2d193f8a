/* SPDX-License-Identifier: MIT */
/*
 * The memory-detail and hardware parsers (memhw.h).  sysfs files hold one
 * value each; a file that is missing or unreadable leaves its field at the
 * documented default, except the one value a record exists for (a zone's
 * temperature, a node's meminfo), whose error is the record's.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "memhw.h"
#include "procfs.h"

#define CLEANUP_FREE __attribute__((cleanup(free_ptr)))
#define CLEANUP_DIR __attribute__((cleanup(close_dir)))

static void free_ptr(void *p)
{
        free(*(void **) p);
}

static void close_dir(DIR **d)
{
        if (*d)
                closedir(*d);
}

/* Room in *v (elements of size bytes, *cap of them) for element n. */
static int grow(void *v, size_t *cap, size_t n, size_t size)
{
        size_t c = *cap ? 2 * *cap : 16;
        void *nv;

        if (n < *cap)
                return 0;
        if (!(nv = realloc(*(void **) v, c * size)))
                return -ENOMEM;
        *(void **) v = nv;
        *cap = c;
        return 0;
}

static const char *root_from(const char *var, const char *dflt)
{
        const char *v = getenv(var);

        return v && v[0] == '/' ? v : dflt;
}

const char *pv_procfs(void)
{
        return root_from("PERFLIB_PROCFS", "/proc");
}

const char *pv_sysfs(void)
{
        return root_from("PERFLIB_SYSFS", "/sys");
}

static int cmp_unsigned(const void *a, const void *b)
{
        unsigned x = *(const unsigned *) a, y = *(const unsigned *) b;

        return x < y ? -1 : x > y;
}

/* N when name is prefix N suffix with N decimal digits only; -1 otherwise. */
static long numbered(const char *name, const char *prefix, const char *suffix)
{
        size_t lp = strlen(prefix);
        const char *p = name + lp, *q = p;
        unsigned long v;

        if (strncmp(name, prefix, lp) != 0)
                return -1;
        while (isdigit((unsigned char) *q))
                q++;
        if (q == p || q - p > 9 || strcmp(q, suffix) != 0)
                return -1;
        v = strtoul(p, NULL, 10);
        return (long) v;
}

int pv_list_numbered(const char *root, const char *rel, const char *prefix,
                     const char *suffix, unsigned **ret, size_t *ret_n)
{
        CLEANUP_FREE unsigned *v = NULL;
        CLEANUP_DIR DIR *d = NULL;
        char path[PATH_MAX];
        size_t n = 0, cap = 0;
        struct dirent *e;

        if (!root || !rel || !prefix || !suffix || !ret || !ret_n)
                return -EINVAL;
        if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        if (!(d = opendir(path)))
                return -errno;
        while ((e = readdir(d))) {
                long k = numbered(e->d_name, prefix, suffix);

                if (k < 0)
                        continue;
                if (grow(&v, &cap, n, sizeof(*v)) < 0)
                        return -ENOMEM;
                v[n++] = (unsigned) k;
        }
        if (n)
                qsort(v, n, sizeof(*v), cmp_unsigned);
        *ret = n ? v : NULL;
        if (n)
                v = NULL;
        *ret_n = n;
        return 0;
}

/* ---- /proc/swaps ---- */

static int swap_parse(const char *line, struct pv_swap *s)
{
        uint64_t size, used;
        int r;

        if ((r = pv_escaped_field(&line, s->name, sizeof(s->name))) < 0)
                return r;
        if (sscanf(line, "%15s %" SCNu64 " %" SCNu64 " %d", s->type, &size, &used,
                   &s->priority) != 4)
                return -EBADMSG;
        if (size > UINT64_MAX / 1024 || used > size)
                return -EBADMSG;
        s->size = size * 1024;
        s->used = used * 1024;
        return 0;
}

int pv_swaps_next(FILE *f, struct pv_swap *ret)
{
        CLEANUP_FREE char *line = NULL;
        struct pv_swap s = { 0 };
        size_t cap = 0;
        int r;

        if (!f || !ret)
                return -EINVAL;
        do {
                if (getline(&line, &cap, f) <= 0)
                        return ferror(f) ? -EIO : 0;
        } while (strncmp(line, "Filename", 8) == 0 || line[strspn(line, " \t")] == '\n');
        if ((r = swap_parse(line, &s)) < 0)
                return r;
        *ret = s;
        return 1;
}

/* ---- NUMA nodes ---- */

int pv_node_meminfo(const char *root, unsigned node, const char *const *keys, size_t n,
                    uint64_t *values, uint64_t *ret_found)
{
        CLEANUP_FREE char *text = NULL;
        char rel[96], *out;
        int len;

        if (!root || !keys || !values)
                return -EINVAL;
        /* Some 2 KiB today; room for the kernels to come. */
        if (!(text = malloc(16384)))
                return -ENOMEM;
        snprintf(rel, sizeof(rel), "devices/system/node/node%u/meminfo", node);
        if ((len = pv_read_small(root, rel, text, 16384)) < 0)
                return len;
        /* "Node N KEY: ..." to "KEY: ...", in place: the text only shrinks. */
        out = text;
        for (const char *line = text; *line; ) {
                const char *nl = strchr(line, '\n'), *p = line;
                size_t k;
                unsigned id;
                int pos = 0;

                if (sscanf(line, "Node %u %n", &id, &pos) == 1 && pos > 0 && id == node)
                        p = line + pos;
                k = nl ? (size_t) (nl + 1 - p) : strlen(p);
                memmove(out, p, k);
                out += k;
                if (!nl)
                        break;
                line = nl + 1;
        }
        *out = '\0';
        return pv_kv_parse(text, keys, n, values, ret_found);
}

/* ---- small sysfs files ---- */

/* A one-line text file, its newline dropped. */
static int read_line(const char *root, const char *rel, char *buf, size_t size)
{
        int r = pv_read_small(root, rel, buf, size);

        if (r < 0)
                return r;
        buf[strcspn(buf, "\n")] = '\0';
        return buf[0] ? 0 : -EBADMSG;
}

/* A file of one non-negative number; dflt when it is missing or unreadable. */
static uint64_t read_u64_or(const char *root, const char *rel, uint64_t dflt)
{
        int64_t v;

        return pv_read_s64(root, rel, &v) == 0 && v >= 0 ? (uint64_t) v : dflt;
}

/* ---- thermal zones ---- */

/* Fans cool by running: their state is no limit on anything. */
static bool cdev_is_passive(const char *root, const char *zone, unsigned k)
{
        char rel[128], type[64];

        snprintf(rel, sizeof(rel), "%s/cdev%u/type", zone, k);
        if (read_line(root, rel, type, sizeof(type)) < 0)
                return true;
        for (char *c = type; *c; c++)
                *c = (char) tolower((unsigned char) *c);
        return !strstr(type, "fan");
}

static void zone_cooling(const char *root, const char *zone, struct pv_thermal_zone *z)
{
        CLEANUP_FREE unsigned *cdev = NULL;
        size_t n = 0;
        char rel[128];

        if (pv_list_numbered(root, zone, "cdev", "", &cdev, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                uint64_t cur, max;

                if (!cdev_is_passive(root, zone, cdev[i]))
                        continue;
                snprintf(rel, sizeof(rel), "%s/cdev%u/cur_state", zone, cdev[i]);
                cur = read_u64_or(root, rel, 0);
                snprintf(rel, sizeof(rel), "%s/cdev%u/max_state", zone, cdev[i]);
                max = read_u64_or(root, rel, 0);
                if (max == 0 || cur == 0)
                        continue;
                z->cooling = true;
                cur = cur < max ? cur : max;
                if (cur * 100 / max > z->cooling_pct)
                        z->cooling_pct = (unsigned) (cur * 100 / max);
        }
}

int pv_thermal_zone_read(const char *root, unsigned zone, struct pv_thermal_zone *ret)
{
        struct pv_thermal_zone z = { 0 };
        char dir[64], rel[96];
        int r;

        if (!root || !ret)
                return -EINVAL;
        snprintf(dir, sizeof(dir), "class/thermal/thermal_zone%u", zone);
        snprintf(rel, sizeof(rel), "%s/type", dir);
        if ((r = read_line(root, rel, z.type, sizeof(z.type))) < 0)
                return r;
        snprintf(rel, sizeof(rel), "%s/temp", dir);
        if ((r = pv_read_s64(root, rel, &z.millicelsius)) < 0)
                return r;
        zone_cooling(root, dir, &z);
        *ret = z;
        return 0;
}

uint32_t pv_tenths_kelvin(int64_t millicelsius)
{
        int64_t milli;

        if (millicelsius < -273200 || millicelsius > INT32_MAX)
                return 0;
        milli = millicelsius + 273200;
        return (uint32_t) ((milli + 50) / 100);
}

/* ---- hwmon ---- */

int pv_hwmon_temp_read(const char *root, unsigned chip, unsigned k, struct pv_hwmon_temp *ret)
{
        struct pv_hwmon_temp t = { 0 };
        char rel[96];
        int r;

        if (!root || !ret)
                return -EINVAL;
        snprintf(rel, sizeof(rel), "class/hwmon/hwmon%u/temp%u_input", chip, k);
        if ((r = pv_read_s64(root, rel, &t.millicelsius)) < 0)
                return r;
        snprintf(rel, sizeof(rel), "class/hwmon/hwmon%u/name", chip);
        if (read_line(root, rel, t.chip, sizeof(t.chip)) < 0)
                snprintf(t.chip, sizeof(t.chip), "hwmon%u", chip);
        snprintf(rel, sizeof(rel), "class/hwmon/hwmon%u/temp%u_label", chip, k);
        if (read_line(root, rel, t.label, sizeof(t.label)) < 0)
                snprintf(t.label, sizeof(t.label), "temp%u", k);
        *ret = t;
        return 0;
}

/* ---- RAPL ---- */

static bool is_rapl_dir(const char *name)
{
        return strncmp(name, "intel-rapl:", 11) == 0 || strncmp(name, "intel-rapl-mmio:", 16) == 0;
}

static int rapl_name(const char *root, const char *dir, char *out, size_t size)
{
        char rel[128], parent[64], pname[64], own[64];
        const char *last = strrchr(dir, ':'), *first = strchr(dir, ':');
        int r;

        snprintf(rel, sizeof(rel), "class/powercap/%s/name", dir);
        if ((r = read_line(root, rel, own, sizeof(own))) < 0)
                return r;
        if (last == first) {
                snprintf(out, size, "%s", own);
                return 0;
        }
        /* A subzone (intel-rapl:0:1): under its package's name. */
        snprintf(parent, sizeof(parent), "%.*s", (int) (last - dir), dir);
        snprintf(rel, sizeof(rel), "class/powercap/%s/name", parent);
        if (read_line(root, rel, pname, sizeof(pname)) < 0)
                snprintf(pname, sizeof(pname), "%s", parent);
        snprintf(out, size, "%s/%s", pname, own);
        return 0;
}

static void rapl_values(const char *root, struct pv_rapl_zone *z)
{
        char rel[128];
        int64_t v;

        snprintf(rel, sizeof(rel), "class/powercap/%s/energy_uj", z->dir);
        z->has_energy = pv_read_s64(root, rel, &v) == 0 && v >= 0;
        z->energy_uj = z->has_energy ? (uint64_t) v : 0;
        snprintf(rel, sizeof(rel), "class/powercap/%s/max_energy_range_uj", z->dir);
        z->max_energy_uj = read_u64_or(root, rel, 0);
        /* A limit the zone does not enforce is no budget. */
        snprintf(rel, sizeof(rel), "class/powercap/%s/enabled", z->dir);
        if (read_u64_or(root, rel, 1) == 0)
                return;
        snprintf(rel, sizeof(rel), "class/powercap/%s/constraint_0_power_limit_uw", z->dir);
        z->limit_uw = read_u64_or(root, rel, 0);
}

static int cmp_rapl(const void *a, const void *b)
{
        return strverscmp(((const struct pv_rapl_zone *) a)->dir,
                          ((const struct pv_rapl_zone *) b)->dir);
}

int pv_rapl_zones(const char *root, struct pv_rapl_zone **ret, size_t *ret_n)
{
        CLEANUP_FREE struct pv_rapl_zone *v = NULL;
        CLEANUP_DIR DIR *d = NULL;
        char path[PATH_MAX];
        size_t n = 0, cap = 0;
        struct dirent *e;

        if (!root || !ret || !ret_n)
                return -EINVAL;
        if (snprintf(path, sizeof(path), "%s/class/powercap", root) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        if (!(d = opendir(path)))
                return -errno;
        while ((e = readdir(d))) {
                struct pv_rapl_zone z = { 0 };

                if (!is_rapl_dir(e->d_name) || strlen(e->d_name) >= sizeof(z.dir))
                        continue;
                snprintf(z.dir, sizeof(z.dir), "%s", e->d_name);
                if (rapl_name(root, z.dir, z.name, sizeof(z.name)) < 0)
                        continue;
                rapl_values(root, &z);
                if (grow(&v, &cap, n, sizeof(*v)) < 0)
                        return -ENOMEM;
                v[n++] = z;
        }
        if (n)
                qsort(v, n, sizeof(*v), cmp_rapl);
        *ret = v;
        v = NULL;
        *ret_n = n;
        return 0;
}

uint64_t pv_energy_delta(uint64_t prev, uint64_t cur, uint64_t max)
{
        if (cur >= prev)
                return cur - prev;
        if (max < prev)
                return 0;
        return max - prev + cur;
}
