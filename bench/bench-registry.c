/* SPDX-License-Identifier: MIT */
/*
 * bench-registry: how long reg_load (what perflibd runs at start and on
 * every change of the registry directory) takes over a registry of N
 * installed manifests, each with 2 countersets of 10 counters, written in
 * a private temporary directory.  Prints the best and the mean of several
 * loads for each N, and what reg_reload costs when nothing changed (what
 * perflibd pays after an unrelated change of the directory, and the floor
 * of any reload: listing and stat'ing the files).  Built by `make check`,
 * never run as a test.
 *
 *   bench-registry [N]...          (default: 10 100 500)
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "registry.h"

#define RUNS 5
#define N_SETS 2
#define N_COUNTERS 10

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void write_set(FILE *f, unsigned p, unsigned s)
{
        fprintf(f, "<counterSet guid=\"{%08x-%04x-4000-8000-0000000000c1}\" uri=\"Bench.P%u.S%u\" "
                "symbol=\"SET%u\" name=\"Set %u of provider %u\" description=\"A set.\" "
                "instances=\"multiple\">\n", p, s, p, s, s, s, p);
        for (unsigned k = 0; k < N_COUNTERS; k++)
                fprintf(f, "<counter id=\"%u\" uri=\"Bench.P%u.S%u.C%u\" symbol=\"C%u\" "
                        "name=\"Counter %u\" description=\"Counter %u of set %u.\" "
                        "type=\"perf_counter_rawcount\" detailLevel=\"standard\"/>\n",
                        k + 1, p, s, k, k, k, k, s);
        fputs("</counterSet>\n", f);
}

/* dir/{guid}.man for provider p, as lodctr would install it. */
static int write_manifest(const char *dir, unsigned p)
{
        char *path;
        FILE *f;

        if (asprintf(&path, "%s/{%08x-0000-4000-8000-000000000001}.man", dir, p) < 0)
                return -ENOMEM;
        f = fopen(path, "w");
        free(path);
        if (!f)
                return -errno;
        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\">\n"
                "<instrumentation>\n"
                "<counters xmlns=\"http://schemas.microsoft.com/win/2005/12/counters\" schemaVersion=\"2.0\">\n"
                "<provider providerName=\"Bench%u\" symbol=\"BENCH\" applicationIdentity=\"b.exe\" "
                "providerType=\"userMode\" providerGuid=\"{%08x-0000-4000-8000-000000000001}\">\n",
                p, p);
        for (unsigned s = 0; s < N_SETS; s++)
                write_set(f, p, s);
        fputs("</provider>\n</counters>\n</instrumentation>\n</instrumentationManifest>\n", f);
        return fclose(f) == 0 ? 0 : -errno;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st, (void) flag, (void) ftw;
        return remove(path);
}

/* Reloads an unchanged registry of n manifests RUNS times; 0, or -errno. */
static int bench_reload(const char *dir, unsigned n)
{
        uint64_t best = UINT64_MAX, total = 0;
        struct reg_entry *e = NULL;
        size_t got = 0;
        int r = reg_load(dir, NULL, NULL, &e, &got);

        for (int i = 0; i < RUNS && r == 0; i++) {
                struct reg_entry *e2 = NULL;
                uint64_t t0 = now_ns(), t;
                r = reg_reload(dir, e, got, NULL, NULL, &e2, &got);
                t = now_ns() - t0;
                if (r == 0)
                        e = e2;
                best = t < best ? t : best;
                total += t;
        }
        reg_entries_free(e, got);
        if (r == 0)
                printf("reg_reload-%u-manifests-unchanged: best %.2f ms, mean %.2f ms\n",
                       n, best / 1e6, total / (double) RUNS / 1e6);
        return r;
}

/* Loads a registry of n manifests RUNS times; 0, or -errno. */
static int bench(const char *base, unsigned n)
{
        uint64_t best = UINT64_MAX, total = 0;
        char *dir;
        int r = 0;

        if (asprintf(&dir, "%s/registry-%u", base, n) < 0)
                return -ENOMEM;
        if (mkdir(dir, 0755) < 0) {
                r = -errno;
                free(dir);
                return r;
        }
        for (unsigned p = 0; p < n && r == 0; p++)
                r = write_manifest(dir, p);
        for (int i = 0; i < RUNS && r == 0; i++) {
                struct reg_entry *e = NULL;
                size_t got = 0;
                uint64_t t0 = now_ns(), t;
                r = reg_load(dir, NULL, NULL, &e, &got);
                t = now_ns() - t0;
                reg_entries_free(e, got);
                if (r == 0 && got != n)
                        r = -EBADMSG;
                best = t < best ? t : best;
                total += t;
        }
        if (r == 0)
                printf("reg_load-%u-manifests: best %.2f ms, mean %.2f ms, %.1f us per manifest\n",
                       n, best / 1e6, total / (double) RUNS / 1e6, best / 1e3 / n);
        if (r == 0)
                r = bench_reload(dir, n);
        free(dir);
        return r;
}

int main(int argc, char **argv)
{
        static const unsigned defaults[] = { 10, 100, 500 };
        const char *tmp = getenv("TMPDIR");
        char *base;
        int r = 0;

        if (asprintf(&base, "%s/perflib-bench-registry-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0 ||
            !mkdtemp(base)) {
                perror("bench-registry: a temporary directory");
                return 1;
        }
        printf("# bench-registry: %d loads each, %d countersets of %d counters per manifest\n",
               RUNS, N_SETS, N_COUNTERS);
        if (argc > 1)
                for (int i = 1; i < argc && r == 0; i++)
                        r = bench(base, (unsigned) strtoul(argv[i], NULL, 10));
        else
                for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]) && r == 0; i++)
                        r = bench(base, defaults[i]);
        if (r < 0)
                fprintf(stderr, "bench-registry: %s\n", strerror(-r));
        (void) nftw(base, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        free(base);
        return r < 0;
}
