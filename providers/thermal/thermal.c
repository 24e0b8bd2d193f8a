/* SPDX-License-Identifier: MIT */
/*
 * Thermal Zone Information: one instance per thermal zone of
 * /sys/class/thermal, named \_TZ.TYPE as Windows names an ACPI zone
 * \_TZ.NAME (instance id: the zone number), and one per hwmon temperature
 * sensor, named CHIP.LABEL (coretemp.Package id 0; id 0x10000 + chip * 256
 * + sensor).  Zones or sensors may share a name: consumers number the
 * second name#1 ... as Windows does.  Characters that would change what a
 * counter path means ('/' parent, '\\' counter, '#' index) become '_'.
 *
 * A zone or sensor that cannot be read now (a sensor that is off, a driver
 * that says EAGAIN) is left out of this collection; the first such failure
 * is logged, as is a machine with neither thermal zones nor hwmon sensors,
 * whose counterset then has no instances.
 *
 * Some drivers take milliseconds a reading (ACPI methods, I2C buses): a
 * collection reads for READ_BUDGET_NS at most, and the next goes on where it
 * stopped, the sensors not read keeping their values meanwhile.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instances.h"
#include "memhw.h"
#include "plugin.h"
#include "thermal.h"

#define N_VALUES        (PV_THERMAL_ZONE_HIGH_PRECISION_TEMPERATURE + 1)
#define NAME_SIZE       160
/* Bounds the listing on a machine with very many sensors. */
#define MAX_SOURCES     512
#define READ_BUDGET_NS  25000000ull

/* A zone (thermal_zoneN) or an hwmon sensor (hwmonN/tempK_input). */
struct source {
        bool zone;
        unsigned n, k;
};

struct sensor {
        char name[NAME_SIZE];
        uint32_t id;
        int64_t millicelsius;
        unsigned cooling_pct;
        bool cooling;
};

static struct pv_instset sensors;
static size_t next_source;      /* where a collection cut short stopped */
static bool logged_read, logged_none, logged_slow;

/* Makes text safe in a counter path: \object(parent/instance#index)\counter. */
static void path_safe(char *text)
{
        for (char *c = text; *c; c++)
                if (*c == '/' || *c == '\\' || *c == '#')
                        *c = '_';
}

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* Appends the numbered entries of rel, zones or one chip's sensors, to src[*n..room). */
static void list_into(const char *rel, const char *prefix, const char *suffix, bool zone,
                      unsigned chip, struct source *src, size_t *n, size_t room)
{
        unsigned *v = NULL;
        size_t count = 0;

        if (pv_list_numbered(pv_sysfs(), rel, prefix, suffix, &v, &count) < 0)
                return;
        for (size_t i = 0; i < count && *n < room; i++)
                src[(*n)++] = zone ? (struct source) { .zone = true, .n = v[i] }
                                   : (struct source) { .n = chip, .k = v[i] };
        free(v);
}

/* The zones, then each chip's sensors: listing sysfs directories, no reading. */
static size_t list_sources(struct source *src, size_t room)
{
        unsigned *chip = NULL;
        size_t n = 0, count = 0;

        list_into("class/thermal", "thermal_zone", "", true, 0, src, &n, room);
        if (pv_list_numbered(pv_sysfs(), "class/hwmon", "hwmon", "", &chip, &count) < 0)
                return n;
        for (size_t i = 0; i < count; i++) {
                char rel[64];

                snprintf(rel, sizeof(rel), "class/hwmon/hwmon%u", chip[i]);
                list_into(rel, "temp", "_input", false, chip[i], src, &n, room);
        }
        free(chip);
        return n;
}

static int read_zone(unsigned zone, struct sensor *s)
{
        struct pv_thermal_zone z;
        int r = pv_thermal_zone_read(pv_sysfs(), zone, &z);

        if (r < 0)
                return r;
        path_safe(z.type);
        *s = (struct sensor) { .id = zone, .millicelsius = z.millicelsius,
                               .cooling_pct = z.cooling_pct, .cooling = z.cooling };
        snprintf(s->name, NAME_SIZE, "\\_TZ.%s", z.type);
        return 0;
}

static int read_hwmon(unsigned chip, unsigned k, struct sensor *s)
{
        struct pv_hwmon_temp t;
        int r = pv_hwmon_temp_read(pv_sysfs(), chip, k, &t);

        if (r < 0)
                return r;
        path_safe(t.chip);
        path_safe(t.label);
        *s = (struct sensor) { .id = 0x10000u + chip * 256u + k, .millicelsius = t.millicelsius };
        snprintf(s->name, NAME_SIZE, "%s.%s", t.chip, t.label);
        return 0;
}

static int publish(const struct sensor *s)
{
        uint64_t v[N_VALUES] = { 0 };
        PPERF_COUNTERSET_INSTANCE inst;
        uint32_t tenths = pv_tenths_kelvin(s->millicelsius);
        int r;

        if ((r = pv_instset_get(&sensors, s->name, s->id, &inst)) < 0)
                return r;
        v[PV_THERMAL_ZONE_TEMPERATURE] = (tenths + 5) / 10;
        v[PV_THERMAL_ZONE_HIGH_PRECISION_TEMPERATURE] = tenths;
        v[PV_THERMAL_ZONE_PCT_PASSIVE_LIMIT] = 100 - (s->cooling_pct > 100 ? 100 : s->cooling_pct);
        v[PV_THERMAL_ZONE_THROTTLE_REASONS] = s->cooling ? 1 : 0;
        pv_set_values(PV_THERMAL_ZONE_PROVIDER, inst, &PV_THERMAL_ZONEInfo.CounterSet, v, N_VALUES);
        return 0;
}

/* Reads and publishes one source; one that cannot be read now is logged once and skipped. */
static int collect_one(const struct source *src)
{
        struct sensor s;
        int r = src->zone ? read_zone(src->n, &s) : read_hwmon(src->n, src->k, &s);

        if (r < 0) {
                if (!logged_read)
                        pv_log(LOG_INFO, "%s%u%s: %s: left out while it cannot be read",
                               src->zone ? "thermal_zone" : "hwmon", src->n,
                               src->zone ? "" : " temperature", strerror(-r));
                logged_read = true;
                return 0;
        }
        return publish(&s);
}

static void log_none(size_t n)
{
        if (n == 0 && !logged_none)
                pv_log(LOG_INFO, "no thermal zone in %s/class/thermal nor hwmon temperature in "
                       "%s/class/hwmon: Thermal Zone Information has no instances",
                       pv_sysfs(), pv_sysfs());
        logged_none = n == 0;
}

static int collect(void)
{
        struct source *src = calloc(MAX_SOURCES, sizeof(*src));
        uint64_t t0 = now_ns();
        size_t n, i, first;
        int r = 0;

        if (!src)
                return -ENOMEM;
        n = list_sources(src, MAX_SOURCES);
        log_none(n);
        /* From where the last collection stopped; the ones before keep their values. */
        first = next_source < n ? next_source : 0;
        for (i = first; i < n && r == 0; i++) {
                if (i > first && now_ns() - t0 > READ_BUDGET_NS)
                        break;
                r = collect_one(&src[i]);
        }
        free(src);
        if (r < 0)
                return r;
        if (i < n) {
                if (!logged_slow)
                        pv_log(LOG_INFO, "reading the sensors took over %llu ms: each "
                               "collection reads what it can, the others keep their values",
                               READ_BUDGET_NS / 1000000);
                logged_slow = true;
                next_source = i;
                return 0;
        }
        /* Every source was visited since the last sweep. */
        next_source = 0;
        pv_instset_sweep(&sensors);
        return 0;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status = CounterInitialize(callback, NULL, NULL, NULL);

        if (status == ERROR_SUCCESS)
                pv_instset_init(&sensors, PV_THERMAL_ZONE_PROVIDER, &PV_THERMAL_ZONEGuid);
        next_source = 0;
        logged_read = logged_none = logged_slow = false;
        return status;
}

static void stop(void)
{
        pv_instset_done(&sensors);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "thermal", .start = start, .collect = collect, .stop = stop,
};
