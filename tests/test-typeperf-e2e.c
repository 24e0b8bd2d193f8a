/* SPDX-License-Identifier: MIT */
/*
 * typeperf end to end: a real perflibd (private directories, no root), the
 * typeperf-provider process with values known in advance, and typeperf as
 * built, run with -si 1 -sc 4.  Its CSV must show
 *   Ticks/sec  the provider's rate (exactly RATE a second, timer-driven)
 *              within 5 %: typeperf's time base against the provider's timer
 *              (a wrong time base is off by far more; on a loaded 2-CPU
 *              machine a sample boundary alone moved it by 2.8 %);
 *   Hit Ratio  37.5 exactly (PERF_RAW_FRACTION 3 / 8);
 *   Bytes/Op   25 exactly (PERF_AVERAGE_BULK: 25 bytes per operation);
 *   Uptime     the seconds since the provider started, within 1 s
 *              (PERF_ELAPSED_TIME with its PerfTimeId/PerfFreqId companions),
 * and the NDJSON of -f JSON the same figures.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "testutil.h"

#define RATE 10000
#define SAMPLES 4

static pid_t server, provider;
static double provider_start;           /* Unix time at which Uptime was 0 */
static char sock[4096];

static const char *const paths[] = {
        "\\Typeperf Test\\Ticks/sec", "\\Typeperf Test\\Hit Ratio",
        "\\Typeperf Test\\Bytes/Op", "\\Typeperf Test\\Uptime",
};
enum { COL_TICKS, COL_HIT, COL_BYTES, COL_UPTIME, N_COLS };

static char *build_path(const char *rel)
{
        char *p;

        assert_true(asprintf(&p, "%s/%s", getenv("top_builddir"), rel) > 0);
        return p;
}

static pid_t start(char *const argv[], int out_fd)
{
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                if (out_fd >= 0)
                        dup2(out_fd, STDOUT_FILENO);
                execv(argv[0], argv);
                _exit(127);
        }
        return pid;
}

static void start_provider(void)
{
        char *bin = build_path("tests/typeperf-provider"), rate[16], line[64] = "";
        char *argv[] = { bin, "--rate", rate, NULL };
        int fd[2];
        FILE *f;

        snprintf(rate, sizeof(rate), "%d", RATE);
        assert_int_equal(pipe(fd), 0);
        provider = start(argv, fd[1]);
        close(fd[1]);
        f = fdopen(fd[0], "r");
        assert_non_null(f);
        assert_non_null(fgets(line, sizeof(line), f));
        assert_int_equal(sscanf(line, "ready %lf", &provider_start), 1);
        fclose(f);
        free(bin);
}

static bool server_answers(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool ok;

        if (strlen(sock) >= sizeof(sa.sun_path))
                fail_msg("socket path too long: %s", sock);
        memcpy(sa.sun_path, sock, strlen(sock) + 1);
        ok = fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0;
        if (fd >= 0)
                close(fd);
        return ok;
}

static int setup(void **state)
{
        const char *run = tu_runtime_setup();
        char registry[4096], plugins[4096];
        char *bin = build_path("server-glue/perflibd");
        char *argv[] = { bin, "--registry-dir", registry, "--plugin-dir", plugins, NULL };

        snprintf(sock, sizeof(sock), "%s/perflibd.sock", run);
        snprintf(registry, sizeof(registry), "%s/registry", run);
        snprintf(plugins, sizeof(plugins), "%s/plugins", run);
        mkdir(registry, 0755);
        mkdir(plugins, 0755);
        unsetenv("PERFLIB_SOCKET");
        start_provider();
        server = start(argv, -1);
        free(bin);
        /* Ready once the socket answers: 10 s at most. */
        for (int i = 0; i < 1000 && !server_answers(); i++)
                usleep(10000);
        assert_true(server_answers());
        return 0;
}

static void stop(pid_t *pid)
{
        if (*pid > 0) {
                kill(*pid, SIGTERM);
                waitpid(*pid, NULL, 0);
        }
        *pid = 0;
}

static int teardown(void **state)
{
        stop(&server);
        stop(&provider);
        tu_runtime_teardown();
        return 0;
}

/* typeperf's standard output for the counters of paths[], NUL-terminated, malloc'd. */
static char *typeperf(const char *format)
{
        char *bin = build_path("tools/typeperf"), *out = NULL;
        char *argv[] = { bin, (char *) paths[0], (char *) paths[1], (char *) paths[2],
                         (char *) paths[3], "-si", "1", "-sc", "4", "-f", (char *) format,
                         NULL };
        size_t size = 0;
        int fd[2], status;
        pid_t pid;
        FILE *f, *mem = open_memstream(&out, &size);
        int c;

        assert_non_null(mem);
        assert_int_equal(pipe(fd), 0);
        pid = start(argv, fd[1]);
        close(fd[1]);
        f = fdopen(fd[0], "r");
        assert_non_null(f);
        while ((c = fgetc(f)) != EOF)
                fputc(c, mem);
        fclose(f);
        assert_int_equal(fclose(mem), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        free(bin);
        return out;
}

/* Splits one line of "a","b",... (typeperf quotes every field) in place. */
static size_t csv_fields(char *line, char **fields, size_t max)
{
        size_t n = 0;
        char *p = line;

        while (*p == '"' && n < max) {
                char *end = strchr(p + 1, '"');

                assert_non_null(end);
                *end = 0;
                fields[n++] = p + 1;
                p = end + 1;
                if (*p != ',')
                        break;
                p++;
        }
        return n;
}

/* "MM/DD/YYYY hh:mm:ss.mmm", local time, as Unix seconds. */
static double csv_time(const char *s)
{
        struct tm tm = { .tm_isdst = -1 };
        int ms;

        assert_int_equal(sscanf(s, "%d/%d/%d %d:%d:%d.%d", &tm.tm_mon, &tm.tm_mday,
                                &tm.tm_year, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms), 7);
        tm.tm_mon -= 1;
        tm.tm_year -= 1900;
        return (double) mktime(&tm) + ms / 1000.0;
}

/* The number s starts with; stop: what may follow it ("" for the whole string). */
static double number_until(const char *s, const char *stop)
{
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || (*stop ? !strchr(stop, *end) || !*end : *end != 0))
                fail_msg("not a number: '%s'", s);
        return v;
}

static double number(const char *s)
{
        return number_until(s, "");
}

static double number_prefix(const char *s)
{
        return number_until(s, ",}");
}

/* One sample's values, whatever the format; when: the sample's Unix time. */
static void check_sample(const double v[N_COLS], double when)
{
        double uptime = when - provider_start;

        print_message("ticks/s %.3f  hit %.6f  bytes/op %.6f  uptime %.3f (want %.3f)\n",
                      v[COL_TICKS], v[COL_HIT], v[COL_BYTES], v[COL_UPTIME], uptime);
        if (v[COL_TICKS] < RATE * 0.95 || v[COL_TICKS] > RATE * 1.05)
                fail_msg("Ticks/sec %.3f is not within 5 %% of %d", v[COL_TICKS], RATE);
        assert_true(v[COL_HIT] == 37.5);
        assert_true(v[COL_BYTES] == 25.0);
        if (v[COL_UPTIME] < uptime - 1.0 || v[COL_UPTIME] > uptime + 1.0)
                fail_msg("Uptime %.3f is not within 1 s of %.3f", v[COL_UPTIME], uptime);
}

static void test_csv(void **state)
{
        char *out = typeperf("CSV"), *save = NULL, *fields[N_COLS + 2];
        char host[256], want[512];
        char *line = strtok_r(out, "\n", &save);
        int samples = 0;

        /* The header: format, then each path with this host. */
        assert_non_null(line);
        assert_int_equal(csv_fields(line, fields, N_COLS + 2), N_COLS + 1);
        assert_true(strncmp(fields[0], "(PDH-CSV 4.0) (", 15) == 0);
        assert_int_equal(gethostname(host, sizeof(host)), 0);
        for (size_t i = 0; i < N_COLS; i++) {
                snprintf(want, sizeof(want), "\\\\%s%s", host, paths[i]);
                assert_string_equal(fields[i + 1], want);
        }
        while ((line = strtok_r(NULL, "\n", &save))) {
                double v[N_COLS];

                assert_int_equal(csv_fields(line, fields, N_COLS + 2), N_COLS + 1);
                for (size_t i = 0; i < N_COLS; i++)
                        v[i] = number(fields[i + 1]);
                check_sample(v, csv_time(fields[0]));
                samples++;
        }
        assert_int_equal(samples, SAMPLES);
        free(out);
}

/* The value of the column named label in one NDJSON line. */
static double json_value(const char *line, const char *label)
{
        char key[512], *k = key;
        const char *p;

        /* The key as JSON writes it: quoted, backslashes doubled. */
        *k++ = '"';
        for (const char *s = label; *s && k < key + sizeof(key) - 4; s++) {
                if (*s == '\\')
                        *k++ = '\\';
                *k++ = *s;
        }
        strcpy(k, "\":");
        p = strstr(line, key);
        if (!p)
                fail_msg("no %s in %s", key, line);
        return number_prefix(p + strlen(key));
}

static void test_json(void **state)
{
        char *out = typeperf("JSON"), *save = NULL, host[256], path[512];
        char *line;
        int samples = 0;

        assert_int_equal(gethostname(host, sizeof(host)), 0);
        for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                struct tm tm = { .tm_isdst = -1 };
                int ms, oh, om;
                char sign;
                double v[N_COLS];

                /* The ISO 8601 stamp carries its own UTC offset. */
                assert_int_equal(sscanf(line, "{\"timestamp\":\"%d-%d-%dT%d:%d:%d.%d%c%d:%d\"",
                                        &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                                        &tm.tm_min, &tm.tm_sec, &ms, &sign, &oh, &om), 10);
                tm.tm_year -= 1900;
                tm.tm_mon -= 1;
                for (size_t i = 0; i < N_COLS; i++) {
                        snprintf(path, sizeof(path), "\\\\%s%s", host, paths[i]);
                        v[i] = json_value(line, path);
                }
                check_sample(v, (double) timegm(&tm) + ms / 1000.0 -
                                (sign == '-' ? -1 : 1) * (oh * 3600.0 + om * 60.0));
                samples++;
        }
        assert_int_equal(samples, SAMPLES);
        free(out);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_csv, setup, teardown),
                cmocka_unit_test_setup_teardown(test_json, setup, teardown),
        };

        signal(SIGPIPE, SIG_IGN);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
