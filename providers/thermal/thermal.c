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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instances.h"
#include "memhw.h"
#include "plugin.h"
#include "thermal.h"

#define N_VALUES        (PV_THERMAL_ZONE_HIGH_PRECISION_TEMPERATURE + 1)
#define NAME_SIZE       160
/* Bounds the cost of a collection on a machine with very many sensors. */
#define MAX_SENSORS     512

struct sensor {
        char name[NAME_SIZE];
        uint32_t id;
        int64_t millicelsius;
        unsigned cooling_pct;
        bool cooling;
};

static struct pv_instset sensors;
static bool logged_read, logged_none;

/* Makes text safe in a counter path: \object(parent/instance#index)\counter. */
static void path_safe(char *text)
{
        for (char *c = text; *c; c++)
                if (*c == '/' || *c == '\\' || *c == '#')
                        *c = '_';
}

static void log_read(int r, const char *what, unsigned n)
{
        if (!logged_read)
                pv_log(LOG_INFO, "%s%u: %s: left out while it cannot be read", what, n,
                       strerror(-r));
        logged_read = true;
}

static size_t thermal_zones(struct sensor *s, size_t room)
{
        unsigned *zone = NULL;
        size_t n = 0, count = 0;

        if (pv_list_numbered(pv_sysfs(), "class/thermal", "thermal_zone", "", &zone, &count) < 0)
                return 0;
        for (size_t i = 0; i < count && n < room; i++) {
                struct pv_thermal_zone z;
                int r = pv_thermal_zone_read(pv_sysfs(), zone[i], &z);

                if (r < 0) {
                        log_read(r, "thermal_zone", zone[i]);
                        continue;
                }
                path_safe(z.type);
                snprintf(s[n].name, NAME_SIZE, "\\_TZ.%s", z.type);
                s[n].id = zone[i];
                s[n].millicelsius = z.millicelsius;
                s[n].cooling_pct = z.cooling_pct;
                s[n].cooling = z.cooling;
                n++;
        }
        free(zone);
        return n;
}

static size_t hwmon_chip(unsigned chip, struct sensor *s, size_t room)
{
        unsigned *temp = NULL;
        char rel[64];
        size_t n = 0, count = 0;

        snprintf(rel, sizeof(rel), "class/hwmon/hwmon%u", chip);
        if (pv_list_numbered(pv_sysfs(), rel, "temp", "_input", &temp, &count) < 0)
                return 0;
        for (size_t i = 0; i < count && n < room; i++) {
                struct pv_hwmon_temp t;
                int r = pv_hwmon_temp_read(pv_sysfs(), chip, temp[i], &t);

                if (r < 0) {
                        log_read(r, rel, temp[i]);
                        continue;
                }
                path_safe(t.chip);
                path_safe(t.label);
                s[n] = (struct sensor) { .id = 0x10000u + chip * 256u + temp[i],
                                         .millicelsius = t.millicelsius };
                snprintf(s[n].name, NAME_SIZE, "%s.%s", t.chip, t.label);
                n++;
        }
        free(temp);
        return n;
}

static size_t hwmon_sensors(struct sensor *s, size_t room)
{
        unsigned *chip = NULL;
        size_t n = 0, count = 0;

        if (pv_list_numbered(pv_sysfs(), "class/hwmon", "hwmon", "", &chip, &count) < 0)
                return 0;
        for (size_t i = 0; i < count && n < room; i++)
                n += hwmon_chip(chip[i], s + n, room - n);
        free(chip);
        return n;
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

static int collect(void)
{
        struct sensor *s = calloc(MAX_SENSORS, sizeof(*s));
        size_t n;
        int r = 0;

        if (!s)
                return -ENOMEM;
        n = thermal_zones(s, MAX_SENSORS);
        n += hwmon_sensors(s + n, MAX_SENSORS - n);
        if (n == 0 && !logged_none)
                pv_log(LOG_INFO, "no readable thermal zone in %s/class/thermal nor hwmon "
                       "temperature in %s/class/hwmon: Thermal Zone Information has no instances",
                       pv_sysfs(), pv_sysfs());
        logged_none = n == 0;
        for (size_t i = 0; i < n && r == 0; i++)
                r = publish(&s[i]);
        free(s);
        if (r < 0)
                return r;
        pv_instset_sweep(&sensors);
        return 0;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status = CounterInitialize(callback, NULL, NULL, NULL);

        if (status == ERROR_SUCCESS)
                pv_instset_init(&sensors, PV_THERMAL_ZONE_PROVIDER, &PV_THERMAL_ZONEGuid);
        logged_read = logged_none = false;
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
