/* SPDX-License-Identifier: MIT */
/*
 * pcq-consumer: reads counters from perflibd with libpcq, as a Windows
 * program reads them with PDH.
 *
 *      pcq-consumer '\Processor(_Total)\% Processor Time' '\Memory\Available Bytes'
 *
 * adds each counter path to a query (pcq.h section 3: wildcards allowed),
 * collects every interval and prints each value formatted as its counter
 * type and display attributes say.  Rate counters need two samples, so the
 * first collection only primes them.
 *
 *      pcq-consumer --list
 *
 * uses the PerflibV2 calls themselves (pcq.h section 1) to enumerate the
 * countersets with their names, kinds and counter counts.
 *
 * Build:   cc -o pcq-consumer pcq-consumer.c $(pkg-config --cflags --libs pcq)
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcq.h>

#define PROGRAM "pcq-consumer"
#define DEFAULT_PATH "\\Processor(_Total)\\% Processor Time"

/* MS-PCQ 2.2.4.1 InstanceType and 2.2.4.2 Attrib values (perflib.h is the provider's header). */
#define INSTANCE_TYPE_SINGLE            0x0u
#define INSTANCE_TYPE_FLAG_MULTIPLE     0x2u
#define ATTRIB_NO_DISPLAYABLE           0x2u

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
        stop_requested = sig;
}

static int failed(const char *what, uint32_t status)
{
        fprintf(stderr, PROGRAM ": %s: %s (0x%08X)\n", what, pcq_status_text(status),
                (unsigned) status);
        return 1;
}

/* ---- --list: section 1, the PerflibV2 calls ---- */

/*
 * A lone UTF-16LE string as RequestCodes 3, 4, 7 and 9 return it, as UTF-8
 * into out (cut short if it does not fit; unpaired surrogates become '?').
 */
static void utf16le_to_utf8(const struct pcq_buf *b, char *out, size_t size)
{
        size_t n = 0;

        for (uint32_t i = 0; i + 1 < b->size && n + 5 < size; i += 2) {
                uint32_t u = b->data[i] | (uint32_t) b->data[i + 1] << 8;

                if (u == 0)
                        break;
                if (u >= 0xD800 && u < 0xDC00 && i + 3 < b->size) {
                        uint32_t lo = b->data[i + 2] | (uint32_t) b->data[i + 3] << 8;

                        if (lo >= 0xDC00 && lo < 0xE000) {
                                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                                i += 2;
                        }
                }
                if (u >= 0xD800 && u < 0xE000)
                        u = '?';
                if (u < 0x80) {
                        out[n++] = (char) u;
                } else if (u < 0x800) {
                        out[n++] = (char) (0xC0 | u >> 6);
                        out[n++] = (char) (0x80 | (u & 0x3F));
                } else if (u < 0x10000) {
                        out[n++] = (char) (0xE0 | u >> 12);
                        out[n++] = (char) (0x80 | (u >> 6 & 0x3F));
                        out[n++] = (char) (0x80 | (u & 0x3F));
                } else {
                        out[n++] = (char) (0xF0 | u >> 18);
                        out[n++] = (char) (0x80 | (u >> 12 & 0x3F));
                        out[n++] = (char) (0x80 | (u >> 6 & 0x3F));
                        out[n++] = (char) (0x80 | (u & 0x3F));
                }
        }
        out[n] = '\0';
}

static const char *kind(uint32_t instance_type)
{
        if (instance_type & INSTANCE_TYPE_FLAG_MULTIPLE)
                return "multiple";
        return instance_type == INSTANCE_TYPE_SINGLE ? "single" : "global";
}

static void print_counterset(pcq_conn *c, const GUID *g)
{
        struct pcq_buf info = { 0 }, name = { 0 };
        struct pcq_counterset_reg set;
        struct pcq_counter_reg counter;
        pcq_iter it;
        unsigned shown = 0;
        char text[512] = "?";
        uint32_t st;

        st = pcq_registration_info(c, g, 1, 0, &info);         /* the counterset and counters */
        if (st == ERROR_SUCCESS)
                st = pcq_reg_iter_begin(&it, &info, &set);
        if (st != ERROR_SUCCESS) {
                failed("QueryCounterSetRegistrationInfo", st);
                pcq_buf_done(&info);
                return;
        }
        /* Base counters and others marked no-display are not shown to people. */
        while (pcq_reg_iter_next(&it, &counter))
                if (!(counter.attrib & ATTRIB_NO_DISPLAYABLE))
                        shown++;
        pcq_iter_done(&it);
        if (pcq_registration_info(c, g, 3, 0, &name) == ERROR_SUCCESS)    /* its name */
                utf16le_to_utf8(&name, text, sizeof(text));
        printf("{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}  %-8s %3u counters  %s\n",
               (unsigned) g->Data1, g->Data2, g->Data3, g->Data4[0], g->Data4[1], g->Data4[2],
               g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7],
               kind(set.instance_type), shown, text);
        pcq_buf_done(&name);
        pcq_buf_done(&info);
}

static int list(pcq_conn *c)
{
        GUID *guids;
        size_t n;
        uint32_t st;

        st = pcq_enum_countersets(c, &guids, &n);
        if (st != ERROR_SUCCESS)
                return failed("EnumerateCounterSet", st);
        for (size_t i = 0; i < n; i++)
                print_counterset(c, &guids[i]);
        free(guids);
        return 0;
}

/* ---- paths: section 3, queries as PDH has them ---- */

static void print_values(pcq_counter *ctr)
{
        const struct pcq_value *items;
        struct pcq_counter_desc d;
        size_t n;
        uint32_t st;
        char text[64];

        pcq_counter_describe(ctr, &d);
        st = pcq_counter_values(ctr, 0, &items, &n);
        if (st != ERROR_SUCCESS) {
                printf("  %s: %s\n", d.path, pcq_status_text(st));
                return;
        }
        for (size_t i = 0; i < n; i++) {
                if (items[i].status != PDH_CSTATUS_VALID_DATA)
                        snprintf(text, sizeof(text), "(%s)", pcq_status_text(items[i].status));
                else if (pcq_value_text(items[i].value, items[i].raw_first, d.type, d.attrib, 3,
                                        PCQ_TEXT_GROUP, text, sizeof(text)) != ERROR_SUCCESS)
                        snprintf(text, sizeof(text), "%.3f", items[i].value);
                printf("  %-60s %20s\n", items[i].path, text);
        }
}

static void sleep_s(unsigned s)
{
        struct timespec ts = { .tv_sec = (time_t) s };

        /* A signal cuts it short (no SA_RESTART). */
        (void) nanosleep(&ts, NULL);
}

static int watch(pcq_conn *c, char **paths, int n_paths, unsigned interval_s, unsigned samples)
{
        pcq_counter **counters = calloc((size_t) n_paths, sizeof(*counters));
        pcq_query *q = NULL;
        uint32_t st;
        int ret = 1;

        if (!counters)
                return failed("allocating", PDH_MEMORY_ALLOCATION_FAILURE);
        st = pcq_query_new(c, &q);
        if (st != ERROR_SUCCESS) {
                failed("creating the query", st);
                goto done;
        }
        for (int i = 0; i < n_paths; i++) {
                st = pcq_query_add(q, paths[i], &counters[i]);
                if (st != ERROR_SUCCESS) {
                        fprintf(stderr, PROGRAM ": %s: %s\n", paths[i], pcq_query_error(q));
                        goto done;
                }
        }
        /* The first sample only primes the rate counters. */
        st = pcq_query_collect(q);
        for (unsigned k = 0; st == ERROR_SUCCESS && !stop_requested &&
                             (samples == 0 || k < samples); k++) {
                time_t now;
                char stamp[32];

                sleep_s(interval_s);
                if (stop_requested)
                        break;
                st = pcq_query_collect(q);
                if (st != ERROR_SUCCESS)
                        break;
                now = time(NULL);
                strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", localtime(&now));
                printf("%s\n", stamp);
                for (int i = 0; i < n_paths; i++)
                        print_values(counters[i]);
                fflush(stdout);
        }
        if (st != ERROR_SUCCESS)
                failed("collecting", st);
        else
                ret = 0;
done:
        pcq_query_free(q);
        free(counters);
        return ret;
}

/* ---- the command line ---- */

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: " PROGRAM " [OPTION]... [PATH]...\n"
                "       " PROGRAM " [-H HOST] --list\n"
                "Print counter values from perflibd every interval, formatted as their types\n"
                "say, or list the countersets.  PATH is a counter path as PDH writes it\n"
                "(default '%s').\n"
                "\n"
                "  -H, --host HOST         the machine (default: the local perflibd)\n"
                "  -i, --interval SECONDS  time between samples (default 1)\n"
                "  -n, --samples COUNT     stop after COUNT samples (default: until interrupted)\n"
                "  -l, --list              list the countersets and exit\n"
                "  -h, --help              show this help and exit\n", DEFAULT_PATH);
}

static int parse_uint(const char *s, unsigned min, unsigned *ret)
{
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-' || v < min || v > 86400)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "host", required_argument, NULL, 'H' },
                { "interval", required_argument, NULL, 'i' },
                { "samples", required_argument, NULL, 'n' },
                { "list", no_argument, NULL, 'l' },
                { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        static char *default_paths[] = { (char *) DEFAULT_PATH };
        struct sigaction sa = { .sa_handler = on_signal };
        const char *host = NULL;
        unsigned interval_s = 1, samples = 0;
        int c, do_list = 0, ret;
        pcq_conn *conn;
        uint32_t st;

        while ((c = getopt_long(argc, argv, "H:i:n:lh", opts, NULL)) != -1) {
                switch (c) {
                case 'H':
                        host = optarg;
                        break;
                case 'i':
                        if (parse_uint(optarg, 1, &interval_s) < 0) {
                                fprintf(stderr, PROGRAM ": invalid interval '%s'\n", optarg);
                                return 2;
                        }
                        break;
                case 'n':
                        if (parse_uint(optarg, 1, &samples) < 0) {
                                fprintf(stderr, PROGRAM ": invalid sample count '%s'\n", optarg);
                                return 2;
                        }
                        break;
                case 'l':
                        do_list = 1;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0) {
                fprintf(stderr, PROGRAM ": sigaction: %s\n", strerror(errno));
                return 1;
        }
        st = pcq_connect(host, 5000, &conn);
        if (st != ERROR_SUCCESS) {
                /* Names the socket or port tried, the error and what to do. */
                fprintf(stderr, PROGRAM ": %s\n", pcq_connect_error());
                return 1;
        }
        if (do_list)
                ret = list(conn);
        else if (optind < argc)
                ret = watch(conn, argv + optind, argc - optind, interval_s, samples);
        else
                ret = watch(conn, default_paths, 1, interval_s, samples);
        pcq_conn_free(conn);
        return ret;
}
