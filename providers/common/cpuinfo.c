/* SPDX-License-Identifier: MIT */
/* Where the CPUs sit and how fast they run (cpuinfo.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpuinfo.h"
#include "procfs.h"

/* A CPU number of a list: decimal, below INT_MAX. */
static int list_number(const char **p, unsigned *ret)
{
        unsigned long v;
        char *end;

        if (!isdigit((unsigned char) **p))
                return -EBADMSG;
        errno = 0;
        v = strtoul(*p, &end, 10);
        if (errno || v > INT_MAX)
                return -EBADMSG;
        *p = end;
        *ret = (unsigned) v;
        return 0;
}

int pv_cpulist_parse(const char *text, int (*fn)(unsigned cpu, void *userdata),
                     void *userdata)
{
        const char *p = text;
        unsigned lo, hi;

        if (!text || !fn)
                return -EINVAL;
        /* A node without CPUs (memory only) lists none: an empty line. */
        while (*p && !isspace((unsigned char) *p)) {
                if (list_number(&p, &lo) < 0)
                        return -EBADMSG;
                hi = lo;
                if (*p == '-' && (++p, list_number(&p, &hi) < 0 || hi < lo))
                        return -EBADMSG;
                if (*p == ',')
                        p++;
                else if (*p && !isspace((unsigned char) *p))
                        return -EBADMSG;
                for (unsigned c = lo; c <= hi; c++)
                        if (fn(c, userdata))
                                return 0;
        }
        return 0;
}

struct node_fill {
        const unsigned *cpu_id;
        size_t n;
        unsigned *node;
        unsigned this_node;
};

static int mark_cpu(unsigned cpu, void *userdata)
{
        struct node_fill *f = userdata;

        for (size_t k = 0; k < f->n; k++)
                if (f->cpu_id[k] == cpu)
                        f->node[k] = f->this_node;
        return 0;
}

/* "nodeN" and nothing else (not "node0x", not "power"). */
static bool node_dir(const char *name, unsigned *ret)
{
        const char *p = name + 4;

        return strncmp(name, "node", 4) == 0 && list_number(&p, ret) == 0 && *p == '\0';
}

int pv_cpu_nodes(const char *sysfsroot, const unsigned *cpu_id, size_t n, unsigned *node)
{
        struct node_fill f = { .cpu_id = cpu_id, .n = n, .node = node };
        char path[PATH_MAX], rel[320], list[4096];
        struct dirent *e;
        DIR *d;

        if (!sysfsroot || (n && (!cpu_id || !node)))
                return -EINVAL;
        for (size_t k = 0; k < n; k++)
                node[k] = 0;
        if (snprintf(path, sizeof(path), "%s/devices/system/node", sysfsroot) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        d = opendir(path);
        /* A kernel without CONFIG_NUMA has no node directory: one node. */
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while ((e = readdir(d))) {
                if (!node_dir(e->d_name, &f.this_node))
                        continue;
                snprintf(rel, sizeof(rel), "devices/system/node/%s/cpulist", e->d_name);
                if (pv_read_small(sysfsroot, rel, list, sizeof(list)) >= 0)
                        (void) pv_cpulist_parse(list, mark_cpu, &f);
        }
        closedir(d);
        return 0;
}

/* sysfsroot/devices/system/cpu/cpuN/cpufreq/name, a number of kHz. */
static int cpufreq_value(const char *sysfsroot, unsigned cpu, const char *name, uint64_t *ret)
{
        char rel[96];
        int64_t v;
        int r;

        snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%u/cpufreq/%s", cpu, name);
        r = pv_read_s64(sysfsroot, rel, &v);
        if (r < 0)
                return r;
        if (v < 0)
                return -EBADMSG;
        *ret = (uint64_t) v;
        return 0;
}

int pv_cpufreq_read(const char *sysfsroot, unsigned cpu, uint64_t *ret_cur_khz,
                    uint64_t *ret_max_khz)
{
        uint64_t cur, max = 0;
        int r;

        if (!sysfsroot || !ret_cur_khz || !ret_max_khz)
                return -EINVAL;
        /* cpuinfo_cur_freq asks the hardware and is root's alone; scaling_cur_freq is
         * readable by all and, on current kernels, the same measured figure. */
        r = cpufreq_value(sysfsroot, cpu, "scaling_cur_freq", &cur);
        if (r < 0)
                r = cpufreq_value(sysfsroot, cpu, "cpuinfo_cur_freq", &cur);
        if (r < 0)
                return r;
        (void) cpufreq_value(sysfsroot, cpu, "cpuinfo_max_freq", &max);
        *ret_cur_khz = cur;
        *ret_max_khz = max;
        return 0;
}

/* "KEY<tabs>: VALUE": VALUE when the line's key is key, else NULL. */
static const char *cpuinfo_value(const char *line, const char *key)
{
        size_t len = strlen(key);

        if (strncmp(line, key, len) != 0)
                return NULL;
        line += len;
        line += strspn(line, " \t");
        return *line == ':' ? line + 1 : NULL;
}

int pv_cpuinfo_mhz(FILE *f, const unsigned *cpu_id, size_t n, uint64_t *mhz)
{
        char *line = NULL, *end;
        size_t cap = 0;
        long cpu = -1;
        bool any = false;
        const char *v;
        double d;

        if (!f || (n && (!cpu_id || !mhz)))
                return -EINVAL;
        for (size_t k = 0; k < n; k++)
                mhz[k] = 0;
        while (getline(&line, &cap, f) > 0) {
                if ((v = cpuinfo_value(line, "processor")))
                        cpu = strtol(v, NULL, 10);
                else if ((v = cpuinfo_value(line, "cpu MHz")) && cpu >= 0) {
                        d = strtod(v, &end);
                        if (end == v || !(d >= 0 && d < 1e7))
                                continue;
                        for (size_t k = 0; k < n; k++)
                                if (cpu_id[k] == (unsigned long) cpu)
                                        mhz[k] = (uint64_t) (d + 0.5);
                        any = true;
                }
        }
        free(line);
        return any ? 0 : -ENOENT;
}
