/* SPDX-License-Identifier: MIT */
/*
 * bench-ctrpp: how long ctrpp takes on a big manifest: 100 countersets of
 * 100 counters each (10,000 counters, with bases, time references and
 * attributes so that every rule has work to do), compiled by the real
 * ctrpp binary from parse to written outputs.  Prints the best and the mean
 * of several runs.  Built by `make check`, never run as a test.
 *
 *   bench-ctrpp [PATH-TO-CTRPP]     (default: ../ctrpp/ctrpp beside this program)
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N_SETS 100
#define N_COUNTERS 100          /* per counterset */
#define RUNS 5

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* Counter k of a set: a fraction and its base in turn, with some attributes. */
static void write_counter(FILE *f, int set, int k)
{
        const char *type = k % 2 ? "perf_raw_base" : "perf_raw_fraction";

        fprintf(f, "      <counter id=\"%d\" uri=\"Bench.S%d.C%d\" symbol=\"BENCH_S%d_C%d\" "
                "name=\"Counter %d of set %d\" description=\"Counter %d.\" type=\"%s\" "
                "detailLevel=\"standard\"", k + 1, set, k, set, k, k, set, k, type);
        if (k % 2 == 0)
                fprintf(f, " baseID=\"%d\"", k + 2);
        if (k % 10 == 0)
                fprintf(f, "><counterAttributes><counterAttribute name=\"displayAsReal\"/>"
                        "</counterAttributes></counter>\n");
        else
                fprintf(f, "/>\n");
}

static int write_manifest(const char *path)
{
        FILE *f = fopen(path, "w");

        if (!f)
                return -errno;
        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\">\n"
                "<instrumentation>\n"
                "<counters xmlns=\"http://schemas.microsoft.com/win/2005/12/counters\" schemaVersion=\"2.0\">\n"
                "  <provider symbol=\"BENCH\" applicationIdentity=\"bench.exe\" providerType=\"userMode\" "
                "providerGuid=\"{0badbeef-0000-4000-8000-000000000000}\">\n");
        for (int s = 0; s < N_SETS; s++) {
                fprintf(f, "    <counterSet guid=\"{0badbeef-%04x-4000-8000-000000000001}\" "
                        "uri=\"Bench.S%d\" symbol=\"BENCH_S%d\" name=\"Bench set %d\" "
                        "description=\"Set %d.\" instances=\"multiple\">\n", s, s, s, s, s);
                for (int k = 0; k < N_COUNTERS; k++)
                        write_counter(f, s, k);
                fprintf(f, "    </counterSet>\n");
        }
        fprintf(f, "  </provider>\n</counters>\n</instrumentation>\n</instrumentationManifest>\n");
        return fclose(f) == 0 ? 0 : -errno;
}

/* Runs ctrpp on the manifest in dir; its wall time in ns, or 0 on failure. */
static uint64_t run_ctrpp(const char *ctrpp, const char *dir, const char *manifest)
{
        uint64_t t0 = now_ns();
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return 0;
        if (pid == 0) {
                if (chdir(dir) < 0 || !freopen("/dev/null", "w", stdout))
                        _exit(127);
                execl(ctrpp, "ctrpp", manifest, (char *) NULL);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return 0;
        return now_ns() - t0;
}

static char *default_ctrpp(void)
{
        char self[PATH_MAX];
        char *out = NULL;
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

        if (n <= 0)
                return NULL;
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash)
                *slash = '\0';
        /* Under libtool the binary may sit in bench/.libs. */
        if (slash && strcmp(strrchr(self, '/') ? strrchr(self, '/') + 1 : self, ".libs") == 0)
                *strrchr(self, '/') = '\0';
        return asprintf(&out, "%s/../ctrpp/ctrpp", self) < 0 ? NULL : out;
}

int main(int argc, char **argv)
{
        const char *tmpdir = getenv("TMPDIR");
        char *dir = NULL, *manifest = NULL;
        char *ctrpp = argc > 1 ? strdup(argv[1]) : default_ctrpp();
        uint64_t best = UINT64_MAX, total = 0;

        if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
                printf("Usage: bench-ctrpp [PATH-TO-CTRPP]\n"
                       "Time ctrpp on a manifest of %d countersets x %d counters.\n",
                       N_SETS, N_COUNTERS);
                return 0;
        }
        if (asprintf(&dir, "%s/bench-ctrpp.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp") < 0 ||
            !ctrpp || !mkdtemp(dir) || asprintf(&manifest, "%s/big.man", dir) < 0) {
                fprintf(stderr, "bench-ctrpp: setup failed: %s\n", strerror(errno));
                return 1;
        }
        int r = write_manifest(manifest);
        for (int i = 0; r == 0 && i < RUNS; i++) {
                uint64_t ns = run_ctrpp(ctrpp, dir, manifest);
                if (!ns) {
                        fprintf(stderr, "bench-ctrpp: %s failed on %s\n", ctrpp, manifest);
                        r = -1;
                        break;
                }
                total += ns;
                best = ns < best ? ns : best;
        }
        if (r == 0) {
                printf("# ctrpp on %d countersets x %d counters, %d runs\n",
                       N_SETS, N_COUNTERS, RUNS);
                printf("ctrpp-10000-counters: %.1f ms\n", (double) best / 1e6);
                printf("ctrpp-10000-counters-mean: %.1f ms\n", (double) total / RUNS / 1e6);
        }
        static const char *const made[] = { "big.man", "big.h", "big_strings.c" };
        for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
                char *path;
                if (asprintf(&path, "%s/%s", dir, made[i]) >= 0) {
                        (void) unlink(path);
                        free(path);
                }
        }
        (void) rmdir(dir);
        free(manifest);
        free(dir);
        free(ctrpp);
        return r == 0 ? 0 : 1;
}
