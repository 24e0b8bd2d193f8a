/* SPDX-License-Identifier: MIT */
/*
 * perflib-top: watch every provider in the runtime directory and print its
 * countersets, instances and raw counter values every interval.
 *
 * It reads segments through the internal reader (reader.h), so it sees
 * exactly what perflibd will see, and it reports providers as they appear
 * and disappear.  Segment contents are untrusted: instance names are
 * escaped before they reach the terminal.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "reader.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

#define NAME_COL_MIN 12
#define NAME_COL_MAX 40
#define VALUE_COL 16

struct options {
        unsigned interval_ms;
        unsigned long samples;          /* 0: until interrupted */
        bool collect;
        const char *runtime_dir;        /* NULL: pl_runtime_dir() */
};

/* One provider socket found in the runtime directory. */
struct watched {
        char *path;
        struct pl_reader *reader;       /* NULL when it could not be opened */
        int error;                      /* the last failure to open it, -errno */
        bool seen;                      /* listed by the latest scan */
        char user[64];                  /* who it runs as (SO_PEERCRED): name, else uid */
        struct watched *next;
};

struct state {
        struct watched *list;
        int error;                      /* -errno from the scan callback */
};

static volatile sig_atomic_t stop_requested;

/* Diagnostics go to stderr, after whatever stdout already holds. */
__attribute__((format(printf, 1, 2)))
static void warn(const char *fmt, ...)
{
        va_list ap;

        fflush(stdout);
        fputs("perflib-top: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

static void on_signal(int sig)
{
        stop_requested = sig;
}

static void format_guid(const GUID *g, char buf[static 39])
{
        snprintf(buf, 39, "{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}",
                 (unsigned) g->Data1, (unsigned) g->Data2, (unsigned) g->Data3,
                 g->Data4[0], g->Data4[1], g->Data4[2], g->Data4[3],
                 g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
}

static const char *instance_type_name(uint32_t t)
{
        switch (t) {
        case PERF_COUNTERSET_SINGLE_INSTANCE:           return "single-instance";
        case PERF_COUNTERSET_MULTI_INSTANCES:           return "multi-instance";
        case PERF_COUNTERSET_SINGLE_AGGREGATE:          return "single-aggregate";
        case PERF_COUNTERSET_MULTI_AGGREGATE:           return "multi-aggregate";
        case PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY:  return "single-aggregate-history";
        case PERF_COUNTERSET_INSTANCE_AGGREGATE:        return "instance-aggregate";
        default:                                        return "unknown-instance-type";
        }
}

/* Short names for column headings; the full names are in winperf.h. */
static const char *counter_type_name(uint32_t t)
{
        static const struct {
                uint32_t type;
                const char *name;
        } names[] = {
                { PERF_COUNTER_RAWCOUNT, "rawcount" },
                { PERF_COUNTER_LARGE_RAWCOUNT, "large_raw" },
                { PERF_COUNTER_RAWCOUNT_HEX, "raw_hex" },
                { PERF_COUNTER_LARGE_RAWCOUNT_HEX, "large_raw_hex" },
                { PERF_COUNTER_COUNTER, "counter" },
                { PERF_COUNTER_BULK_COUNT, "bulk_count" },
                { PERF_COUNTER_TIMER, "timer" },
                { PERF_COUNTER_TIMER_INV, "timer_inv" },
                { PERF_100NSEC_TIMER, "100ns_timer" },
                { PERF_100NSEC_TIMER_INV, "100ns_tmr_inv" },
                { PERF_COUNTER_QUEUELEN_TYPE, "queuelen" },
                { PERF_COUNTER_LARGE_QUEUELEN_TYPE, "large_queuelen" },
                { PERF_RAW_FRACTION, "raw_fraction" },
                { PERF_LARGE_RAW_FRACTION, "large_raw_frac" },
                { PERF_RAW_BASE, "raw_base" },
                { PERF_LARGE_RAW_BASE, "large_raw_base" },
                { PERF_SAMPLE_FRACTION, "sample_frac" },
                { PERF_SAMPLE_COUNTER, "sample_counter" },
                { PERF_SAMPLE_BASE, "sample_base" },
                { PERF_AVERAGE_TIMER, "avg_timer" },
                { PERF_AVERAGE_BULK, "avg_bulk" },
                { PERF_AVERAGE_BASE, "avg_base" },
                { PERF_ELAPSED_TIME, "elapsed" },
                { PERF_COUNTER_DELTA, "delta" },
                { PERF_COUNTER_LARGE_DELTA, "large_delta" },
        };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (names[i].type == t)
                        return names[i].name;
        return NULL;
}

static bool shown_as_hex(const struct pl_seg_counter *c)
{
        return c->type == PERF_COUNTER_RAWCOUNT_HEX ||
               c->type == PERF_COUNTER_LARGE_RAWCOUNT_HEX ||
               (c->attrib & PERF_ATTRIB_DISPLAY_AS_HEX);
}

/*
 * Writes name as UTF-8 into buf (NUL-terminated, truncated to fit), with
 * control characters and invalid code points escaped: a segment may hold
 * anything, and none of it may drive the terminal.
 */
static void escape_name(const wchar_t *name, char *buf, size_t size)
{
        size_t n = 0;

        for (; *name; name++) {
                uint32_t c = (uint32_t) *name;
                char tmp[16];
                size_t len;

                if (c < 0x20 || (c >= 0x7f && c < 0xa0))
                        len = (size_t) snprintf(tmp, sizeof(tmp), "\\x%02x", (unsigned) c);
                else if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
                        len = (size_t) snprintf(tmp, sizeof(tmp), "\\u{%x}", (unsigned) c);
                else if (c == '\\')
                        len = (size_t) snprintf(tmp, sizeof(tmp), "\\\\");
                else if (c < 0x80) {
                        tmp[0] = (char) c;
                        len = 1;
                } else if (c < 0x800) {
                        tmp[0] = (char) (0xc0 | (c >> 6));
                        tmp[1] = (char) (0x80 | (c & 0x3f));
                        len = 2;
                } else if (c < 0x10000) {
                        tmp[0] = (char) (0xe0 | (c >> 12));
                        tmp[1] = (char) (0x80 | ((c >> 6) & 0x3f));
                        tmp[2] = (char) (0x80 | (c & 0x3f));
                        len = 3;
                } else {
                        tmp[0] = (char) (0xf0 | (c >> 18));
                        tmp[1] = (char) (0x80 | ((c >> 12) & 0x3f));
                        tmp[2] = (char) (0x80 | ((c >> 6) & 0x3f));
                        tmp[3] = (char) (0x80 | (c & 0x3f));
                        len = 4;
                }
                if (n + len >= size)
                        break;
                memcpy(buf + n, tmp, len);
                n += len;
        }
        buf[n] = '\0';
}

/* Characters on screen of a UTF-8 string (one per code point: good enough). */
static size_t display_width(const char *s)
{
        size_t w = 0;

        for (; *s; s++)
                w += ((unsigned char) *s & 0xc0) != 0x80;
        return w;
}

static void print_padded(const char *s, size_t width)
{
        size_t w = display_width(s);

        fputs(s, stdout);
        for (; w < width; w++)
                putchar(' ');
}

static int compare_instances(const void *a, const void *b)
{
        const struct pl_instance *x = *(const struct pl_instance * const *) a;
        const struct pl_instance *y = *(const struct pl_instance * const *) b;
        int k = wcscmp(x->name, y->name);

        if (k != 0)
                return k;
        return x->instance_id < y->instance_id ? -1 : x->instance_id > y->instance_id;
}

static void print_counter_headings(const struct pl_counterset *cs, size_t name_col)
{
        printf("    ");
        print_padded("INSTANCE", name_col);
        printf(" %10s", "ID");
        for (uint32_t i = 0; i < cs->num_counters; i++) {
                const struct pl_seg_counter *c = &cs->counters[i];
                const char *tn = counter_type_name(c->type);
                char head[64];

                if (tn)
                        snprintf(head, sizeof(head), "#%u %s%s", (unsigned) c->id, tn,
                                 c->attrib & PERF_ATTRIB_BY_REFERENCE ? "*" : "");
                else
                        snprintf(head, sizeof(head), "#%u 0x%08x%s", (unsigned) c->id,
                                 (unsigned) c->type,
                                 c->attrib & PERF_ATTRIB_BY_REFERENCE ? "*" : "");
                printf(" %*s", VALUE_COL, head);
        }
        putchar('\n');
}

static void print_instance(const struct pl_counterset *cs, const struct pl_instance *in,
                           size_t name_col)
{
        char name[NAME_COL_MAX * 4 + 1];

        escape_name(in->name, name, sizeof(name));
        printf("    ");
        print_padded(name, name_col);
        printf(" %10u", (unsigned) in->instance_id);
        for (uint32_t i = 0; i < in->num_values && i < cs->num_counters; i++) {
                if (shown_as_hex(&cs->counters[i]))
                        printf(" %#*llx", VALUE_COL, (unsigned long long) in->values[i]);
                else
                        printf(" %*llu", VALUE_COL, (unsigned long long) in->values[i]);
        }
        putchar('\n');
}

/* The instances of counterset cs in s, sorted by name and id. */
static int select_instances(const struct pl_snapshot *s, uint32_t cset_index,
                            const struct pl_instance ***ret, size_t *ret_n)
{
        const struct pl_instance **v;
        size_t n = 0;

        v = calloc(s->n_instances ? s->n_instances : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (uint32_t i = 0; i < s->n_instances; i++)
                if (s->instances[i].cset_index == cset_index)
                        v[n++] = &s->instances[i];
        qsort(v, n, sizeof(*v), compare_instances);
        *ret = v;
        *ret_n = n;
        return 0;
}

static int print_counterset(const struct pl_counterset *cs, const struct pl_snapshot *s)
{
        const struct pl_instance **v;
        size_t n, name_col = NAME_COL_MIN;
        char guid[39];
        int k;

        k = select_instances(s, cs->index, &v, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                char name[NAME_COL_MAX * 4 + 1];

                escape_name(v[i]->name, name, sizeof(name));
                size_t w = display_width(name);
                if (w > name_col)
                        name_col = w > NAME_COL_MAX ? NAME_COL_MAX : w;
        }
        format_guid(&cs->guid, guid);
        printf("  counterset %s  %s, %u counters, %zu instance%s\n", guid,
               instance_type_name(cs->instance_type), (unsigned) cs->num_counters,
               n, n == 1 ? "" : "s");
        if (n > 0)
                print_counter_headings(cs, name_col);
        for (size_t i = 0; i < n; i++)
                print_instance(cs, v[i], name_col);
        free(v);
        return 0;
}

static int print_provider(struct watched *w, const struct options *o)
{
        struct pl_snapshot *s = NULL;
        char guid[39];
        GUID g;
        uint32_t pid;
        int k, n;

        k = pl_reader_provider(w->reader, &g, &pid);
        if (k < 0)
                return k;
        n = pl_reader_counterset_count(w->reader);
        if (n < 0)
                return n;
        k = pl_reader_snapshot(w->reader, PL_ALL_COUNTERSETS,
                               o->collect ? PL_SNAPSHOT_COLLECT : 0, &s);
        if (k < 0)
                return k;
        format_guid(&g, guid);
        printf("provider %s  pid %u  user %s  generation %llu%s\n", guid, (unsigned) pid, w->user,
               (unsigned long long) s->generation,
               s->refs_stale ? "  (reference counters stale: collect timed out)" : "");
        for (int i = 0; i < n && k >= 0; i++) {
                const struct pl_counterset *cs;

                k = pl_reader_counterset(w->reader, (uint32_t) i, &cs);
                if (k >= 0)
                        k = print_counterset(cs, s);
        }
        pl_snapshot_free(s);
        return k < 0 ? k : 0;
}

/* ---- tracking providers ---- */

static void watched_free(struct watched *w)
{
        if (!w)
                return;
        pl_reader_close(w->reader);
        free(w->path);
        free(w);
}

static struct watched *watched_find(struct state *st, const char *path)
{
        for (struct watched *w = st->list; w; w = w->next)
                if (strcmp(w->path, path) == 0)
                        return w;
        return NULL;
}

static int on_socket(const char *path, void *userdata)
{
        struct state *st = userdata;
        struct watched *w = watched_find(st, path);

        if (w) {
                w->seen = true;
                return 0;
        }
        w = calloc(1, sizeof(*w));
        if (!w || !(w->path = strdup(path))) {
                free(w);
                st->error = -ENOMEM;
                return -ENOMEM;
        }
        w->seen = true;
        /* Appended, so that providers are listed in the order they appeared. */
        struct watched **pp = &st->list;
        while (*pp)
                pp = &(*pp)->next;
        *pp = w;
        return 0;
}

static void report_provider(const char *what, struct watched *w)
{
        GUID g;
        uint32_t pid;
        char guid[39];

        if (pl_reader_provider(w->reader, &g, &pid) == 0) {
                format_guid(&g, guid);
                printf("%s provider %s pid %u (%s)\n", what, guid, (unsigned) pid, w->path);
        } else
                printf("%s provider (%s)\n", what, w->path);
}

/*
 * Decides what becomes of one entry after a scan: true keeps it.  A live
 * reader is kept for as long as its provider lives, listed or not (the
 * connection, not the file, is the authority).  An entry that could not be
 * opened is forgotten once its socket is gone, retried while the failure may
 * be transient, and reported once per distinct failure.
 */
/*
 * The user w's provider runs as, once when it is opened: the kernel's word
 * (its socket's peer credentials), which perflibd also goes by to decide
 * whose countersets it may publish.
 */
static void user_of(struct watched *w)
{
        struct passwd *pw;
        uid_t uid;

        if (pl_reader_peer_uid(w->reader, &uid) < 0) {
                snprintf(w->user, sizeof(w->user), "?");
                return;
        }
        pw = getpwuid(uid);
        if (pw)
                snprintf(w->user, sizeof(w->user), "%s", pw->pw_name);
        else
                snprintf(w->user, sizeof(w->user), "%u", (unsigned) uid);
}

static bool refresh_one(struct watched *w)
{
        int k;

        if (w->reader) {
                if (pl_reader_alive(w->reader) > 0)
                        return true;
                report_provider("-", w);
                return false;
        }
        if (!w->seen)
                return false;
        if (w->error != 0 && w->error != -ETIMEDOUT && w->error != -EAGAIN)
                return true;
        k = pl_reader_open(w->path, &w->reader);
        if (k == 0) {
                w->error = 0;
                user_of(w);
                report_provider("+", w);
                return true;
        }
        /* Gone between scan and open: nothing to report. */
        if (k == -ECONNREFUSED || k == -ENOENT)
                return false;
        if (k != w->error)
                warn("cannot open provider %s: %s",
                        w->path, strerror(-k));
        w->error = k;
        return true;
}

static void refresh(struct state *st)
{
        struct watched **pp = &st->list;

        while (*pp) {
                struct watched *w = *pp;

                if (refresh_one(w)) {
                        pp = &w->next;
                } else {
                        *pp = w->next;
                        watched_free(w);
                }
        }
}

/* ---- the loop ---- */

static int sample(struct state *st, const char *dir, const struct options *o,
                  unsigned long number, bool *warned_missing)
{
        unsigned reclaimed = 0;
        size_t live = 0;
        char stamp[32];
        time_t now;
        int k;

        for (struct watched *w = st->list; w; w = w->next)
                w->seen = false;
        st->error = 0;
        k = pl_scan(dir, on_socket, st, &reclaimed);
        if (k == -ENOENT) {
                /* No provider has created it yet: nothing to show. */
                if (!*warned_missing)
                        warn("%s does not exist (yet): no providers",
                                dir);
                *warned_missing = true;
        } else if (k < 0 || st->error < 0) {
                k = st->error < 0 ? st->error : k;
                warn("cannot scan %s: %s", dir, strerror(-k));
                return k;
        }
        now = time(NULL);
        strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime(&now));
        printf("=== %s  sample %lu", stamp, number);
        if (o->samples)
                printf("/%lu", o->samples);
        printf("  %s", dir);
        if (reclaimed)
                printf("  (reclaimed %u stale socket%s)", reclaimed, reclaimed == 1 ? "" : "s");
        putchar('\n');

        /* Appearances and disappearances are reported here, under the heading. */
        refresh(st);
        for (struct watched *w = st->list; w; w = w->next)
                live += w->reader != NULL;
        if (live == 0)
                printf("(no providers)\n");

        for (struct watched *w = st->list; w; w = w->next) {
                if (!w->reader)
                        continue;
                k = print_provider(w, o);
                if (k == -ENOMEM)
                        return k;
                if (k < 0)
                        warn("cannot read provider %s: %s",
                                w->path, strerror(-k));
        }
        putchar('\n');
        fflush(stdout);
        return 0;
}

static void sleep_ms(unsigned ms)
{
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L };

        /* Interrupted by SIGINT/SIGTERM: the caller sees stop_requested. */
        (void) nanosleep(&ts, NULL);
}

static int run(const char *dir, const struct options *o)
{
        struct state st = { 0 };
        bool warned_missing = false;
        int ret = 0;

        for (unsigned long i = 1; !stop_requested && (o->samples == 0 || i <= o->samples); i++) {
                if (i > 1)
                        sleep_ms(o->interval_ms);
                if (stop_requested)
                        break;
                if (sample(&st, dir, o, i, &warned_missing) < 0) {
                        ret = -1;
                        break;
                }
        }
        while (st.list) {
                struct watched *w = st.list;
                st.list = w->next;
                watched_free(w);
        }
        return ret;
}

/* ---- command line ---- */

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: perflib-top [OPTION]...\n"
                "Print the countersets, instances and raw counter values of every Perflib\n"
                "provider in the runtime directory, every interval.\n"
                "\n"
                "  -i, --interval MS      time between samples (default 1000)\n"
                "  -n, --samples COUNT    stop after COUNT samples (default: until interrupted)\n"
                "  -1, --once             print one sample and exit (same as -n 1)\n"
                "  -r, --runtime-dir DIR  read providers from DIR instead of $PERFLIB_RUNTIME_DIR\n"
                "      --no-collect       do not refresh reference counters through the\n"
                "                         providers' collect service\n"
                "  -h, --help             show this help and exit\n"
                "  -V, --version          show the version and exit\n"
                "\n"
                "Exit status: 0 success, 1 runtime error, 2 usage error.  See perflib-top(1).\n");
}

static int parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *ret)
{
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
                return -1;
        *ret = v;
        return 0;
}

/* 0: run; 1: exit 0 now (help, version); -1: usage error. */
static int parse_args(int argc, char **argv, struct options *o)
{
        enum { OPT_NO_COLLECT = 0x100 };
        static const struct option opts[] = {
                { "interval", required_argument, NULL, 'i' },
                { "samples", required_argument, NULL, 'n' },
                { "once", no_argument, NULL, '1' },
                { "runtime-dir", required_argument, NULL, 'r' },
                { "no-collect", no_argument, NULL, OPT_NO_COLLECT },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { NULL, 0, NULL, 0 },
        };
        unsigned long v;
        int c;

        while ((c = getopt_long(argc, argv, "i:n:1r:hV", opts, NULL)) != -1) {
                switch (c) {
                case 'i':
                        if (parse_ulong(optarg, 1, 3600UL * 1000, &v) < 0) {
                                fprintf(stderr, "perflib-top: invalid interval '%s' (1..3600000 ms)\n",
                                        optarg);
                                return -1;
                        }
                        o->interval_ms = (unsigned) v;
                        break;
                case 'n':
                        if (parse_ulong(optarg, 1, (unsigned long) -1 / 2, &v) < 0) {
                                fprintf(stderr, "perflib-top: invalid sample count '%s'\n", optarg);
                                return -1;
                        }
                        o->samples = v;
                        break;
                case '1':
                        o->samples = 1;
                        break;
                case 'r':
                        if (!*optarg) {
                                fprintf(stderr, "perflib-top: empty runtime directory\n");
                                return -1;
                        }
                        o->runtime_dir = optarg;
                        break;
                case OPT_NO_COLLECT:
                        o->collect = false;
                        break;
                case 'h':
                        usage(stdout);
                        return 1;
                case 'V':
                        printf("perflib-top (perflib-linux) %s\n", PACKAGE_VERSION);
                        return 1;
                default:
                        fprintf(stderr, "Try 'perflib-top --help' for more information.\n");
                        return -1;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "perflib-top: unexpected argument '%s'\n"
                        "Try 'perflib-top --help' for more information.\n", argv[optind]);
                return -1;
        }
        return 0;
}

int main(int argc, char **argv)
{
        struct options o = { .interval_ms = 1000, .collect = true };
        struct sigaction sa = { .sa_handler = on_signal };
        char *dir = NULL;
        int k;

        k = parse_args(argc, argv, &o);
        if (k != 0)
                return k > 0 ? EXIT_SUCCESS : EXIT_USAGE;

        /* No SA_RESTART: a signal cuts the sleep short and ends the loop. */
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0) {
                fprintf(stderr, "perflib-top: sigaction: %s\n", strerror(errno));
                return EXIT_RUNTIME;
        }
        /* A reader that stops reading must not be killed by a closed pipe. */
        signal(SIGPIPE, SIG_IGN);

        if (o.runtime_dir) {
                dir = strdup(o.runtime_dir);
                k = dir ? 0 : -ENOMEM;
        } else
                k = pl_runtime_dir(&dir);
        if (k < 0) {
                warn("cannot determine the runtime directory: %s",
                        strerror(-k));
                return EXIT_RUNTIME;
        }
        k = run(dir, &o);
        free(dir);
        return k < 0 ? EXIT_RUNTIME : EXIT_SUCCESS;
}
