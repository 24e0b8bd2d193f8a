/* SPDX-License-Identifier: MIT */
/*
 * The Linux providers end to end: a real perflibd (unprivileged, private
 * runtime, registry and plugin directories) loads the plugins from the
 * build tree, and the PerflibV2 client enumerates their countersets,
 * instances and counter names and reads their raw values, which are
 * compared with what the test reads itself, or with procps and iproute2
 * tools, at about the same time.  Every tolerance is stated where it is
 * used, with why.
 *
 * One file because every case reads the same perflibd with every plugin
 * loaded (the group fixture); each provider's case is a screen or two.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemonutil.h"
#include "perflibv2.h"
#include "testutil.h"

#define MAX_COUNTERS    40
#define NAME_MAX_LEN    256

static struct du_daemon srv;
static struct pv2_client *client;

/* ---- the server ---- */

/* Links every provider plugin of the build tree into the plugin directory. */
static void link_plugins(void)
{
        char *pattern;
        glob_t g;

        assert_true(asprintf(&pattern, "%s/providers/*/.libs/*.so", getenv("top_builddir")) > 0);
        assert_int_equal(glob(pattern, 0, NULL, &g), 0);
        for (size_t i = 0; i < g.gl_pathc; i++) {
                char *link;
                const char *base = strrchr(g.gl_pathv[i], '/') + 1;

                assert_true(asprintf(&link, "%s/%s", srv.plugins, base) > 0);
                assert_int_equal(symlink(g.gl_pathv[i], link), 0);
                free(link);
        }
        globfree(&g);
        free(pattern);
}

static bool find_cset(const char *name, GUID *ret);

/*
 * perflibd listens once its plugins started or after 2 s; on a loaded
 * machine (sanitizers, parallel tests) a host may take longer.  Every
 * counterset the cases read is listed within 30 s, or the cases say which
 * is not; they are waited for by name, since a plugin may publish several
 * (netproto's eight would make any count of them come early).
 */
static void wait_all_plugins(void)
{
        static const char *const names[] = {
                "Processor", "Memory", "System", "Network Interface", "LogicalDisk",
                "PhysicalDisk", "Process",
        };
        size_t n = 0;
        GUID g;

        for (int i = 0; i < 300; i++) {
                while (n < sizeof(names) / sizeof(names[0]) && find_cset(names[n], &g))
                        n++;
                if (n == sizeof(names) / sizeof(names[0]))
                        return;
                usleep(100000);
        }
}

static int group_setup(void **state)
{
        assert_int_equal(du_init(&srv, tu_runtime_setup()), 0);
        link_plugins();
        /* perflibd's default collect bound: the providers must fit in it. */
        unsetenv("PERFLIB_COLLECT_TIMEOUT_MS");
        assert_int_equal(du_start(&srv, NULL, NULL), 0);
        assert_int_equal(du_connect(&srv, 10000, &client), 0);
        wait_all_plugins();
        return 0;
}

static int group_teardown(void **state)
{
        pv2_client_free(client);
        du_stop(&srv);
        tu_runtime_teardown();
        return 0;
}

/* ---- the wire ---- */

/* A NUL-terminated UTF-16LE string of ASCII characters, as ASCII (others as '?'). */
static void utf16_ascii(const uint8_t *p, size_t max_units, char *out, size_t size)
{
        size_t n = 0;

        for (size_t i = 0; i < max_units && n + 1 < size; i++) {
                uint16_t u = (uint16_t) (p[2 * i] | p[2 * i + 1] << 8);

                if (u == 0)
                        break;
                out[n++] = u < 0x80 ? (char) u : '?';
        }
        out[n] = '\0';
}

/* The counterset named name (RequestCode 9: its English name). */
static bool find_cset(const char *name, GUID *ret)
{
        struct pv2_out o = { 0 }, s = { 0 };
        bool found = false;
        char text[NAME_MAX_LEN];

        assert_int_equal(pv2_enumerate_counterset(client, NULL, 256, &o), ERROR_SUCCESS);
        for (uint32_t i = 0; i < o.out_size && !found; i++) {
                GUID g;

                memcpy(&g, o.data + 16 * i, 16);
                if (pv2_query_registration_info(client, NULL, &g, 9, 0, 4096, &s) != ERROR_SUCCESS)
                        continue;
                utf16_ascii(s.data, s.out_size / 2, text, sizeof(text));
                pv2_out_done(&s);
                if (strcmp(text, name) == 0) {
                        *ret = g;
                        found = true;
                }
        }
        pv2_out_done(&o);
        return found;
}

/* Whether the counterset has a counter of that English name (RequestCode 0xA); its id. */
static bool counter_id(const GUID *cs, const char *name, uint32_t *ret_id)
{
        struct pv2_out o = { 0 };
        uint32_t n;
        bool found = false;
        char text[NAME_MAX_LEN];

        assert_int_equal(pv2_query_registration_info(client, NULL, cs, 0xA, 0, 1 << 16, &o),
                         ERROR_SUCCESS);
        n = du_le32(o.data + 4);
        for (uint32_t i = 0; i < n && !found; i++) {
                uint32_t off = 8 + 8 * n + du_le32(o.data + 8 + 8 * i + 4);

                assert_true(off < o.out_size);
                utf16_ascii(o.data + off, (o.out_size - off) / 2, text, sizeof(text));
                if (strcmp(text, name) == 0) {
                        found = true;
                        if (ret_id)
                                *ret_id = du_le32(o.data + 8 + 8 * i);
                }
        }
        pv2_out_done(&o);
        return found;
}

struct inst {
        uint32_t id;
        char name[NAME_MAX_LEN];
        uint64_t v[MAX_COUNTERS + 1];   /* by counter id */
};

struct sample {
        uint64_t perf_time, time_100ns, freq;
        struct inst *inst;
        size_t n;
};

static void sample_free(struct sample *s)
{
        free(s->inst);
        *s = (struct sample) { 0 };
}

static struct inst *sample_add(struct sample *s)
{
        s->inst = realloc(s->inst, (s->n + 1) * sizeof(*s->inst));
        assert_non_null(s->inst);
        memset(&s->inst[s->n], 0, sizeof(*s->inst));
        return &s->inst[s->n++];
}

/* Values of one instance: n _PERF_COUNTER_DATA blocks; returns the bytes used. */
static size_t parse_values(const uint8_t *p, const uint32_t *ids, uint32_t n, struct inst *in)
{
        size_t off = 0;

        for (uint32_t i = 0; i < n; i++) {
                uint32_t data_size = du_le32(p + off), size = du_le32(p + off + 4);

                assert_true(ids[i] <= MAX_COUNTERS);
                in->v[ids[i]] = data_size == 4 ? du_le32(p + off + 8) : du_le64(p + off + 8);
                off += size;
        }
        return off;
}

/* One PERF_COUNTERSET or PERF_MULTIPLE_COUNTERS block (after its 16-byte header). */
static void parse_block(const uint8_t *p, uint32_t type, struct sample *s)
{
        uint32_t ids[MAX_COUNTERS], n = du_le32(p + 4), n_inst;
        size_t off;

        assert_true(n <= MAX_COUNTERS);
        for (uint32_t i = 0; i < n; i++)
                ids[i] = du_le32(p + 8 + 4 * i);
        off = du_le32(p);
        if (type == PERF_MULTIPLE_COUNTERS) {
                struct inst *in = sample_add(s);

                in->id = 0;
                parse_values(p + off, ids, n, in);
                return;
        }
        assert_int_equal(type, PERF_COUNTERSET);
        n_inst = du_le32(p + off + 4);
        off += 8;
        for (uint32_t k = 0; k < n_inst; k++) {
                struct inst *in = sample_add(s);
                uint32_t size = du_le32(p + off);

                in->id = du_le32(p + off + 4);
                utf16_ascii(p + off + 8, (size - 8) / 2, in->name, sizeof(in->name));
                off += size;
                off += parse_values(p + off, ids, n, in);
        }
}

/* Every counter of every instance of cs, through one query (one collection). */
static void query(const GUID *cs, struct sample *ret)
{
        uint8_t id[48] = { 0 };
        struct pv2_out o = { 0 };
        struct pv2_handle h;

        memcpy(id, cs, 16);
        id[20] = sizeof(id);                                    /* Size */
        memset(id + 24, 0xFF, 8);                               /* any counter, any id */
        id[40] = '*';                                           /* instance "*" */
        assert_int_equal(pv2_open_query(client, NULL, &h), ERROR_SUCCESS);
        assert_int_equal(pv2_validate_counters(client, &h, id, sizeof(id), 1), ERROR_SUCCESS);
        assert_int_equal(du_le32(id + 16), ERROR_SUCCESS);
        assert_int_equal(pv2_query_counter_data(client, &h, 1u << 24, &o), ERROR_SUCCESS);
        *ret = (struct sample) { .perf_time = du_le64(o.data + 8),
                                 .time_100ns = du_le64(o.data + 16),
                                 .freq = du_le64(o.data + 24) };
        assert_int_equal(du_le32(o.data + 4), 1);                  /* one block */
        assert_int_equal(du_le32(o.data + 48), ERROR_SUCCESS);     /* its status */
        parse_block(o.data + 64, du_le32(o.data + 52), ret);
        pv2_out_done(&o);
        assert_int_equal(pv2_close_query(client, &h), ERROR_SUCCESS);
}

static const struct inst *inst_named(const struct sample *s, const char *name)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->inst[i].name, name) == 0)
                        return &s->inst[i];
        return NULL;
}

static const struct inst *inst_with_id(const struct sample *s, uint32_t id)
{
        for (size_t i = 0; i < s->n; i++)
                if (s->inst[i].id == id)
                        return &s->inst[i];
        return NULL;
}

/* The counterset, which must exist, and the ids of the named counters, which must too. */
static void cset_counters(const char *cs_name, GUID *cs, const char *const *names, uint32_t *ids,
                          size_t n)
{
        if (!find_cset(cs_name, cs))
                fail_msg("counterset '%s' is not listed", cs_name);
        for (size_t i = 0; i < n; i++)
                if (!counter_id(cs, names[i], &ids[i]))
                        fail_msg("counterset '%s' has no counter '%s'", cs_name, names[i]);
}

/* ---- independent sources ---- */

/* The first line of a command's output, or "" (a tool that is not installed: skip). */
static void command_line(char *out, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void command_line(char *out, size_t size, const char *fmt, ...)
{
        va_list ap;
        char *cmd;
        FILE *f;

        va_start(ap, fmt);
        assert_true(vasprintf(&cmd, fmt, ap) > 0);
        va_end(ap);
        out[0] = '\0';
        f = popen(cmd, "r");
        assert_non_null(f);
        if (!fgets(out, (int) size, f))
                out[0] = '\0';
        pclose(f);
        free(cmd);
}

static uint64_t command_u64(const char *cmd)
{
        char line[256], *p = line;

        command_line(line, sizeof(line), "%s", cmd);
        while (*p == ' ')
                p++;
        if (!isdigit((unsigned char) *p))
                fail_msg("'%s' printed no number", cmd);
        return strtoull(p, NULL, 10);
}

static bool within(double value, double expected, double tolerance)
{
        return value >= expected - tolerance && value <= expected + tolerance;
}

#define assert_within(v, e, tol) do {                                                   \
        double v_ = (double) (v), e_ = (double) (e), t_ = (double) (tol);              \
        if (!within(v_, e_, t_))                                                        \
                fail_msg("%s = %.0f, expected %s = %.0f within %.0f", #v, v_, #e, e_, t_); \
} while (0)

/* "KEY VALUE" from a /proc file (/proc/stat, /proc/vmstat), read by the test itself. */
static uint64_t proc_key(const char *file, const char *key)
{
        char line[4096];
        size_t len = strlen(key);
        uint64_t v = 0;
        bool found = false;
        FILE *f = fopen(file, "re");

        assert_non_null(f);
        while (!found && fgets(line, sizeof(line), f))
                if (strncmp(line, key, len) == 0 && line[len] == ' ') {
                        v = strtoull(line + len + 1, NULL, 10);
                        found = true;
                }
        fclose(f);
        if (!found)
                fail_msg("%s has no %s", file, key);
        return v;
}

/*
 * A 32-bit counter (PERF_COUNTER_COUNTER) read between two readings of its
 * 64-bit source: it is the source truncated, somewhere in between.
 */
static void assert_between32(uint64_t value, uint64_t before, uint64_t after, const char *what)
{
        if (after < before || (uint32_t) (value - (uint32_t) before) > after - before)
                fail_msg("%s = %llu, not between %llu and %llu (mod 2^32)", what,
                         (unsigned long long) value, (unsigned long long) before,
                         (unsigned long long) after);
}

/* Keeps one CPU busy for about ms milliseconds of its own CPU time. */
static void burn_cpu(unsigned ms)
{
        struct timespec t0, t;
        volatile uint64_t x = 0;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        do {
                for (int i = 0; i < 100000; i++)
                        x += (uint64_t) i;
                clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* ---- Processor ---- */

static const char *const processor_counters[] = {
        "% Processor Time", "% User Time", "% Privileged Time", "% Interrupt Time",
        "% DPC Time", "% Idle Time", "Interrupts/sec",
};

static void test_processor(void **state)
{
        enum { PROC, USER, PRIV, INTR, DPC, IDLE, INTS, N };
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        struct sample a, b;
        const struct inst *ta, *tb;
        uint32_t id[N];
        uint64_t sum = 0;
        double busy;
        GUID cs;
        char name[24];

        cset_counters("Processor", &cs, processor_counters, id, N);
        query(&cs, &a);
        /* One instance per online CPU, named by its number, and _Total. */
        assert_int_equal(a.n, (size_t) ncpu + 1);
        for (long i = 0; i < ncpu; i++) {
                snprintf(name, sizeof(name), "%ld", i);
                if (!inst_named(&a, name))
                        fail_msg("no Processor instance '%s'", name);
        }
        ta = inst_named(&a, "_Total");
        assert_non_null(ta);
        /* _Total's interrupts are the sum of the CPUs' (the same collection). */
        for (size_t i = 0; i < a.n; i++)
                if (&a.inst[i] != ta)
                        sum += a.inst[i].v[id[INTS]];
        assert_true(ta->v[id[INTS]] == (uint32_t) sum);
        /*
         * Every time of _Total is the CPUs' average from the same reading, to
         * the rounding of one division (the kernel's own "cpu" line is a tick
         * off now and then, 100000 here).
         */
        for (unsigned c = PROC; c <= IDLE; c++) {
                uint64_t times = 0;

                for (size_t i = 0; i < a.n; i++)
                        if (&a.inst[i] != ta)
                                times += a.inst[i].v[id[c]];
                if (times - ta->v[id[c]] * (uint64_t) ncpu >= (uint64_t) ncpu)
                        fail_msg("_Total's %s is %" PRIu64 ", the CPUs' sum %" PRIu64 " over %ld",
                                 processor_counters[c], ta->v[id[c]], times, ncpu);
        }
        /* Idle is both % Processor Time's inverse and % Idle Time; interrupts are privileged. */
        assert_true(ta->v[id[PROC]] == ta->v[id[IDLE]]);
        assert_true(ta->v[id[PRIV]] >= ta->v[id[INTR]] + ta->v[id[DPC]]);

        /*
         * Under load the test makes: 400 ms of this process's CPU time shows
         * in _Total's user + privileged time (an average over the CPUs, in
         * 100 ns), less the tick accounting's error: at least half of it.
         */
        burn_cpu(400);
        query(&cs, &b);
        tb = inst_named(&b, "_Total");
        assert_non_null(tb);
        busy = (double) (tb->v[id[USER]] + tb->v[id[PRIV]] - ta->v[id[USER]] - ta->v[id[PRIV]]) *
               (double) ncpu;
        if (busy < 0.5 * 400 * 10000)
                fail_msg("400 ms of CPU showed as %.0f ms", busy / 10000);
        /* Elapsed time covers every CPU's busy and idle time: nothing is counted twice. */
        assert_true((double) (tb->v[id[USER]] + tb->v[id[PRIV]] + tb->v[id[IDLE]] -
                              ta->v[id[USER]] - ta->v[id[PRIV]] - ta->v[id[IDLE]]) <=
                    (double) (b.time_100ns - a.time_100ns) * 1.05 + 2 * 100000);
        sample_free(&a);
        sample_free(&b);
}

/* ---- Memory ---- */

static const char *const memory_counters[] = {
        "Available Bytes", "Committed Bytes", "Commit Limit", "Cache Bytes", "Page Faults/sec",
        "Pages/sec", "Swap Total Bytes", "Swap Used Bytes", "% Committed Bytes In Use",
        "Available MBytes",
};

static void test_memory(void **state)
{
        enum { AVAIL, COMMITTED, LIMIT, CACHE, FAULTS, PAGES, SWAP_TOTAL, SWAP_USED, PCT, AVAIL_MB, N };
        uint64_t avail, mem_total, swap_total, cache, faults0, faults1;
        struct sample a;
        const struct inst *m;
        uint32_t id[N];
        GUID cs;

        cset_counters("Memory", &cs, memory_counters, id, N);
        faults0 = proc_key("/proc/vmstat", "pgfault");
        query(&cs, &a);
        faults1 = proc_key("/proc/vmstat", "pgfault");
        avail = command_u64("free -b | awk '/^Mem:/ { print $7 }'");
        cache = command_u64("free -b | awk '/^Mem:/ { print $6 }'");
        mem_total = command_u64("free -b | awk '/^Mem:/ { print $2 }'");
        swap_total = command_u64("free -b | awk '/^Swap:/ { print $2 }'");
        assert_int_equal(a.n, 1);
        m = &a.inst[0];
        /* free(1) and the provider read MemAvailable moments apart: 5 % covers the churn
         * of a machine shared with builds. */
        assert_within(m->v[id[AVAIL]], avail, avail * 0.05);
        assert_true(m->v[id[AVAIL_MB]] == m->v[id[AVAIL]] >> 20);
        /* Totals do not move: exact.  Commit Limit is RAM plus swap, as on Windows. */
        assert_true(m->v[id[SWAP_TOTAL]] == swap_total);
        assert_true(m->v[id[LIMIT]] == mem_total + swap_total);
        assert_true(m->v[id[SWAP_USED]] <= swap_total);
        /* The page cache moves faster than available memory: 10 %. */
        assert_within(m->v[id[CACHE]], cache, cache * 0.10);
        assert_true(m->v[id[COMMITTED]] > 0);
        /* The fraction is in MiB: Committed Bytes over Commit Limit. */
        assert_within(m->v[id[PCT]], m->v[id[COMMITTED]] >> 20, 1);
        assert_between32(m->v[id[FAULTS]], faults0, faults1, "Page Faults/sec");
        sample_free(&a);
}

/* ---- System ---- */

static const char *const system_counters[] = {
        "Processes", "Threads", "Context Switches/sec", "Processor Queue Length",
        "System Up Time",
};

static void test_system(void **state)
{
        enum { PROCS, THREADS, CTXT, QUEUE, UPTIME, N };
        uint64_t ps, threads, ctxt0, ctxt1, up_time_id, up_freq_id;
        struct sample a;
        const struct inst *s;
        double uptime, up;
        uint32_t id[N];
        GUID cs;
        FILE *f;

        cset_counters("System", &cs, system_counters, id, N);
        ctxt0 = proc_key("/proc/stat", "ctxt");
        query(&cs, &a);
        ctxt1 = proc_key("/proc/stat", "ctxt");
        ps = command_u64("ps -e --no-headers | wc -l");
        threads = command_u64("ps -eL --no-headers | wc -l");
        f = fopen("/proc/uptime", "re");
        assert_non_null(f);
        assert_int_equal(fscanf(f, "%lf", &uptime), 1);
        fclose(f);
        assert_int_equal(a.n, 1);
        s = &a.inst[0];
        /* Other builds on the machine start and end processes all the time, and
         * ps counts itself and the shell: 10 % and 20 processes. */
        assert_within(s->v[id[PROCS]], ps, ps * 0.10 + 20);
        assert_within(s->v[id[THREADS]], threads, threads * 0.10 + 40);
        assert_true(s->v[id[THREADS]] >= s->v[id[PROCS]]);
        assert_between32(s->v[id[CTXT]], ctxt0, ctxt1, "Context Switches/sec");
        assert_true(s->v[id[QUEUE]] <= s->v[id[THREADS]]);
        /* An elapsed time: (its PerfTime counter - the value) / its PerfFreq counter,
         * against /proc/uptime read just after: within 2 s. */
        up_time_id = id[UPTIME] + 1;
        up_freq_id = id[UPTIME] + 2;
        assert_true(s->v[up_freq_id] == 10000000);
        up = (double) (s->v[up_time_id] - s->v[id[UPTIME]]) / (double) s->v[up_freq_id];
        assert_within(up, uptime, 2);
        sample_free(&a);
}

/* ---- Network Interface ---- */

static const char *const netif_counters[] = {
        "Bytes Received/sec", "Bytes Sent/sec", "Bytes Total/sec", "Packets/sec",
        "Packets Received Errors", "Packets Outbound Errors", "Packets Received Discarded",
        "Packets Outbound Discarded", "Current Bandwidth",
};

/* ip -s link's RX (rx = true) or TX bytes of one interface, from its one-line form. */
static uint64_t ip_bytes(const char *ifname, bool rx)
{
        char cmd[256];

        /* -o puts each interface on one line: "RX: bytes packets ... \    N ...". */
        snprintf(cmd, sizeof(cmd),
                 "ip -s -o link show dev %s | sed 's/.*%s:[^\\\\]*\\\\ *\\([0-9]*\\).*/\\1/'",
                 ifname, rx ? "RX" : "TX");
        return command_u64(cmd);
}

static void test_netif(void **state)
{
        enum { RX, TX, TOTAL, PACKETS, RX_ERR, TX_ERR, RX_DROP, TX_DROP, BW, N };
        uint64_t rx0, rx1, tx0, tx1;
        struct sample a;
        const struct inst *lo;
        struct dirent *e;
        uint32_t id[N];
        GUID cs;
        DIR *d;

        cset_counters("Network Interface", &cs, netif_counters, id, N);
        rx0 = ip_bytes("lo", true);
        tx0 = ip_bytes("lo", false);
        query(&cs, &a);
        rx1 = ip_bytes("lo", true);
        tx1 = ip_bytes("lo", false);
        /* Every interface sysfs lists, each with its ifindex as instance id. */
        d = opendir("/sys/class/net");
        assert_non_null(d);
        while ((e = readdir(d))) {
                const struct inst *in;
                char rel[512];
                int64_t index;
                FILE *f;

                if (e->d_name[0] == '.')
                        continue;
                in = inst_named(&a, e->d_name);
                if (!in)
                        fail_msg("no Network Interface instance '%s'", e->d_name);
                snprintf(rel, sizeof(rel), "/sys/class/net/%s/ifindex", e->d_name);
                f = fopen(rel, "re");
                assert_non_null(f);
                assert_int_equal(fscanf(f, "%" SCNd64, &index), 1);
                fclose(f);
                assert_int_equal(in->id, index);
        }
        closedir(d);
        lo = inst_named(&a, "lo");
        assert_non_null(lo);
        /* iproute2 read before and after the query brackets the provider's value. */
        assert_true(lo->v[id[RX]] >= rx0 && lo->v[id[RX]] <= rx1);
        assert_true(lo->v[id[TX]] >= tx0 && lo->v[id[TX]] <= tx1);
        assert_true(lo->v[id[TOTAL]] == lo->v[id[RX]] + lo->v[id[TX]]);
        assert_true(lo->v[id[PACKETS]] > 0 || lo->v[id[TOTAL]] == 0);
        /* Loopback has no link speed. */
        assert_true(lo->v[id[BW]] == 0);
        sample_free(&a);
}

/* ---- LogicalDisk and PhysicalDisk ---- */

static const char *const disk_counters[] = {
        "Disk Reads/sec", "Disk Writes/sec", "Disk Read Bytes/sec", "Disk Write Bytes/sec",
        "Avg. Disk sec/Read", "Avg. Disk sec/Write", "% Disk Time", "Current Disk Queue Length",
        "% Free Space", "Free Megabytes",
};
enum { D_READS, D_WRITES, D_RBYTES, D_WBYTES, D_AVG_R, D_AVG_W, D_TIME, D_QUEUE, D_FREE_PCT,
       D_FREE_MB, D_N };

/* The test's own reading of one /proc/diskstats line: false when the device has none. */
static bool diskstat(unsigned major, unsigned minor, const char *name, uint64_t *reads,
                     uint64_t *writes, uint64_t *sectors_read)
{
        char line[512], dev[64];
        unsigned ma, mi;
        bool found = false;
        FILE *f = fopen("/proc/diskstats", "re");

        assert_non_null(f);
        while (!found && fgets(line, sizeof(line), f)) {
                unsigned long long r, rs, w;

                if (sscanf(line, "%u %u %63s %llu %*u %llu %*u %llu", &ma, &mi, dev, &r, &rs,
                           &w) != 6)
                        continue;
                if (name ? strcmp(dev, name) != 0 : ma != major || mi != minor)
                        continue;
                *reads = r;
                *writes = w;
                *sectors_read = rs;
                found = true;
        }
        fclose(f);
        return found;
}

/* Writes and syncs 1 MiB in the test's directory, so that its disk sees a write. */
static void write_and_sync(const char *dir)
{
        static char buf[1 << 20];
        char *path;
        FILE *f;

        assert_true(asprintf(&path, "%s/load.bin", dir) > 0);
        f = fopen(path, "we");
        assert_non_null(f);
        memset(buf, 'x', sizeof(buf));
        assert_int_equal(fwrite(buf, 1, sizeof(buf), f), sizeof(buf));
        assert_int_equal(fflush(f), 0);
        assert_int_equal(fsync(fileno(f)), 0);
        fclose(f);
        unlink(path);
        free(path);
}

static void test_logicaldisk(void **state)
{
        const char *dir = getenv("PERFLIB_RUNTIME_DIR");
        uint64_t r0, w0, s0, r1, w1, s1, df_size;
        const struct inst *root, *here, *before;
        struct sample a, b;
        struct statvfs sv;
        struct stat st;
        uint32_t id[D_N];
        bool has_io;
        GUID cs;

        cset_counters("LogicalDisk", &cs, disk_counters, id, D_N);
        assert_int_equal(stat("/", &st), 0);
        has_io = diskstat(major(st.st_dev), minor(st.st_dev), NULL, &r0, &w0, &s0);
        query(&cs, &a);
        if (has_io)
                assert_true(diskstat(major(st.st_dev), minor(st.st_dev), NULL, &r1, &w1, &s1));
        assert_int_equal(statvfs("/", &sv), 0);
        /* No pseudo filesystem is listed. */
        assert_null(inst_named(&a, "/proc"));
        assert_null(inst_named(&a, "/sys"));
        root = inst_named(&a, "/");
        if (!root)
                fail_msg("no LogicalDisk instance for /");
        assert_int_equal(root->id, major(st.st_dev) << 20 | minor(st.st_dev));
        /* df's size in MiB is the fraction's base (df rounds up: 1). */
        df_size = command_u64("df -B1M --output=size / | tail -1");
        assert_within(root->v[id[D_FREE_PCT] + 1], df_size, 1);
        /* Free space moves with the builds on this disk: 1 % of the size. */
        assert_within(root->v[id[D_FREE_MB]], (double) sv.f_bfree * sv.f_frsize / 1048576,
                      df_size * 0.01 + 1);
        assert_true(root->v[id[D_FREE_PCT]] == root->v[id[D_FREE_MB]]);
        if (has_io) {
                assert_between32(root->v[id[D_READS]], r0, r1, "Disk Reads/sec");
                assert_between32(root->v[id[D_WRITES]], w0, w1, "Disk Writes/sec");
                assert_true(root->v[id[D_RBYTES]] >= s0 * 512 && root->v[id[D_RBYTES]] <= s1 * 512);
        }
        /* Under the test's own load, the filesystem it writes to counts a write. */
        assert_int_equal(stat(dir, &st), 0);
        before = inst_with_id(&a, major(st.st_dev) << 20 | minor(st.st_dev));
        if (before && diskstat(major(st.st_dev), minor(st.st_dev), NULL, &r0, &w0, &s0)) {
                write_and_sync(dir);
                query(&cs, &b);
                here = inst_with_id(&b, major(st.st_dev) << 20 | minor(st.st_dev));
                assert_non_null(here);
                assert_true((uint32_t) (here->v[id[D_WRITES]] - before->v[id[D_WRITES]]) >= 1);
                assert_true(here->v[id[D_WBYTES]] - before->v[id[D_WBYTES]] >= 4096);
                sample_free(&b);
        }
        sample_free(&a);
}

static void test_physicaldisk(void **state)
{
        uint64_t r0, w0, s0, r1, w1, s1;
        size_t listed = 0;
        struct sample a;
        struct dirent *e;
        uint32_t id[D_N];
        GUID cs;
        DIR *d;

        /* The I/O counters only: PhysicalDisk has no space counters. */
        cset_counters("PhysicalDisk", &cs, disk_counters, id, D_FREE_PCT);
        assert_false(counter_id(&cs, "% Free Space", NULL));
        query(&cs, &a);
        /* Exactly the whole devices of /sys/block that have a size. */
        d = opendir("/sys/block");
        assert_non_null(d);
        while ((e = readdir(d))) {
                unsigned long long sectors = 0;
                const struct inst *in;
                char path[512];
                FILE *f;

                if (e->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/sys/block/%s/size", e->d_name);
                f = fopen(path, "re");
                if (!f || fscanf(f, "%llu", &sectors) != 1)
                        sectors = 0;
                if (f)
                        fclose(f);
                in = inst_named(&a, e->d_name);
                if ((sectors > 0) != (in != NULL))
                        fail_msg("/sys/block/%s: %llu sectors, %s", e->d_name, sectors,
                                 in ? "listed" : "not listed");
                if (!in)
                        continue;
                listed++;
                /* Its counters against diskstats read after the query: behind it by
                 * less than the million operations no disk here does in between. */
                assert_true(diskstat(0, 0, e->d_name, &r1, &w1, &s1));
                r0 = in->v[id[D_READS]];
                w0 = in->v[id[D_WRITES]];
                s0 = in->v[id[D_RBYTES]];
                assert_true((uint32_t) (r1 - r0) < 1000000 && (uint32_t) (w1 - w0) < 1000000);
                assert_true(s0 <= s1 * 512 && s1 * 512 - s0 < (1ull << 32));
                assert_true(in->v[id[D_TIME]] > 0 || r0 + w0 == 0);
        }
        closedir(d);
        assert_int_equal(a.n, listed);
        sample_free(&a);
}

/* ---- Process ---- */

static const char *const process_counters[] = {
        "% Processor Time", "% User Time", "% Privileged Time", "Working Set", "Private Bytes",
        "Virtual Bytes", "Thread Count", "Handle Count", "IO Read Bytes/sec",
        "IO Write Bytes/sec", "Elapsed Time", "ID Process", "Creating Process ID",
};
enum { P_CPU, P_USER, P_PRIV, P_WS, P_PRIVATE, P_VIRT, P_THREADS, P_HANDLES, P_IO_R, P_IO_W,
       P_ELAPSED, P_ID, P_PPID, P_N };

#define CHILD_THREADS   7

static pthread_barrier_t started;

static void *sleeper(void *arg)
{
        (void) pthread_barrier_wait(&started);
        pause();
        return arg;
}

/* A child of CHILD_THREADS threads, the main one included, that waits to be killed. */
static pid_t start_threaded_child(void)
{
        int ready[2];
        pid_t pid;
        char c;

        assert_int_equal(pipe(ready), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                pthread_t t;

                /* Ready once every thread runs: their start touches memory. */
                if (pthread_barrier_init(&started, NULL, CHILD_THREADS) != 0)
                        _exit(1);
                for (int i = 1; i < CHILD_THREADS; i++)
                        if (pthread_create(&t, NULL, sleeper, NULL) != 0)
                                _exit(1);
                (void) pthread_barrier_wait(&started);
                (void) !write(ready[1], "r", 1);
                for (;;)
                        pause();
        }
        close(ready[1]);
        assert_int_equal(read(ready[0], &c, 1), 1);
        close(ready[0]);
        return pid;
}

static void stop_child(pid_t pid)
{
        kill(pid, SIGKILL);
        assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static uint64_t count_fds(pid_t pid)
{
        char path[64];
        struct dirent *e;
        uint64_t n = 0;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
        d = opendir(path);
        assert_non_null(d);
        while ((e = readdir(d)))
                n += e->d_name[0] != '.';
        closedir(d);
        return n;
}

/* status's VmRSS (what Working Set is), RssAnon + VmSwap (Private Bytes), in bytes. */
struct status_mem {
        uint64_t ws, private;
};

/* A "Key:  N kB" line of /proc/PID/status, in bytes; 0 when absent. */
static uint64_t status_bytes(pid_t pid, const char *key)
{
        char path[64], line[256];
        unsigned long long kb;
        uint64_t v = 0;
        size_t len = strlen(key);
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, key, len) == 0 && line[len] == ':' &&
                    sscanf(line + len + 1, "%llu kB", &kb) == 1)
                        v = (uint64_t) kb * 1024;
        fclose(f);
        return v;
}

static struct status_mem status_mem(pid_t pid)
{
        return (struct status_mem) {
                .ws = status_bytes(pid, "VmRSS"),
                .private = status_bytes(pid, "RssAnon") + status_bytes(pid, "VmSwap"),
        };
}

static void test_process(void **state)
{
        struct status_mem m0, m1;
        uint64_t rss, vsz;
        struct sample a, b;
        const struct inst *self, *c1, *c2;
        char comm[64] = "", cmd[128];
        uint32_t id[P_N];
        double elapsed;
        pid_t k1, k2;
        GUID cs;
        FILE *f;

        cset_counters("Process", &cs, process_counters, id, P_N);
        f = fopen("/proc/self/comm", "re");
        assert_non_null(f);
        assert_non_null(fgets(comm, sizeof(comm), f));
        fclose(f);
        comm[strcspn(comm, "\n")] = '\0';
        /* Started after the last query: listed by the very next one, whose
         * PERF_COLLECT_START created their instances. */
        k1 = start_threaded_child();
        k2 = start_threaded_child();
        m0 = status_mem(k1);
        query(&cs, &a);
        m1 = status_mem(k1);
        self = inst_with_id(&a, (uint32_t) getpid());
        assert_non_null(self);
        assert_string_equal(self->name, comm);
        assert_int_equal(self->v[id[P_ID]], getpid());
        assert_int_equal(self->v[id[P_PPID]], getppid());
        /* Two processes of one name: two instances, told apart by their ids. */
        c1 = inst_with_id(&a, (uint32_t) k1);
        c2 = inst_with_id(&a, (uint32_t) k2);
        assert_non_null(c1);
        assert_non_null(c2);
        assert_string_equal(c1->name, comm);
        assert_string_equal(c2->name, comm);
        assert_int_equal(c1->v[id[P_PPID]], getpid());
        /* A still child: exact figures. */
        assert_int_equal(c1->v[id[P_THREADS]], CHILD_THREADS);
        assert_int_equal(c1->v[id[P_HANDLES]], count_fds(k1));
        /* ps(1) reports KiB, rounded: 1 % and a page. */
        snprintf(cmd, sizeof(cmd), "ps -o rss= -p %d", (int) k1);
        rss = command_u64(cmd) * 1024;
        snprintf(cmd, sizeof(cmd), "ps -o vsz= -p %d", (int) k1);
        vsz = command_u64(cmd) * 1024;
        assert_within(c1->v[id[P_WS]], rss, rss * 0.01 + 4096);
        assert_within(c1->v[id[P_VIRT]], vsz, vsz * 0.01 + 4096);
        assert_true(c1->v[id[P_PRIVATE]] <= c1->v[id[P_VIRT]]);
        /* Working Set is VmRSS and Private Bytes RssAnon + VmSwap, exactly: between
         * status read before and after the query (equal for a still child). */
        assert_in_range(c1->v[id[P_WS]], MIN(m0.ws, m1.ws), MAX(m0.ws, m1.ws));
        assert_in_range(c1->v[id[P_PRIVATE]], MIN(m0.private, m1.private),
                        MAX(m0.private, m1.private));
        assert_true(c1->v[id[P_PRIVATE]] > 0);
        assert_true(c1->v[id[P_CPU]] == c1->v[id[P_USER]] + c1->v[id[P_PRIV]]);
        /* Elapsed: just started; its PerfTime and PerfFreq counters follow it. */
        elapsed = (double) (c1->v[id[P_ELAPSED] + 1] - c1->v[id[P_ELAPSED]]) /
                  (double) c1->v[id[P_ELAPSED] + 2];
        assert_true(elapsed >= 0 && elapsed < 30);
        /* The test's own I/O shows: it read the registration info and its files. */
        assert_true(self->v[id[P_IO_R]] > 0);
        /* Exited between two queries: gone from the second; the other stays. */
        stop_child(k1);
        query(&cs, &b);
        assert_null(inst_with_id(&b, (uint32_t) k1));
        assert_non_null(inst_with_id(&b, (uint32_t) k2));
        stop_child(k2);
        sample_free(&a);
        sample_free(&b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_processor),
                cmocka_unit_test(test_memory),
                cmocka_unit_test(test_system),
                cmocka_unit_test(test_netif),
                cmocka_unit_test(test_logicaldisk),
                cmocka_unit_test(test_physicaldisk),
                cmocka_unit_test(test_process),
        };

        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
