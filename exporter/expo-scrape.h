/* SPDX-License-Identifier: MIT */
/*
 * expo-scrape.h: one scrape of perflibd through libpcq (expo-scrape.c):
 * every selected counterset read in one QueryCounterData, written as text
 * by expo-format.h with the exporter's health after it.  Registration
 * info (names, help, types) is kept between scrapes and read again when
 * the countersets change; the connection is made again when perflibd
 * comes back.  Hidden symbols, expo_ prefix.
 */
#ifndef EXPO_SCRAPE_H
#define EXPO_SCRAPE_H

#include "expo-format.h"
#include "expo-select.h"

struct expo_scraper_config {
        const char *server;             /* NULL: the local perflibd (pcq_connect) */
        int timeout_ms;                 /* bounds each call to perflibd */
        const struct expo_select *select;       /* the caller's, outlives the scraper */
        bool with_total;
};

struct expo_scraper;

/* *ret is the caller's (expo_scraper_free); it connects on first use. */
int expo_scraper_new(const struct expo_scraper_config *cfg, struct expo_scraper **ret);
void expo_scraper_free(struct expo_scraper *s);

/*
 * Connects now and checks the --counters paths (expo_select_check):
 * 0, -ENOENT for a path naming nothing (logged), -ECONNREFUSED when
 * perflibd does not answer (logged as a warning: it may come later).
 */
int expo_scraper_check(struct expo_scraper *s);

/*
 * One scrape into out: the families of every selected counterset, then
 * the health families (and "# EOF" for OpenMetrics).  Safe to call from
 * several threads: scrapes take turns.  A counterset that fails, or
 * perflibd gone, shows in the health families only; 0, or -ENOMEM.
 */
int expo_scrape(struct expo_scraper *s, enum expo_syntax syntax, struct expo_buf *out);

#endif /* EXPO_SCRAPE_H */
