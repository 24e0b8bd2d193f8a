/* SPDX-License-Identifier: MIT */
/* The manifest's counter type names and GUID text, as winperf.h values. */
#include <string.h>

#include "perfman.h"

struct counter_type {
        const char *name;       /* as the schema spells it */
        const char *macro;      /* as winperf.h spells it */
        uint32_t value;
};

#define TYPE(name, macro) { name, #macro, macro }

/*
 * Every type of the schema's enumeration but perf_counter_composite, which
 * winperf.h gives no value: it stays unknown here so that it is reported.
 */
static const struct counter_type counter_types[] = {
        TYPE("perf_counter_counter", PERF_COUNTER_COUNTER),
        TYPE("perf_counter_timer", PERF_COUNTER_TIMER),
        TYPE("perf_counter_queuelen_type", PERF_COUNTER_QUEUELEN_TYPE),
        TYPE("perf_counter_large_queuelen_type", PERF_COUNTER_LARGE_QUEUELEN_TYPE),
        TYPE("perf_counter_100ns_queuelen_type", PERF_COUNTER_100NS_QUEUELEN_TYPE),
        TYPE("perf_counter_obj_time_queuelen_type", PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE),
        TYPE("perf_counter_bulk_count", PERF_COUNTER_BULK_COUNT),
        TYPE("perf_counter_text", PERF_COUNTER_TEXT),
        TYPE("perf_counter_rawcount", PERF_COUNTER_RAWCOUNT),
        TYPE("perf_counter_large_rawcount", PERF_COUNTER_LARGE_RAWCOUNT),
        TYPE("perf_counter_rawcount_hex", PERF_COUNTER_RAWCOUNT_HEX),
        TYPE("perf_counter_large_rawcount_hex", PERF_COUNTER_LARGE_RAWCOUNT_HEX),
        TYPE("perf_sample_fraction", PERF_SAMPLE_FRACTION),
        TYPE("perf_sample_counter", PERF_SAMPLE_COUNTER),
        TYPE("perf_counter_timer_inv", PERF_COUNTER_TIMER_INV),
        TYPE("perf_sample_base", PERF_SAMPLE_BASE),
        TYPE("perf_average_timer", PERF_AVERAGE_TIMER),
        TYPE("perf_average_base", PERF_AVERAGE_BASE),
        TYPE("perf_average_bulk", PERF_AVERAGE_BULK),
        TYPE("perf_obj_time_timer", PERF_OBJ_TIME_TIMER),
        TYPE("perf_100nsec_timer", PERF_100NSEC_TIMER),
        TYPE("perf_100nsec_timer_inv", PERF_100NSEC_TIMER_INV),
        TYPE("perf_counter_multi_timer", PERF_COUNTER_MULTI_TIMER),
        TYPE("perf_counter_multi_timer_inv", PERF_COUNTER_MULTI_TIMER_INV),
        TYPE("perf_counter_multi_base", PERF_COUNTER_MULTI_BASE),
        TYPE("perf_100nsec_multi_timer", PERF_100NSEC_MULTI_TIMER),
        TYPE("perf_100nsec_multi_timer_inv", PERF_100NSEC_MULTI_TIMER_INV),
        TYPE("perf_raw_fraction", PERF_RAW_FRACTION),
        TYPE("perf_large_raw_fraction", PERF_LARGE_RAW_FRACTION),
        TYPE("perf_raw_base", PERF_RAW_BASE),
        TYPE("perf_large_raw_base", PERF_LARGE_RAW_BASE),
        TYPE("perf_elapsed_time", PERF_ELAPSED_TIME),
        TYPE("perf_counter_delta", PERF_COUNTER_DELTA),
        TYPE("perf_counter_large_delta", PERF_COUNTER_LARGE_DELTA),
        TYPE("perf_precision_system_timer", PERF_PRECISION_SYSTEM_TIMER),
        TYPE("perf_precision_100ns_timer", PERF_PRECISION_100NS_TIMER),
        TYPE("perf_precision_object_timer", PERF_PRECISION_OBJECT_TIMER),
};

#define N_TYPES (sizeof(counter_types) / sizeof(counter_types[0]))

bool pm_counter_type(const char *name, uint32_t *ret_type)
{
        if (!name)
                return false;
        for (size_t i = 0; i < N_TYPES; i++)
                if (strcmp(counter_types[i].name, name) == 0) {
                        *ret_type = counter_types[i].value;
                        return true;
                }
        return false;
}

const char *pm_counter_type_macro(uint32_t type)
{
        for (size_t i = 0; i < N_TYPES; i++)
                if (counter_types[i].value == type)
                        return counter_types[i].macro;
        return NULL;
}

static int hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Exactly n hex digits at *p, which moves past them. */
static bool hex_field(const char **p, unsigned n, uint64_t *ret)
{
        uint64_t v = 0;

        for (unsigned i = 0; i < n; i++) {
                int h = hex_digit((*p)[i]);
                if (h < 0)
                        return false;
                v = v << 4 | (unsigned) h;
        }
        *p += n;
        *ret = v;
        return true;
}

static bool expect_char(const char **p, char c)
{
        if (**p != c)
                return false;
        (*p)++;
        return true;
}

bool pm_parse_guid(const char *text, GUID *ret)
{
        const char *p = text;
        uint64_t d1, d2, d3, d4a, d4b;
        GUID g;

        if (!p)
                return false;
        if (!expect_char(&p, '{') || !hex_field(&p, 8, &d1) || !expect_char(&p, '-') ||
            !hex_field(&p, 4, &d2) || !expect_char(&p, '-') || !hex_field(&p, 4, &d3) ||
            !expect_char(&p, '-') || !hex_field(&p, 4, &d4a) || !expect_char(&p, '-') ||
            !hex_field(&p, 12, &d4b) || !expect_char(&p, '}') || *p)
                return false;
        g.Data1 = (uint32_t) d1;
        g.Data2 = (uint16_t) d2;
        g.Data3 = (uint16_t) d3;
        g.Data4[0] = (uint8_t) (d4a >> 8);
        g.Data4[1] = (uint8_t) d4a;
        for (int i = 0; i < 6; i++)
                g.Data4[2 + i] = (uint8_t) (d4b >> (8 * (5 - i)));
        *ret = g;
        return true;
}
