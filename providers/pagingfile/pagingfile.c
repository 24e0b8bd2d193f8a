/* SPDX-License-Identifier: MIT */
/*
 * Paging File: one instance per swap area of /proc/swaps, named by its path
 * as Windows names a paging file by its path (instance id: its line in
 * /proc/swaps, from 1), and _Total (id 0), which is there even without swap,
 * as on Windows.  The fractions count 4 KiB pages, as Windows counts pages.
 *
 * % Usage Peak: Windows keeps the peak since boot, Linux keeps none, so the
 * peak is the highest usage this provider saw since it started, sampled
 * whenever a client collected.  An area that is swapped off loses its peak.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "instances.h"
#include "memhw.h"
#include "plugin.h"
#include "procfs.h"
#include "pagingfile.h"

#define N_VALUES        (PV_PAGING_FILE_USED_BYTES + 1)
#define PAGE            4096u
/* The kernel allows 32 areas at most (MAX_SWAPFILES less its reserved types). */
#define MAX_PEAKS       64

struct peak {
        char name[sizeof(((struct pv_swap *) 0)->name)];
        uint64_t used, size;            /* pages, at the highest used / size seen */
        bool seen;
};

static struct pv_instset areas;
static struct peak peaks[MAX_PEAKS];
static size_t n_peaks;
static bool logged_bad_line, logged_no_swaps;

/* The peak of name, raised to used / size if that is higher; NULL when the table is full. */
static const struct peak *peak_update(const char *name, uint64_t used, uint64_t size)
{
        struct peak *p = NULL;

        for (size_t i = 0; i < n_peaks && !p; i++)
                if (strcmp(peaks[i].name, name) == 0)
                        p = &peaks[i];
        if (!p) {
                if (n_peaks == MAX_PEAKS)
                        return NULL;
                p = &peaks[n_peaks++];
                *p = (struct peak) { 0 };
                snprintf(p->name, sizeof(p->name), "%s", name);
        }
        p->seen = true;
        /* used / size > p->used / p->size, without dividing. */
        if (p->size == 0 || (double) used * (double) p->size > (double) p->used * (double) size) {
                p->used = used;
                p->size = size;
        }
        return p;
}

/* Forgets the peaks of the areas not seen in this collection. */
static void peak_sweep(void)
{
        size_t kept = 0;

        for (size_t i = 0; i < n_peaks; i++) {
                if (!peaks[i].seen)
                        continue;
                peaks[i].seen = false;
                peaks[kept++] = peaks[i];
        }
        n_peaks = kept;
}

static int publish(const char *name, uint32_t id, uint64_t used, uint64_t size)
{
        uint64_t v[N_VALUES] = { 0 };
        PPERF_COUNTERSET_INSTANCE inst;
        const struct peak *p;
        int r;

        if ((r = pv_instset_get(&areas, name, id, &inst)) < 0)
                return r;
        v[PV_PAGING_FILE_PCT_USAGE] = used / PAGE;
        v[PV_PAGING_FILE_PCT_USAGE_BASE] = size / PAGE;
        p = peak_update(name, used / PAGE, size / PAGE);
        v[PV_PAGING_FILE_PCT_USAGE_PEAK] = p ? p->used : used / PAGE;
        v[PV_PAGING_FILE_PCT_USAGE_PEAK_BASE] = p ? p->size : size / PAGE;
        v[PV_PAGING_FILE_SIZE_BYTES] = size;
        v[PV_PAGING_FILE_USED_BYTES] = used;
        pv_set_values(PV_PAGING_FILE_PROVIDER, inst, &PV_PAGING_FILEInfo.CounterSet, v, N_VALUES);
        return 0;
}

static int collect(void)
{
        uint64_t used = 0, size = 0;
        struct pv_swap s;
        uint32_t line = 0;
        FILE *f = pv_fopen(pv_procfs(), "swaps");
        int r;

        if (!f && errno != ENOENT)
                return -errno;
        if (!f) {
                /* A kernel without swap support: _Total alone, at 0. */
                if (!logged_no_swaps)
                        pv_log(LOG_INFO, "no %s/swaps: a kernel without swap", pv_procfs());
                logged_no_swaps = true;
                if ((r = publish("_Total", 0, 0, 0)) < 0)
                        return r;
                pv_instset_sweep(&areas);
                return 0;
        }
        while ((r = pv_swaps_next(f, &s)) != 0) {
                line++;
                if (r < 0) {
                        if (r != -EBADMSG && r != -ENAMETOOLONG)
                                break;
                        /* One odd line costs its area, not the others. */
                        if (!logged_bad_line)
                                pv_log(LOG_WARNING, "%s/swaps line %u: %s", pv_procfs(), line,
                                       strerror(-r));
                        logged_bad_line = true;
                        continue;
                }
                if ((r = publish(s.name, line, s.used, s.size)) < 0)
                        break;
                used += s.used;
                size += s.size;
        }
        fclose(f);
        if (r == 0)
                r = publish("_Total", 0, used, size);
        if (r < 0)
                return r;
        pv_instset_sweep(&areas);
        peak_sweep();
        return 0;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status = CounterInitialize(callback, NULL, NULL, NULL);

        if (status == ERROR_SUCCESS)
                pv_instset_init(&areas, PV_PAGING_FILE_PROVIDER, &PV_PAGING_FILEGuid);
        n_peaks = 0;
        logged_bad_line = logged_no_swaps = false;
        return status;
}

static void stop(void)
{
        pv_instset_done(&areas);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "pagingfile", .start = start, .collect = collect, .stop = stop,
};
