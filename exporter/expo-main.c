/* SPDX-License-Identifier: MIT */
/*
 * perflib-exporter: perflibd's counters for Prometheus and OpenMetrics
 * scrapers.  main reads the configuration (any mistake in it stops the
 * start, with the file and line), serves, and waits for SIGTERM or SIGINT
 * to stop cleanly; the work is in expo-scrape.c and expo-http.c.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expo-http.h"
#include "expo-opts.h"
#include "expo-scrape.h"
#include "expo-select.h"
#include "webcfg.h"

/* Each call to perflibd: under Prometheus' default scrape timeout of 10 s. */
#define CALL_TIMEOUT_MS         5000

static int load_web(const char *path, struct webcfg **ret)
{
        char why[512];
        int r;

        *ret = NULL;
        if (!path)
                return 0;
        r = webcfg_load(path, ret, why, sizeof(why));
        if (r < 0)
                expo_log(EXPO_ERROR, "%s", why);
        return r;
}

/* Blocks the stop signals in every thread, so that main alone takes them. */
static void block_signals(sigset_t *set)
{
        sigemptyset(set);
        sigaddset(set, SIGTERM);
        sigaddset(set, SIGINT);
        pthread_sigmask(SIG_BLOCK, set, NULL);
        signal(SIGPIPE, SIG_IGN);
}

static int serve(const struct expo_opts *o, const struct webcfg *web, struct expo_scraper *s)
{
        struct expo_http_config hc = {
                .listen = o->listen, .path = o->path, .max_connections = o->max_connections,
                .max_per_address = o->max_per_address, .request_bytes = o->request_bytes,
                .timeout_s = o->timeout_s, .web = web, .scraper = s,
        };
        struct expo_http *h;
        sigset_t set;
        int sig = 0;

        block_signals(&set);
        if (expo_http_start(&hc, &h) < 0)
                return EXPO_EXIT_LISTEN;
        while (sigwait(&set, &sig) != 0)
                ;
        expo_log(EXPO_INFO, "stopping on %s", strsignal(sig));
        expo_http_stop(h);
        return 0;
}

int main(int argc, char **argv)
{
        struct expo_opts o;
        struct expo_select *sel = NULL;
        struct expo_scraper *s = NULL;
        struct webcfg *web = NULL;
        int r = expo_opts_parse(argc, argv, &o);

        if (r >= 0)
                return r;
        r = EXPO_EXIT_CONFIG;
        if (load_web(o.web_config, &web) < 0 ||
            expo_select_new(o.exclude, o.n_exclude, o.counters, &sel) < 0)
                goto done;
        struct expo_scraper_config sc = {
                .server = o.server, .timeout_ms = CALL_TIMEOUT_MS, .select = sel,
                .with_total = o.with_total,
        };
        if (expo_scraper_new(&sc, &s) < 0) {
                r = EXIT_FAILURE;
                goto done;
        }
        /* Paths that name nothing stop the start; perflibd not there yet does not. */
        if (o.counters && expo_scraper_check(s) == -ENOENT)
                goto done;
        r = serve(&o, web, s);
done:
        expo_scraper_free(s);
        expo_select_free(sel);
        webcfg_free(web);
        expo_opts_done(&o);
        return r;
}
