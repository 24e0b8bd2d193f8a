/* SPDX-License-Identifier: MIT */
/*
 * The counter-type math of pcq.h section 2: what each PERF_* type means,
 * and how two raw samples become the value a person reads.  Pure functions,
 * no allocation, no connection.  Normative: MS-PCQ 2.2.4.2 and the counter
 * type table of counter-types-and-formulas.txt; where they are loose or
 * disagree, PDH's behaviour is followed and the choice is noted where it is
 * made.  man/pcq-calculate.3 lists every type with its formula.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "pcq.h"
#include "perflib.h"            /* PERF_ATTRIB_*, PERF_AGGREGATE_* */

/* How a type's value is computed; the modifiers come from the type bits. */
enum calc_kind {
        K_NONE,         /* text, no data: nothing to compute */
        K_RAW,          /* C1 (raw counts, hex, bases) */
        K_DELTA,        /* C1 - C0 */
        K_RATE,         /* dC / (dT / F) */
        K_QUEUELEN,     /* dC / dT, T in the timer's own ticks */
        K_TIMER,        /* 100 dC / dT, with inverse and multi modifiers */
        K_PRECISION,    /* 100 dC / dS, S a timestamp counter */
        K_SAMPLE_FRACTION, /* 100 dC / dB */
        K_AVERAGE_TIMER,   /* (dC / F) / dB */
        K_AVERAGE_BULK,    /* dC / dB */
        K_RAW_FRACTION,    /* 100 C1 / B1 */
        K_ELAPSED,      /* (S1 - C1) / F, S and F from the object */
};

/* Row flags: what pcq_type_info reports beyond what the bits say. */
#define R_TWO           0x01u   /* needs a previous sample */
#define R_BASE          0x02u   /* second = BaseCounterId */
#define R_PTIME         0x04u   /* second = PerfTimeId, freq = PerfFreqId */
#define R_IS_BASE       0x08u
#define R_BASE32        0x10u   /* the base counter is a 32-bit type */
#define R_KNOWN         0x20u   /* in MS-PCQ's table or the schema */

struct type_row {
        uint32_t type;
        const char *name;
        uint8_t kind;
        uint8_t flags;
};

#define ROW(t, k, f) { t, #t, k, f }

/*
 * Every type of winperf.h.  The flags are spelled out per row rather than
 * derived from the bits because the bits mislead in places: PERF_AVERAGE_*
 * need two samples without PERF_DELTA_COUNTER, PERF_AVERAGE_BULK carries
 * PERF_DISPLAY_NOSHOW yet is displayed, and the base of PERF_AVERAGE_BULK
 * (PERF_AVERAGE_BASE) is 32-bit while the counter is 64-bit.  The most
 * common types come first: the lookup is a linear scan, and raw counts,
 * rates and 100 ns timers are most of what any query returns.
 */
static const struct type_row type_rows[] = {
        ROW(PERF_COUNTER_RAWCOUNT, K_RAW, R_KNOWN),
        ROW(PERF_COUNTER_LARGE_RAWCOUNT, K_RAW, R_KNOWN),
        ROW(PERF_COUNTER_COUNTER, K_RATE, R_KNOWN | R_TWO),
        ROW(PERF_COUNTER_BULK_COUNT, K_RATE, R_KNOWN | R_TWO),
        ROW(PERF_100NSEC_TIMER, K_TIMER, R_KNOWN | R_TWO),
        ROW(PERF_100NSEC_TIMER_INV, K_TIMER, R_KNOWN | R_TWO),
        ROW(PERF_COUNTER_TIMER, K_TIMER, R_KNOWN | R_TWO),
        ROW(PERF_AVERAGE_TIMER, K_AVERAGE_TIMER, R_KNOWN | R_TWO | R_BASE | R_BASE32),
        ROW(PERF_AVERAGE_BULK, K_AVERAGE_BULK, R_KNOWN | R_TWO | R_BASE | R_BASE32),
        ROW(PERF_AVERAGE_BASE, K_RAW, R_KNOWN | R_IS_BASE),
        ROW(PERF_RAW_FRACTION, K_RAW_FRACTION, R_KNOWN | R_BASE | R_BASE32),
        ROW(PERF_RAW_BASE, K_RAW, R_KNOWN | R_IS_BASE),
        ROW(PERF_COUNTER_MULTI_TIMER, K_TIMER, R_KNOWN | R_TWO),
        ROW(PERF_COUNTER_LARGE_RAWCOUNT_HEX, K_RAW, R_KNOWN),
        ROW(PERF_ELAPSED_TIME, K_ELAPSED, R_KNOWN | R_PTIME),
        ROW(PERF_COUNTER_QUEUELEN_TYPE, K_QUEUELEN, R_KNOWN | R_TWO),
        ROW(PERF_COUNTER_LARGE_QUEUELEN_TYPE, K_QUEUELEN, R_KNOWN | R_TWO),
        ROW(PERF_COUNTER_100NS_QUEUELEN_TYPE, K_QUEUELEN, R_KNOWN | R_TWO),
        ROW(PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, K_QUEUELEN, R_KNOWN | R_TWO | R_PTIME),
        ROW(PERF_COUNTER_TEXT, K_NONE, R_KNOWN),
        ROW(PERF_COUNTER_RAWCOUNT_HEX, K_RAW, R_KNOWN),
        ROW(PERF_SAMPLE_FRACTION, K_SAMPLE_FRACTION, R_KNOWN | R_TWO | R_BASE | R_BASE32),
        ROW(PERF_SAMPLE_COUNTER, K_RATE, R_KNOWN | R_TWO),
        ROW(PERF_COUNTER_NODATA, K_NONE, R_KNOWN),
        ROW(PERF_COUNTER_TIMER_INV, K_TIMER, R_KNOWN | R_TWO),
        ROW(PERF_SAMPLE_BASE, K_RAW, R_KNOWN | R_IS_BASE),
        ROW(PERF_OBJ_TIME_TIMER, K_TIMER, R_KNOWN | R_TWO | R_PTIME),
        ROW(PERF_COUNTER_MULTI_TIMER_INV, K_TIMER, R_KNOWN | R_TWO),
        ROW(PERF_COUNTER_MULTI_BASE, K_RAW, R_KNOWN | R_IS_BASE),
        ROW(PERF_100NSEC_MULTI_TIMER, K_TIMER, R_KNOWN | R_TWO),
        ROW(PERF_100NSEC_MULTI_TIMER_INV, K_TIMER, R_KNOWN | R_TWO),
        ROW(PERF_LARGE_RAW_FRACTION, K_RAW_FRACTION, R_KNOWN | R_BASE),
        ROW(PERF_LARGE_RAW_BASE, K_RAW, R_KNOWN | R_IS_BASE),
        ROW(PERF_COUNTER_DELTA, K_DELTA, R_KNOWN | R_TWO),
        ROW(PERF_COUNTER_LARGE_DELTA, K_DELTA, R_KNOWN | R_TWO),
        ROW(PERF_PRECISION_SYSTEM_TIMER, K_PRECISION, R_KNOWN | R_TWO | R_BASE),
        ROW(PERF_PRECISION_100NS_TIMER, K_PRECISION, R_KNOWN | R_TWO | R_BASE),
        ROW(PERF_PRECISION_OBJECT_TIMER, K_PRECISION, R_KNOWN | R_TWO | R_PTIME),
        /*
         * In winperf.h but neither in MS-PCQ nor in the schema, and with
         * no formula anywhere: named, but unknown and never computed.
         */
        ROW(PERF_COUNTER_HISTOGRAM_TYPE, K_NONE, 0),
};

static const struct type_row *find_row(uint32_t type)
{
        for (size_t i = 0; i < sizeof(type_rows) / sizeof(type_rows[0]); i++)
                if (type_rows[i].type == type)
                        return &type_rows[i];
        return NULL;
}

static bool type_is_wide(uint32_t type)
{
        return (type & 0x300u) == PERF_SIZE_LARGE;
}

static bool type_is_percent(uint32_t type)
{
        return (type & 0xF0000000u) == PERF_DISPLAY_PERCENT;
}

void pcq_type_info(uint32_t type, struct pcq_type_info *ret)
{
        const struct type_row *r = find_row(type);
        uint8_t f = r ? r->flags : 0;

        if (!ret)
                return;
        *ret = (struct pcq_type_info){
                .name = r ? r->name : "unknown",
                .known = f & R_KNOWN,
                .two_samples = f & R_TWO,
                .is_base = f & R_IS_BASE,
                .needs_base = f & R_BASE,
                .needs_perf_time = f & R_PTIME,
                .needs_multi = (f & R_KNOWN) && (type & PERF_MULTI_COUNTER) &&
                               !(f & R_IS_BASE),
                .is_text = (f & R_KNOWN) && (type & 0xC00u) == PERF_TYPE_TEXT,
                .is_percent = (f & R_KNOWN) && type_is_percent(type),
        };
        /* Only the sizes a value can have on the wire; text and zero-size types have none. */
        if ((f & R_KNOWN) && r->kind != K_NONE)
                ret->value_size = type_is_wide(type) ? 8 : 4;
}

/*
 * The difference of a counter between two samples.  32-bit values are
 * masked and subtracted modulo 2^32: a DWORD counter that passed 2^32-1
 * wrapped, and the modular difference is exactly the count since the last
 * sample as long as it wrapped at most once, which is the documented rule
 * (a counter that would wrap twice between two samples is too fast for a
 * 32-bit type anyway).  64-bit counters never wrap in practice (584 years
 * at 1 GHz), so a smaller value means the provider restarted and the two
 * samples do not belong together: PDH_CSTATUS_INVALID_DATA, never a huge
 * number.
 */
static uint32_t counter_delta(uint64_t cur, uint64_t prev, bool wide, uint64_t *ret)
{
        if (!wide) {
                *ret = (uint32_t)((uint32_t)cur - (uint32_t)prev);
                return PDH_CSTATUS_VALID_DATA;
        }
        if (cur < prev)
                return PDH_CSTATUS_INVALID_DATA;
        *ret = cur - prev;
        return PDH_CSTATUS_VALID_DATA;
}

/*
 * The interval between two timestamps, in the timestamp's own ticks.  A
 * clock does not restart with a provider, so an interval of zero (two
 * samples in the same tick, or the same sample twice) or a clock that went
 * backwards is PDH's PDH_CALC_NEGATIVE_TIMEBASE, not an invalid sample.
 */
static uint32_t time_delta(uint64_t cur, uint64_t prev, double *ret)
{
        if (cur <= prev)
                return PDH_CALC_NEGATIVE_TIMEBASE;
        *ret = (double)(cur - prev);
        return PDH_CSTATUS_VALID_DATA;
}

/* The clock a rate or timer type counts in, chosen by its PERF_TIMER_* bits. */
static uint32_t type_interval(uint32_t type, const struct pcq_raw *p, const struct pcq_raw *c,
                              double *ret)
{
        switch (type & 0x00300000u) {
        case PERF_TIMER_100NS:
                return time_delta(c->time_100ns, p->time_100ns, ret);
        case PERF_OBJECT_TIMER:
                return time_delta(c->second, p->second, ret);
        default:
                return time_delta(c->perf_time, p->perf_time, ret);
        }
}

/*
 * dC/dT with T the clock of the type's PERF_TIMER_* bits, in that clock's
 * own ticks: the core of the rate, queue length and timer types.
 */
static uint32_t per_tick(uint32_t type, const struct pcq_raw *p, const struct pcq_raw *c,
                         double *ret)
{
        uint64_t dc;
        double dt;
        uint32_t r;

        if ((r = counter_delta(c->first, p->first, type_is_wide(type), &dc)) ||
            (r = type_interval(type, p, c, &dt)))
                return r;
        *ret = (double)dc / dt;
        return PDH_CSTATUS_VALID_DATA;
}

/*
 * Counts per second: dC / (dT / F) = F * dC/dT.  PERF_SAMPLE_COUNTER is
 * here too: the old type table writes its formula as DeltaC/DeltaB, but
 * its bits (PERF_COUNTER_RATE | PERF_TIMER_TICK, no base) and MS-PCQ
 * ("similar to PERF_COUNTER_COUNTER") both say a rate over the system
 * performance time, and no base counter is ever declared for it.
 */
static uint32_t calc_rate(uint32_t type, const struct pcq_raw *p, const struct pcq_raw *c,
                          double *ret)
{
        double share;
        uint32_t r;

        if (c->perf_freq == 0)
                return PDH_CALC_NEGATIVE_TIMEBASE;
        if ((r = per_tick(type, p, c, &share)))
                return r;
        *ret = share * (double)c->perf_freq;
        return PDH_CSTATUS_VALID_DATA;
}

/*
 * Timers count busy ticks in the units of their clock, so the busy share
 * is dC/dT whatever the frequency.  Multi timers sum several components
 * (the MultiId value, e.g. the number of CPUs): the plain one divides by
 * it, the inverse one subtracts the idle share from it, 100*(M - dC/dT),
 * as MS-PCQ's "subtracted from the value of the MultiId counter" says.  An
 * inverse timer below 0 (idle time measured a little over the interval) is
 * floored at 0 even with PCQ_FMT_NOCAP100: a negative busy share means
 * nothing.
 */
static uint32_t calc_timer(uint32_t type, const struct pcq_raw *p, const struct pcq_raw *c,
                           double *ret)
{
        bool inverse = type & PERF_INVERSE_COUNTER;
        double share, v;
        uint32_t r;

        if ((r = per_tick(type, p, c, &share)))
                return r;
        if (type & PERF_MULTI_COUNTER) {
                /* MultiId is a PERF_COUNTER_RAWCOUNT: 32 bits. */
                double m = (double)(uint32_t)c->multi;

                if (m == 0)
                        return PDH_CALC_NEGATIVE_DENOMINATOR;
                v = inverse ? 100.0 * (m - share) : 100.0 * share / m;
        } else {
                v = inverse ? 100.0 * (1.0 - share) : 100.0 * share;
        }
        if (inverse && v < 0)
                v = 0;
        *ret = v;
        return PDH_CSTATUS_VALID_DATA;
}

/*
 * Precision timers carry their own timestamp: the base counter
 * (PERF_LARGE_RAW_BASE) for the system and 100 ns ones, the PerfTimeId
 * counter for the object one, in the same units as the counter, so the
 * share needs no frequency.  The timestamp is a clock: zero or backwards is
 * PDH_CALC_NEGATIVE_TIMEBASE.
 */
static uint32_t calc_precision(const struct pcq_raw *p, const struct pcq_raw *c, double *ret)
{
        uint64_t dc;
        double ds;
        uint32_t r;

        if ((r = counter_delta(c->first, p->first, true, &dc)) ||
            (r = time_delta(c->second, p->second, &ds)))
                return r;
        *ret = 100.0 * (double)dc / ds;
        return PDH_CSTATUS_VALID_DATA;
}

/*
 * dC / dB for the fraction and average types.  The base is a count (of
 * samples, of operations), so its difference follows the counter rule of
 * its own type's size (PERF_SAMPLE_BASE and PERF_AVERAGE_BASE are 32-bit,
 * also under the 64-bit PERF_AVERAGE_BULK).  An idle interval (no
 * operation, so no time either: 0/0) is 0, which is what Windows shows for
 * an idle disk's Avg. Disk sec/Read; a counter that moved while its base
 * did not is PDH_CALC_NEGATIVE_DENOMINATOR.
 */
static uint32_t delta_ratio(uint32_t type, uint8_t flags, const struct pcq_raw *p,
                            const struct pcq_raw *c, double *ret)
{
        uint64_t dc, db;
        uint32_t r;

        if ((r = counter_delta(c->first, p->first, type_is_wide(type), &dc)) ||
            (r = counter_delta(c->second, p->second, !(flags & R_BASE32), &db)))
                return r;
        if (db == 0 && dc != 0)
                return PDH_CALC_NEGATIVE_DENOMINATOR;
        *ret = db == 0 ? 0.0 : (double)dc / (double)db;
        return PDH_CSTATUS_VALID_DATA;
}

/* C1 / B1 of one sample, both masked to their types' sizes; 0/0 is 0 (an empty disk's free share, say). */
static uint32_t calc_raw_fraction(uint32_t type, uint8_t flags, const struct pcq_raw *c,
                                  double *ret)
{
        uint64_t num = type_is_wide(type) ? c->first : (uint32_t)c->first;
        uint64_t den = (flags & R_BASE32) ? (uint32_t)c->second : c->second;

        if (den == 0 && num != 0)
                return PDH_CALC_NEGATIVE_DENOMINATOR;
        *ret = den == 0 ? 0.0 : 100.0 * (double)num / (double)den;
        return PDH_CSTATUS_VALID_DATA;
}

/*
 * Elapsed time: the counter holds a start time, the PerfTimeId counter the
 * object's time now, PerfFreqId its ticks per second (MS-PCQ words it the
 * other way round, but only now - start is an elapsed time).  A start after
 * now is PDH_CALC_NEGATIVE_VALUE rather than a wrapped huge number.
 */
static uint32_t calc_elapsed(const struct pcq_raw *c, double *ret)
{
        if (c->freq == 0)
                return PDH_CALC_NEGATIVE_TIMEBASE;
        if (c->second < c->first)
                return PDH_CALC_NEGATIVE_VALUE;
        *ret = (double)(c->second - c->first) / (double)c->freq;
        return PDH_CSTATUS_VALID_DATA;
}

static uint32_t calc_kind(const struct type_row *row, const struct pcq_raw *p,
                          const struct pcq_raw *c, double *ret)
{
        uint32_t type = row->type, r;
        uint64_t d;
        double v;

        switch (row->kind) {
        case K_RAW:
                /*
                 * Bases land here too: not displayed by themselves, but one
                 * asked for by name shows its raw value, the one thing it
                 * means alone (useful when checking a provider).
                 */
                *ret = (double)(type_is_wide(type) ? c->first : (uint32_t)c->first);
                return PDH_CSTATUS_VALID_DATA;
        case K_DELTA:
                if ((r = counter_delta(c->first, p->first, type_is_wide(type), &d)))
                        return r;
                *ret = (double)d;
                return PDH_CSTATUS_VALID_DATA;
        case K_RATE:
                return calc_rate(type, p, c, ret);
        case K_QUEUELEN:
                /*
                 * The provider adds the queue length times the ticks it
                 * lasted, so per tick is the mean length and no frequency
                 * enters (MSFT-COUNTERTYPES: (N1-N0)/(D1-D0)); the old
                 * table's (C1 + T1*B1)/DeltaT is the provider's side.
                 */
                return per_tick(type, p, c, ret);
        case K_TIMER:
                return calc_timer(type, p, c, ret);
        case K_PRECISION:
                return calc_precision(p, c, ret);
        case K_SAMPLE_FRACTION:
                if ((r = delta_ratio(type, row->flags, p, c, &v)))
                        return r;
                *ret = 100.0 * v;
                return PDH_CSTATUS_VALID_DATA;
        case K_AVERAGE_TIMER:
                /* The counter counts ticks of the system performance timer. */
                if (c->perf_freq == 0)
                        return PDH_CALC_NEGATIVE_TIMEBASE;
                if ((r = delta_ratio(type, row->flags, p, c, &v)))
                        return r;
                *ret = v / (double)c->perf_freq;
                return PDH_CSTATUS_VALID_DATA;
        case K_AVERAGE_BULK:
                return delta_ratio(type, row->flags, p, c, ret);
        case K_RAW_FRACTION:
                return calc_raw_fraction(type, row->flags, c, ret);
        case K_ELAPSED:
                return calc_elapsed(c, ret);
        default:
                return PDH_INVALID_ARGUMENT;
        }
}

/* Exact powers of ten for DefaultScale's range, -10 to 10 (MS-PCQ 2.2.4.2). */
static const double pow10_table[] = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
};

/*
 * PDH's order: the percentage is capped as a percentage, before the scale
 * (a scale on a percent type rescales the capped share); then
 * DefaultScale; then PCQ_FMT_1000.  A negative scale divides by the exact
 * power rather than multiplying by an inexact 1e-n.
 */
static double finish(uint32_t type, int32_t scale, uint32_t flags, double v)
{
        if (type_is_percent(type) && !(flags & PCQ_FMT_NOCAP100)) {
                if (v > 100.0)
                        v = 100.0;
                else if (v < 0)
                        v = 0;
        }
        if (!(flags & PCQ_FMT_NOSCALE) && scale != 0)
                v = scale > 0 ? v * pow10_table[scale] : v / pow10_table[-scale];
        if (flags & PCQ_FMT_1000)
                v *= 1000.0;
        return v;
}

uint32_t pcq_calculate(uint32_t type, int32_t default_scale,
                       const struct pcq_raw *prev, const struct pcq_raw *cur,
                       uint32_t flags, double *ret_value)
{
        const struct type_row *row = find_row(type);
        double v;
        uint32_t r;

        /* MS-PCQ bounds DefaultScale to -10..10; beyond is a corrupt registration. */
        if (!cur || !ret_value || default_scale < -10 || default_scale > 10 ||
            !row || !(row->flags & R_KNOWN))
                return PDH_INVALID_ARGUMENT;
        /* A known type that has no value by definition: not the caller's error. */
        if (type == PERF_COUNTER_NODATA)
                return PDH_NO_DATA;
        if (row->kind == K_NONE)
                return PDH_INVALID_ARGUMENT;
        if (cur->status != PDH_CSTATUS_VALID_DATA)
                return PDH_CSTATUS_INVALID_DATA;
        /* The first-sample rule: a rate from one sample would be a guess. */
        if ((row->flags & R_TWO) && (!prev || prev->status != PDH_CSTATUS_VALID_DATA))
                return PDH_CSTATUS_INVALID_DATA;
        if ((r = calc_kind(row, prev, cur, &v)))
                return r;
        *ret_value = finish(type, default_scale, flags, v);
        return PDH_CSTATUS_VALID_DATA;
}

/*
 * AggregateFunc over the formatted values of the instances.  The sum is
 * plain left to right: the values are already doubles and the instance
 * counts are small.
 */
uint32_t pcq_aggregate(uint32_t func, const double *values, size_t n, double *ret)
{
        double acc;

        if (!ret || (n > 0 && !values) || func > PERF_AGGREGATE_MAX)
                return PDH_INVALID_ARGUMENT;
        if (func == PERF_AGGREGATE_UNDEFINED || n == 0)
                return PDH_NO_DATA;
        acc = values[0];
        for (size_t i = 1; i < n; i++) {
                if (func == PERF_AGGREGATE_TOTAL || func == PERF_AGGREGATE_AVG)
                        acc += values[i];
                else if (func == PERF_AGGREGATE_MIN ? values[i] < acc : values[i] > acc)
                        acc = values[i];
        }
        *ret = func == PERF_AGGREGATE_AVG ? acc / (double)n : acc;
        return PDH_CSTATUS_VALID_DATA;
}

/* ---- text ---- */

/*
 * Beyond 17 decimals a double has no more digits to show; the limit also
 * keeps 10^decimals an exact uint64_t for the fast path below.
 */
#define MAX_DECIMALS    17u
/* The longest text: DBL_MAX has 309 integer digits, 103 separators, sign, point, decimals. */
#define TEXT_MAX        448
/*
 * The longest fast-path or hex text with its NUL: sign, 16 digits below
 * 2^53, 5 separators, point, 17 decimals (hex: "0x" and 16 digits).
 */
#define FAST_MAX        41

static const uint64_t pow10_u64[MAX_DECIMALS + 1] = {
        1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
        100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
        1000000000000ull, 10000000000000ull, 100000000000000ull,
        1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
};

/* Copies n integer digits to out, with "," every three from the right when group. */
static char *put_grouped(char *out, const char *digits, size_t n, bool group)
{
        for (size_t i = 0; i < n; i++) {
                if (group && i > 0 && (n - i) % 3 == 0)
                        *out++ = ',';
                *out++ = digits[i];
        }
        return out;
}

/*
 * The common case without printf: |v| * 10^decimals below 2^53 is an exact
 * integer after rounding, so integer arithmetic gives the digits at a tenth
 * of snprintf's cost (the formatting benchmark needs that).  Ties round
 * away from zero, where printf rounds the exact binary value; the two agree
 * but for values that sit exactly on a half in binary (0.125 to 2 places).
 * A value that rounds to zero prints without a sign.
 */
static bool format_fast(double v, unsigned decimals, bool group, char *out, size_t *ret_len)
{
        char digits[24], *p = out;
        double scaled = fabs(v) * (double)pow10_u64[decimals];
        uint64_t q, ip, fp;
        size_t nd = 0;

        if (!(scaled < 9007199254740992.0))     /* also false for NaN */
                return false;
        q = (uint64_t)(scaled + 0.5);
        ip = q / pow10_u64[decimals];
        fp = q % pow10_u64[decimals];
        if (v < 0 && q != 0)
                *p++ = '-';
        do {
                digits[sizeof(digits) - 1 - nd++] = (char)('0' + ip % 10);
                ip /= 10;
        } while (ip);
        p = put_grouped(p, digits + sizeof(digits) - nd, nd, group);
        if (decimals) {
                *p++ = '.';
                for (unsigned i = decimals; i-- > 0; fp /= 10)
                        p[i] = (char)('0' + fp % 10);
                p += decimals;
        }
        *ret_len = (size_t)(p - out);
        return true;
}

/* Huge values, NaN and infinities: printf's digits, grouped the same way. */
static size_t format_slow(double v, unsigned decimals, bool group, char *out)
{
        char tmp[TEXT_MAX];
        const char *s = tmp;
        size_t nd;
        char *p = out;

        snprintf(tmp, sizeof(tmp), "%.*f", (int)decimals, v);
        if (*s == '-')
                *p++ = *s++;
        nd = strspn(s, "0123456789");
        p = put_grouped(p, s, nd, group);
        s += nd;
        nd = strlen(s);
        memcpy(p, s, nd);
        return (size_t)(p - out) + nd;
}

/*
 * Counts (raw counts, bases, deltas) read as whole numbers unless the
 * counter asks for real display or a DefaultScale made them fractional;
 * everything computed over an interval (rates, shares, averages, times) is
 * a real number, as typeperf prints it.
 */
static bool shows_real(const struct type_row *r, uint64_t attrib, double v)
{
        if (attrib & PERF_ATTRIB_DISPLAY_AS_REAL)
                return true;
        if (!r || (r->kind != K_RAW && r->kind != K_DELTA))
                return true;
        return v != rint(v);
}

static bool shows_hex(uint32_t type, uint64_t attrib)
{
        return (attrib & PERF_ATTRIB_DISPLAY_AS_HEX) || type == PERF_COUNTER_RAWCOUNT_HEX ||
               type == PERF_COUNTER_LARGE_RAWCOUNT_HEX;
}

/*
 * Hex shows the raw value, not the scaled double (a bit mask scaled by 10^n
 * is no mask), masked to the type's size.  MS-PCQ forbids hex with real or
 * no-grouping; when a manifest combines them anyway, hex wins.
 */
static size_t format_hex(uint64_t raw, uint32_t type, char *out)
{
        static const char xdigits[] = "0123456789ABCDEF";
        size_t n = 1;

        if (!type_is_wide(type))
                raw = (uint32_t)raw;
        while (n < 16 && raw >> (4 * n))
                n++;
        out[0] = '0';
        out[1] = 'x';
        for (size_t i = 0; i < n; i++)
                out[2 + i] = xdigits[(raw >> (4 * (n - 1 - i))) & 0xF];
        return n + 2;
}

uint32_t pcq_value_text(double value, uint64_t raw_first, uint32_t type, uint64_t attrib,
                        unsigned decimals, uint32_t flags, char *buf, size_t size)
{
        bool group = (flags & PCQ_TEXT_GROUP) && !(attrib & PERF_ATTRIB_NO_GROUP_SEPARATOR);
        char tmp[TEXT_MAX];
        /* A buffer that holds any fast or hex text is written directly, saving a copy. */
        char *out = size >= FAST_MAX ? buf : tmp;
        unsigned dec;
        size_t n = 0;

        if ((!buf && size) || decimals > MAX_DECIMALS || (type & 0xC00u) == PERF_TYPE_TEXT)
                return ERROR_INVALID_PARAMETER;
        if ((attrib & PERF_ATTRIB_NO_DISPLAYABLE) || type == PERF_COUNTER_NODATA)
                n = 0;
        else if (shows_hex(type, attrib))
                n = format_hex(raw_first, type, out);
        else {
                dec = shows_real(find_row(type), attrib, value) ? decimals : 0;
                if (!format_fast(value, dec, group, out, &n)) {
                        out = tmp;
                        n = format_slow(value, dec, group, out);
                }
        }
        /* Nothing half-written: a text that does not fit leaves "" behind. */
        if (n >= size) {
                if (size)
                        buf[0] = '\0';
                return ERROR_INSUFFICIENT_BUFFER;
        }
        if (out != buf)
                memcpy(buf, out, n);
        buf[n] = '\0';
        return ERROR_SUCCESS;
}
