/* SPDX-License-Identifier: MIT */
/*
 * bench-pmcd: what bench-perflibd's queries cost through PCP's pmcd, so that
 * perflibd's figures can be printed beside those of the tool Linux people
 * already know.  Prints figures; never fails on a timing.
 *
 * For each shape an MMV file (PCP's memory-mapped values, written with
 * libpcp_mmv) holds N instances of M 64-bit metrics; pmcd's mmv PMDA serves
 * it as mmv.<file>.m00 ... and the client times one pmFetch of the M
 * metrics, which returns every instance: p50 and p99 over many fetches after
 * a warm-up, with the client on CPU 0 and pmcd pinned to CPU 0, then CPU 1.
 *
 * Needs a running pmcd with the mmv PMDA and write access to
 * $PCP_TMP_DIR/mmv (root, or the pcp group); without them it prints one
 * "# pmcd: ... skipped" line and exits 0.  See README.md.
 *
 * Usage: bench-pmcd [--quick]
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_PCP_MMV
#include <pcp/pmapi.h>
#include <pcp/mmv_stats.h>
#endif

static bool quick;

#ifdef HAVE_PCP_MMV

#define WARMUP 10u              /* fetches before the timed ones, as bench-perflibd */
#define MAX_METRICS 16u
#define MAX_PINNED 64u          /* threads of pmcd and of a separate mmv PMDA */
#define LOOKUP_TRIES 100u       /* of 100 ms: how long the mmv PMDA may take to see a file */
#define CLUSTER 3900            /* + the shape's index: files sharing a cluster clash */

struct shape {
        int index;              /* in shapes[], for the MMV cluster */
        const char *name;       /* in the figures: pmcd-query-<name>-... */
        const char *file;       /* the MMV file, so mmv.<file>.*: PCP names allow no '-' */
        unsigned instances, metrics;
        unsigned fetches;       /* bench-perflibd's iterations for the same shape */
};

/* bench-perflibd's shapes; its 1-value is instance i0 of a 1-instance set, as here. */
static const struct shape shapes[] = {
        { 0, "1-value", "perflib_bench_1value", 1, 1, 5000 },
        { 1, "1000x1", "perflib_bench_1000x1", 1000, 1, 1000 },
        { 2, "1000x16", "perflib_bench_1000x16", 1000, 16, 300 },
        { 3, "10000x1", "perflib_bench_10000x1", 10000, 1, 200 },
};

/* A thread of pmcd or of its mmv PMDA, and its CPU mask before we pinned it. */
struct pinned {
        pid_t tid;
        cpu_set_t saved;
};

/*
 * Static so that the signal handler can undo what the run changed: the MMV
 * file being served ("" if none) and the server threads' masks.
 */
static char mmv_path[PATH_MAX];
static struct pinned pins[MAX_PINNED];
static volatile sig_atomic_t n_pins;

/* A step that failed: says what and why; the caller unwinds. */
__attribute__((format(printf, 1, 2)))
static int fail(const char *fmt, ...)
{
        va_list ap;

        fflush(stdout);
        fputs("bench-pmcd: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return -1;
}

/* PCP is not usable here: one comment line, and the run ends with success. */
__attribute__((format(printf, 1, 2)))
static int skip(const char *fmt, ...)
{
        va_list ap;

        fputs("# pmcd: ", stdout);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        fputs(": skipped\n", stdout);
        return 1;
}

static const char *pcp_error(int code)
{
        static char buf[PM_MAXERRMSGLEN];

        return pmErrStr_r(code, buf, sizeof(buf));
}

static double now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

/* ---- pinning ---- */

/* Remembers every thread of pid with its current mask; -errno on failure. */
static int add_pinned(pid_t pid)
{
        char path[64];
        struct dirent *de;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        d = opendir(path);
        if (!d)
                return -errno;
        while ((de = readdir(d)) && n_pins < (sig_atomic_t) MAX_PINNED) {
                struct pinned *p = &pins[n_pins];
                long tid = strtol(de->d_name, NULL, 10);

                if (tid <= 0)
                        continue;
                p->tid = (pid_t) tid;
                if (sched_getaffinity(p->tid, sizeof(p->saved), &p->saved) == 0)
                        n_pins++;
        }
        closedir(d);
        return 0;
}

static bool comm_is(pid_t pid, const char *name)
{
        char path[64], comm[32] = "";
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return false;
        if (!fgets(comm, sizeof(comm), f))
                comm[0] = '\0';
        fclose(f);
        comm[strcspn(comm, "\n")] = '\0';
        return strcmp(comm, name) == 0;
}

/*
 * pmcd.conf may run the mmv PMDA as its own process (pmdammv) instead of as a
 * DSO inside pmcd; it then serves our fetches too and is pinned with pmcd.
 * Returns how many such processes were found.
 */
static unsigned add_mmv_pmda(void)
{
        struct dirent *de;
        unsigned found = 0;
        DIR *d = opendir("/proc");

        if (!d)
                return 0;
        while ((de = readdir(d))) {
                long pid = strtol(de->d_name, NULL, 10);

                if (pid > 0 && comm_is((pid_t) pid, "pmdammv") && add_pinned((pid_t) pid) == 0)
                        found++;
        }
        closedir(d);
        return found;
}

/*
 * Moves the server's threads to cpu, or back to their masks if cpu < 0;
 * tries every thread, returns the first error.
 */
static int pin_server(int cpu)
{
        cpu_set_t set;
        int r = 0;

        CPU_ZERO(&set);
        if (cpu >= 0)
                CPU_SET(cpu, &set);
        for (sig_atomic_t i = 0; i < n_pins; i++)
                if (sched_setaffinity(pins[i].tid, sizeof(set), cpu >= 0 ? &set : &pins[i].saved) < 0
                    && errno != ESRCH && r == 0)
                        r = -errno;
        return r;
}

static int pin_self(int cpu)
{
        cpu_set_t set;

        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

/* Only system calls: pmcd gets its CPUs back and our file goes, even on ^C. */
static void on_signal(int sig)
{
        if (mmv_path[0])
                (void) unlink(mmv_path);
        (void) pin_server(-1);
        signal(sig, SIG_DFL);
        raise(sig);
}

static void catch_signals(void)
{
        struct sigaction sa = { .sa_handler = on_signal };

        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
}

/* ---- pmcd ---- */

/* The value of a singular metric as type; the caller frees a string. */
static int fetch_singular(const char *name, int type, pmAtomValue *ret)
{
        pmResult *r;
        pmDesc desc;
        pmID id;
        int k;

        k = pmLookupName(1, &name, &id);
        if (k < 0)
                return k;
        k = pmLookupDesc(id, &desc);
        if (k < 0)
                return k;
        k = pmFetch(1, &id, &r);
        if (k < 0)
                return k;
        if (r->numpmid != 1 || r->vset[0]->numval != 1)
                k = r->numpmid == 1 && r->vset[0]->numval < 0 ? r->vset[0]->numval : PM_ERR_VALUE;
        else
                k = pmExtractValue(r->vset[0]->valfmt, &r->vset[0]->vlist[0], desc.type, ret, type);
        pmFreeResult(r);
        return k < 0 ? k : 0;
}

/* pmcd's version and pid, and whether the mmv PMDA is there; > 0 if it is not. */
static int describe_pmcd(pid_t *ret_pid)
{
        pmAtomValue pid, version;
        const char *reload = "mmv.control.reload";
        pmID id;
        int k;

        k = pmLookupName(1, &reload, &id);
        if (k < 0)
                return skip("pmcd has no mmv PMDA, %s (see pmcd.conf)", pcp_error(k));
        k = fetch_singular("pmcd.pid", PM_TYPE_32, &pid);
        if (k < 0)
                return fail("cannot fetch pmcd.pid: %s", pcp_error(k));
        if (fetch_singular("pmcd.version", PM_TYPE_STRING, &version) < 0)
                version.cp = NULL;
        printf("# pmcd %s, pid %d, at local:\n", version.cp ? version.cp : "(unknown version)",
               (int) pid.l);
        free(version.cp);
        *ret_pid = (pid_t) pid.l;
        return 0;
}

/*
 * Pins pmcd (and a separate mmv PMDA) to CPU 0 if we may; else says so, and
 * the figures are labelled "unpinned".  Returns whether pmcd is pinned.
 */
static bool pin_pmcd(pid_t pmcd)
{
        unsigned n_mmv;
        int k;

        /* pmcd.pid is in pmcd's pid namespace, which need not be ours. */
        k = comm_is(pmcd, "pmcd") ? add_pinned(pmcd) : -ESRCH;
        n_mmv = add_mmv_pmda();
        printf("# the mmv PMDA runs %s\n",
               n_mmv ? "as its own process (pmdammv), pinned with pmcd" : "inside pmcd (DSO)");
        if (k == 0)
                k = pin_server(0);
        if (k < 0 || n_pins == 0) {
                printf("# pmcd: cannot pin pmcd (pid %d) to a CPU (%s): figures are unpinned\n",
                       (int) pmcd, k < 0 ? strerror(-k) : "no threads");
                (void) pin_server(-1);
                n_pins = 0;
                return false;
        }
        return true;
}

/* ---- the MMV file of a shape ---- */

/* Where mmv_stats_start puts the file, and where the mmv PMDA looks. */
static void mmv_file_path(const struct shape *s, char *buf, size_t size)
{
        snprintf(buf, size, "%s/mmv/%s", pmGetConfig("PCP_TMP_DIR"), s->file);
}

/*
 * Files a killed run left behind: pmcd would serve them, stale, beside ours.
 * The names are ours, so they go.
 */
static void remove_stale_files(void)
{
        char path[PATH_MAX];

        for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
                mmv_file_path(&shapes[i], path, sizeof(path));
                (void) unlink(path);
        }
}

/*
 * The registry keeps pointers to these names, not copies, until
 * mmv_stats_start writes them into the file: they outlive it.
 */
struct names {
        char (*inst)[16];                       /* "i0" ..., one per instance */
        char metric[MAX_METRICS][16];           /* "m00" ... */
};

static int make_names(const struct shape *s, struct names *n)
{
        n->inst = calloc(s->instances, sizeof(*n->inst));
        if (!n->inst)
                return fail("out of memory");
        for (unsigned i = 0; i < s->instances; i++)
                snprintf(n->inst[i], sizeof(n->inst[i]), "i%u", i);
        for (unsigned m = 0; m < s->metrics; m++)
                snprintf(n->metric[m], sizeof(n->metric[m]), "m%02u", m);
        return 0;
}

/* Instances i0..iN-1 (ids 0..N-1) of 64-bit counters m00..mMM. */
static int fill_registry(mmv_registry_t *reg, const struct shape *s, const struct names *n)
{
        static const pmUnits count = MMV_UNITS(0, 0, 1, 0, 0, PM_COUNT_ONE);

        if (mmv_stats_add_indom(reg, 1, "bench instances", "bench-pmcd's instances") < 0)
                return -1;
        for (unsigned i = 0; i < s->instances; i++) {
                /*
                 * PCP 6.0's mmv_stats_add_instance returns -1 (EINVAL) even when
                 * it added the instance (its search for the indom runs past the
                 * match), so only ENOMEM is believed; check_result later sees
                 * every instance in pmcd's answer.
                 */
                errno = 0;
                if (mmv_stats_add_instance(reg, 1, (int) i, n->inst[i]) < 0 && errno == ENOMEM)
                        return -1;
        }
        for (unsigned m = 0; m < s->metrics; m++)
                if (mmv_stats_add_metric(reg, n->metric[m], (int) m + 1, MMV_TYPE_U64,
                                         MMV_SEM_COUNTER, count, 1, "bench counter",
                                         "bench-pmcd's counter") < 0)
                        return -1;
        return 0;
}

static uint64_t value_of(unsigned inst, unsigned metric)
{
        return (uint64_t) inst * MAX_METRICS + metric;
}

static int set_values(void *addr, const struct shape *s, const struct names *n)
{
        for (unsigned m = 0; m < s->metrics; m++)
                for (unsigned i = 0; i < s->instances; i++) {
                        pmAtomValue *v = mmv_lookup_value_desc(addr, n->metric[m], n->inst[i]);

                        if (!v)
                                return fail("%s: no value for %s[%s]", s->file, n->metric[m],
                                            n->inst[i]);
                        v->ull = value_of(i, m);
                }
        return 0;
}

/* Creates the file; > 0 (skipped) if we may not write in $PCP_TMP_DIR/mmv. */
static int start_file(mmv_registry_t *reg, void **ret_addr)
{
        void *addr;
        int e;

        errno = 0;
        addr = mmv_stats_start(reg);
        if (addr) {
                *ret_addr = addr;
                return 0;
        }
        e = errno;
        if (e == EACCES || e == EPERM || e == ENOENT)
                return skip("cannot write %s (%s; root or the pcp group may)", mmv_path,
                            strerror(e));
        return fail("cannot create %s: %s", mmv_path, e ? strerror(e) : "invalid MMV layout");
}

/*
 * Writes the shape's MMV file, values set; *ret_reg owns its mapping
 * (unpublish).  > 0 if skipped.
 */
static int publish(const struct shape *s, mmv_registry_t **ret_reg)
{
        struct names n = { 0 };
        mmv_registry_t *reg = NULL;
        void *addr = NULL;
        int k;

        mmv_file_path(s, mmv_path, sizeof(mmv_path));
        k = make_names(s, &n);
        if (k == 0) {
                reg = mmv_stats_registry(s->file, CLUSTER + s->index, 0);
                if (!reg || fill_registry(reg, s, &n) < 0)
                        k = fail("%s: cannot describe the MMV file", s->file);
        }
        if (k == 0)
                k = start_file(reg, &addr);
        if (k == 0)
                k = set_values(addr, s, &n);
        free(n.inst);
        if (k != 0) {
                if (reg)
                        mmv_stats_free(reg);
                if (addr)
                        (void) unlink(mmv_path);
                mmv_path[0] = '\0';
                return k;
        }
        *ret_reg = reg;
        return 0;
}

/* Unmaps and removes the shape's MMV file; accepts NULL. */
static void unpublish(mmv_registry_t *reg)
{
        if (!reg)
                return;
        mmv_stats_free(reg);
        if (unlink(mmv_path) < 0 && errno != ENOENT)
                fail("cannot remove %s: %s", mmv_path, strerror(errno));
        mmv_path[0] = '\0';
}

/*
 * The mmv PMDA rescans its directory on requests, so a new file may take a
 * moment; > 0 (skipped) if the PMDA never takes it.
 */
static int lookup(const struct shape *s, pmID *ids)
{
        char buf[MAX_METRICS][MMV_NAMEMAX + 16];
        const char *names[MAX_METRICS];
        int k = PM_ERR_NAME;

        for (unsigned m = 0; m < s->metrics; m++) {
                snprintf(buf[m], sizeof(buf[m]), "mmv.%s.m%02u", s->file, m);
                names[m] = buf[m];
        }
        for (unsigned t = 0; t < LOOKUP_TRIES; t++) {
                k = pmLookupName((int) s->metrics, names, ids);
                if (k == (int) s->metrics)
                        return 0;
                if (k < 0 && k != PM_ERR_NAME)
                        return fail("%s: pmLookupName: %s", s->file, pcp_error(k));
                usleep(100000);
        }
        return skip("pmcd's mmv PMDA did not take %s within %u s (%s)", mmv_path,
                    LOOKUP_TRIES / 10, k < 0 ? pcp_error(k) : "only some of its metrics");
}

/* ---- timing ---- */

/* The fetch returned the shape: every metric, every instance; full checks each value. */
static int check_result(const struct shape *s, const pmID *ids, const pmResult *r, bool full)
{
        if (r->numpmid != (int) s->metrics)
                return fail("%s: pmFetch returned %d metrics, not %u", s->file, r->numpmid,
                            s->metrics);
        for (unsigned m = 0; m < s->metrics; m++) {
                const pmValueSet *vs = r->vset[m];

                if (vs->numval < 0)
                        return fail("%s: m%02u: %s", s->file, m, pcp_error(vs->numval));
                if (vs->pmid != ids[m] || vs->numval != (int) s->instances)
                        return fail("%s: m%02u: %d values, not %u", s->file, m, vs->numval,
                                    s->instances);
                for (int j = 0; full && j < vs->numval; j++) {
                        const pmValue *v = &vs->vlist[j];
                        pmAtomValue a;

                        if (v->inst < 0 || (unsigned) v->inst >= s->instances ||
                            pmExtractValue(vs->valfmt, v, PM_TYPE_U64, &a, PM_TYPE_U64) < 0 ||
                            a.ull != value_of((unsigned) v->inst, m))
                                return fail("%s: m%02u: wrong value for instance %d", s->file,
                                            m, v->inst);
                }
        }
        return 0;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

/* Times pmFetch of the shape's metrics; prints p50 and p99 in microseconds. */
static int time_fetches(const struct shape *s, pmID *ids, const char *placement)
{
        unsigned n = quick ? s->fetches / 10 + 1 : s->fetches;
        double *t = malloc(n * sizeof(*t));
        int k = 0;

        if (!t)
                return fail("out of memory");
        for (unsigned i = 0; i < n + WARMUP && k == 0; i++) {
                pmResult *r;
                double t0 = now_us(), dt;

                k = pmFetch((int) s->metrics, ids, &r);
                dt = now_us() - t0;
                if (k < 0) {
                        k = fail("%s: pmFetch: %s", s->file, pcp_error(k));
                        break;
                }
                /* Outside the timing, as bench-perflibd frees its buffer untimed. */
                k = check_result(s, ids, r, i == 0);
                pmFreeResult(r);
                if (i >= WARMUP)
                        t[i - WARMUP] = dt;
        }
        if (k == 0) {
                qsort(t, n, sizeof(*t), cmp_double);
                printf("pmcd-query-%s-%s-p50: %.1f us\n", s->name, placement, t[n / 2]);
                printf("pmcd-query-%s-%s-p99: %.1f us\n", s->name, placement,
                       t[(size_t) (n * 0.99)]);
                printf("# pmcd-query-%s: %u fetches of %u x %u values\n", s->name, n,
                       s->metrics, s->instances);
                fflush(stdout);
        }
        free(t);
        return k;
}

/* Publishes the shape, times it at each placement, removes it; > 0 if skipped. */
static int run_shape(const struct shape *s, bool pinned, long ncpu)
{
        mmv_registry_t *reg = NULL;
        pmID ids[MAX_METRICS];
        int k;

        k = publish(s, &reg);
        if (k == 0)
                k = lookup(s, ids);
        if (k == 0 && !pinned)
                k = time_fetches(s, ids, "unpinned");
        if (k == 0 && pinned) {
                k = pin_server(0);
                k = k < 0 ? fail("cannot pin pmcd: %s", strerror(-k)) :
                            time_fetches(s, ids, "same-cpu");
        }
        if (k == 0 && pinned && ncpu > 1) {
                k = pin_server(1);
                k = k < 0 ? fail("cannot pin pmcd: %s", strerror(-k)) :
                            time_fetches(s, ids, "two-cpus");
        }
        unpublish(reg);
        return k;
}

static int run(long ncpu)
{
        pid_t pmcd = 0;
        bool pinned;
        int ctx, k;

        ctx = pmNewContext(PM_CONTEXT_HOST, "local:");
        if (ctx < 0)
                return skip("cannot reach pmcd at local: (%s)", pcp_error(ctx));
        k = describe_pmcd(&pmcd);
        if (k == 0) {
                k = pin_self(0);
                if (k < 0)
                        k = fail("cannot pin ourselves to CPU 0: %s", strerror(-k));
        }
        if (k == 0) {
                catch_signals();
                remove_stale_files();
                pinned = pin_pmcd(pmcd);
                for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]) && k == 0; i++)
                        k = run_shape(&shapes[i], pinned, ncpu);
                if (pin_server(-1) < 0)
                        fail("cannot give pmcd its CPUs back: %s", strerror(errno));
        }
        pmDestroyContext(ctx);
        return k;
}

#else

static int run(long ncpu)
{
        (void) ncpu;
        printf("# pmcd: PCP's MMV library (pcp/mmv_stats.h, libpcp_mmv) was not found at "
               "configure time: skipped\n");
        return 1;
}

#endif

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: bench-pmcd [--quick]\n"
                "Print what fetching bench-perflibd's query shapes through PCP's pmcd costs:\n"
                "p50 and p99 microseconds, pmcd on the client's CPU and on another one.\n"
                "\n"
                "  -q, --quick   a tenth of the fetches: rougher figures, sooner\n"
                "  -h, --help    show this help and exit\n");
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "quick", no_argument, NULL, 'q' },
                { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        int c;

        while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
                switch (c) {
                case 'q':
                        quick = true;
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_SUCCESS;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (optind < argc) {
                usage(stderr);
                return 2;
        }
        printf("# bench-pmcd: %s run, %ld CPUs online\n", quick ? "quick" : "full", ncpu);
        fflush(stdout);
        return run(ncpu) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
