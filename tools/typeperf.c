/* SPDX-License-Identifier: MIT */
/*
 * typeperf: write performance counter values to standard output or a
 * file, one sample a line, as Windows' typeperf does, through libpcq's
 * query layer (pcq.h).
 *
 * Wildcard paths are expanded once at the start, so the columns of a CSV
 * file stay fixed, as Windows does; an instance that goes away reads as
 * a blank value.  The first collection only primes the rate counters:
 * the first line comes one interval later and every value on it is a
 * real one, as with Windows' typeperf -sc 1.  SIGINT, SIGTERM and SIGHUP
 * are blocked and only waited for between samples, so a sample is either
 * written whole or not at all, and the file is synced before exit.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pcq.h"
#include "typeperf.h"

/* -q / -qx: the paths of one object or of all, one a line. */
static int list_paths(const struct tp_options *o)
{
        struct tp_run r = { .o = o };
        struct tp_out out;
        char **v = NULL;
        int ret = TP_EXIT_OK;
        struct tp_host *h = tp_get_host(&r, tp_bare_host(o->host), &ret);
        uint32_t st;

        if (!h)
                goto done;
        st = pcq_list_paths(h->conn, o->query_object, o->query == TP_QUERY_INSTANCES, &v);
        if (st != ERROR_SUCCESS) {
                const char *why = pcq_conn_error(h->conn);

                if (*why)
                        fprintf(stderr, "typeperf: %s\n", why);
                else if (o->query_object)
                        fprintf(stderr, "typeperf: %s: %s\n", o->query_object, pcq_status_text(st));
                else
                        fprintf(stderr, "typeperf: cannot list counters: %s\n", pcq_status_text(st));
                ret = st == PDH_CSTATUS_NO_OBJECT ? TP_EXIT_COUNTER : TP_EXIT_COLLECT;
                goto done;
        }
        if (tp_out_open(&out, o->output) < 0) {
                ret = TP_EXIT_OUTPUT;
                goto done;
        }
        for (size_t i = 0; v[i] && !out.broken; i++) {
                size_t len = strlen(v[i]);

                v[i][len] = '\n';       /* the terminator comes back below */
                tp_out_write(&out, v[i], len + 1);
                v[i][len] = 0;
        }
        if (tp_out_close(&out) < 0 || out.broken)
                ret = TP_EXIT_OUTPUT;
done:
        pcq_strv_free(v);
        tp_run_done(&r);
        return ret;
}

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* Sleeps until deadline (CLOCK_MONOTONIC ns); true when a stop signal came first. */
static bool wait_until(struct tp_run *r, uint64_t deadline)
{
        for (;;) {
                uint64_t now = now_ns();
                struct timespec left;

                if (now >= deadline)
                        return false;
                left.tv_sec = (time_t) ((deadline - now) / 1000000000ULL);
                left.tv_nsec = (long) ((deadline - now) % 1000000000ULL);
                if (sigtimedwait(&r->stop, NULL, &left) > 0)
                        return true;
                if (errno == EAGAIN)
                        return false;
        }
}

static bool stop_pending(struct tp_run *r)
{
        struct timespec zero = { 0, 0 };

        return sigtimedwait(&r->stop, NULL, &zero) > 0;
}

/* Writes a sample every interval (tp_add_counters primed); the exit code. */
static int sample_loop(struct tp_run *r)
{
        uint64_t interval = r->o->interval_ns, deadline = now_ns() + interval;

        while (!r->o->samples || r->written < r->o->samples) {
                if (wait_until(r, deadline))
                        return r->written ? TP_EXIT_OK : TP_EXIT_INTERRUPTED;
                if (tp_collect(r) < 0)
                        return TP_EXIT_COLLECT;
                if (tp_write_sample(r) < 0)
                        return TP_EXIT_OUTPUT;
                /* A collect slower than the interval skips slots rather than bunching. */
                deadline += interval;
                for (uint64_t now = now_ns(); deadline <= now;)
                        deadline += interval;
        }
        return TP_EXIT_OK;
}

static int collect_counters(const struct tp_options *o, const sigset_t *stop)
{
        struct tp_run r = { .o = o, .stop = *stop, .out = { .fd = -1 } };
        int ret = TP_EXIT_OK;

        if (tp_add_counters(&r, &ret) < 0)
                goto done;
        if (stop_pending(&r)) {
                ret = TP_EXIT_INTERRUPTED;
                goto done;
        }
        if (tp_out_open(&r.out, o->output) < 0 || tp_write_header(&r) < 0) {
                ret = TP_EXIT_OUTPUT;
                goto done;
        }
        ret = sample_loop(&r);
        if (tp_out_close(&r.out) < 0 && ret == TP_EXIT_OK)
                ret = TP_EXIT_OUTPUT;
done:
        tp_out_close(&r.out);
        tp_run_done(&r);
        return ret;
}

int main(int argc, char **argv)
{
        struct sigaction old_hup;
        struct tp_options o;
        sigset_t stop;
        int k, code;

        /*
         * Blocked from the start: a stop is only taken between samples.
         * Ctrl-C stops typeperf even when a shell started it in the
         * background with SIGINT ignored; a SIGHUP ignored by nohup stays
         * ignored.
         */
        sigemptyset(&stop);
        sigaddset(&stop, SIGINT);
        sigaddset(&stop, SIGTERM);
        if (sigaction(SIGHUP, NULL, &old_hup) == 0 && old_hup.sa_handler != SIG_IGN)
                sigaddset(&stop, SIGHUP);
        sigprocmask(SIG_BLOCK, &stop, NULL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        /* A reader that goes away is a write error, not a silent death. */
        signal(SIGPIPE, SIG_IGN);

        k = tp_parse_args(argc, argv, &o, &code);
        if (k != 0) {
                tp_options_done(&o);
                return k > 0 ? TP_EXIT_OK : code;
        }
        if (o.output && !tp_out_may_write(o.output, o.yes))
                code = TP_EXIT_OUTPUT;
        else if (o.query != TP_QUERY_NONE)
                code = list_paths(&o);
        else
                code = collect_counters(&o, &stop);
        tp_options_done(&o);
        return code;
}
