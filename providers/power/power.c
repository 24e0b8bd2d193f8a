/* SPDX-License-Identifier: MIT */
/*
 * Power Meter: one instance per RAPL zone of /sys/class/powercap, named by
 * the zone (package-0, package-0/core, psys; an MMIO zone is named as its
 * package, and consumers number the second name#1 as Windows does),
 * instance id its position in directory order from 1.  Windows' Power
 * is an instantaneous figure; RAPL counts energy, so Power is the energy
 * used between two collections over the time between them, 0 at the first.
 *
 * Where the machine has no RAPL (no powercap directory, no zones: most VMs
 * and containers) the counterset has no instances, and one log line says
 * why; where energy_uj is root-only (Linux 5.10 and later) Power and Energy
 * stay 0 and Power Budget is still shown, also logged once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instances.h"
#include "memhw.h"
#include "plugin.h"
#include "power.h"

#define N_VALUES        (PV_POWER_METER_ENERGY_UJ + 1)
#define MAX_ZONES       64
/* Two collections closer than this keep the Power of the one before. */
#define MIN_INTERVAL_NS 100000000ull

/* What Power needs from the previous collection of a zone. */
struct history {
        char dir[64];
        uint64_t energy_uj;             /* the kernel's, at the last reading */
        uint64_t total_uj;              /* counted on past the wraps */
        uint64_t at_ns;
        uint64_t power_mw;
        bool valid;                     /* energy_uj was read: the next reading has a base */
        bool seen;
};

static struct pv_instset zones;
static struct history hist[MAX_ZONES];
static size_t n_hist;
static int logged_missing;
static bool logged_energy;

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* The zone's history, new (and NULL when the table is full) at its first collection. */
static struct history *history_of(const struct pv_rapl_zone *z, uint64_t now, bool *ret_new)
{
        struct history *h;

        for (size_t i = 0; i < n_hist; i++)
                if (strcmp(hist[i].dir, z->dir) == 0) {
                        *ret_new = false;
                        hist[i].seen = true;
                        return &hist[i];
                }
        if (n_hist == MAX_ZONES)
                return NULL;
        h = &hist[n_hist++];
        *h = (struct history) { .energy_uj = z->energy_uj, .total_uj = z->energy_uj,
                                .at_ns = now, .valid = z->has_energy, .seen = true };
        snprintf(h->dir, sizeof(h->dir), "%s", z->dir);
        *ret_new = true;
        return h;
}

static void history_sweep(void)
{
        size_t kept = 0;

        for (size_t i = 0; i < n_hist; i++)
                if (hist[i].seen) {
                        hist[i].seen = false;
                        hist[kept++] = hist[i];
                }
        n_hist = kept;
}

/* Power in mW since the zone's last reading, and the energy total, in h. */
static void account(struct history *h, const struct pv_rapl_zone *z, uint64_t now)
{
        uint64_t d_uj, d_ns = now - h->at_ns;

        if (!z->has_energy || (h->valid && d_ns < MIN_INTERVAL_NS))
                return;
        if (!h->valid) {
                /* Readable at last (permissions changed): this reading is the base. */
                h->energy_uj = h->total_uj = z->energy_uj;
                h->at_ns = now;
                h->valid = true;
                return;
        }
        d_uj = pv_energy_delta(h->energy_uj, z->energy_uj, z->max_energy_uj);
        h->total_uj += d_uj;
        /* One uJ per ns is 10^6 mW; below 2^44 uJ the product stays exact. */
        if (d_uj < (UINT64_C(1) << 44))
                h->power_mw = d_uj * 1000000u / d_ns;
        if (h->power_mw > UINT32_MAX)
                h->power_mw = UINT32_MAX;       /* a 32-bit counter, as Windows' */
        h->energy_uj = z->energy_uj;
        h->at_ns = now;
}

static int publish(const struct pv_rapl_zone *z, uint32_t id, uint64_t now)
{
        uint64_t v[N_VALUES] = { 0 };
        PPERF_COUNTERSET_INSTANCE inst;
        struct history *h;
        bool fresh = false;
        int r;

        if ((r = pv_instset_get(&zones, z->name, id, &inst)) < 0)
                return r;
        if ((h = history_of(z, now, &fresh)) && !fresh)
                account(h, z, now);
        v[PV_POWER_METER_POWER] = h ? h->power_mw : 0;
        v[PV_POWER_METER_POWER_BUDGET] = z->limit_uw / 1000;
        v[PV_POWER_METER_ENERGY_UJ] = h ? h->total_uj : z->energy_uj;
        pv_set_values(PV_POWER_METER_PROVIDER, inst, &PV_POWER_METERInfo.CounterSet, v, N_VALUES);
        return 0;
}

static void log_state(int r, const struct pv_rapl_zone *z, size_t n)
{
        bool energy = true;

        if (r == 0 && n == 0)
                r = -ENODEV;
        if (r < 0 && r != logged_missing)
                pv_log(LOG_INFO, "%s/class/powercap: %s: no RAPL zones, Power Meter has no "
                       "instances", pv_sysfs(),
                       r == -ENODEV ? "no intel-rapl zones" : strerror(-r));
        logged_missing = r < 0 ? r : 0;
        for (size_t i = 0; i < n; i++)
                energy = energy && z[i].has_energy;
        if (!energy && !logged_energy)
                pv_log(LOG_INFO, "energy_uj unreadable (root only since Linux 5.10): "
                       "Power and Energy Microjoules are 0 in the zones concerned");
        logged_energy = !energy;
}

static int collect(void)
{
        struct pv_rapl_zone *z = NULL;
        uint64_t now = now_ns();
        size_t n = 0;
        int r = pv_rapl_zones(pv_sysfs(), &z, &n);

        log_state(r, z, r < 0 ? 0 : n);
        if (r < 0 || n == 0) {
                free(z);
                pv_instset_sweep(&zones);
                history_sweep();
                return 0;
        }
        for (size_t i = 0; i < n && r == 0; i++)
                r = publish(&z[i], (uint32_t) i + 1, now);
        free(z);
        if (r < 0)
                return r;
        pv_instset_sweep(&zones);
        history_sweep();
        return 0;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status = CounterInitialize(callback, NULL, NULL, NULL);

        if (status == ERROR_SUCCESS)
                pv_instset_init(&zones, PV_POWER_METER_PROVIDER, &PV_POWER_METERGuid);
        n_hist = 0;
        logged_missing = 0;
        logged_energy = false;
        return status;
}

static void stop(void)
{
        pv_instset_done(&zones);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "power", .start = start, .collect = collect, .stop = stop,
};
