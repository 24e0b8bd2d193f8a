/* SPDX-License-Identifier: MIT */
/*
 * expo-model.h: one counterset as one scrape read it, what the scrape
 * (libpcq) fills and the writer (expo-format.h) turns into families.
 * Everything in a set, strings included, is owned by whoever built it;
 * the writer only reads.
 */
#ifndef EXPO_MODEL_H
#define EXPO_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A counter as registered (RegistrationInfo: PERF_COUNTER_REG_INFO and its strings). */
struct expo_counter {
        uint32_t id;
        uint32_t type;                  /* PERF_COUNTER_* of perflib.h */
        uint64_t attrib;                /* PERF_ATTRIB_* */
        int32_t default_scale;
        uint32_t base_id;               /* BaseCounterId as registered (may be 0 or unset) */
        const char *name;               /* "% Processor Time", UTF-8 */
        const char *help;               /* the counter's description; may be "" */
};

struct expo_instance {
        uint32_t id;
        const char *name;               /* NULL for a single-instance set */
};

struct expo_set {
        const char *name;               /* "Processor" */
        const char *help;
        bool multi;                     /* multi-instance (with or without aggregation) */
        const struct expo_counter *counters;
        size_t n_counters;
        const struct expo_instance *instances;   /* one, name NULL, when !multi */
        size_t n_instances;
        /*
         * raw[i * n_counters + k] is counter k of instance i, has[] the same
         * index: whether the reply held it (a counter missing from an
         * instance is left out, never written as 0).
         */
        const uint64_t *raw;
        const bool *has;
        /* The sample's PERF_DATA_HEADER clocks, for the time-based types. */
        uint64_t perf_time;             /* PerfTimeStamp, in perf_freq ticks */
        uint64_t perf_freq;             /* ticks a second */
        uint64_t perf_time_100ns;       /* 100 ns since 1601 */
};

#endif /* EXPO_MODEL_H */
