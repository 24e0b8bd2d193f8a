/* SPDX-License-Identifier: MIT */
/*
 * Runs the RPC fuzz harness without libFuzzer:
 *   fuzz-rpc-standalone FILE...             each file as one input
 *   fuzz-rpc-standalone                     the seeds, their mutations, and the
 *                                           files of $top_srcdir/tests/fuzz-rpc-corpus
 *   fuzz-rpc-standalone --write-seeds DIR   writes the seeds (the corpus)
 * A crash or a leaked query kills the process, so reaching the summary means
 * there was none.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-rpc.h"

#define FZ_ITERATIONS 20000u
#define FZ_MAX_FILE (1u << 20)

static int run_file(const char *path)
{
        FILE *f = fopen(path, "rb");
        uint8_t *buf = malloc(FZ_MAX_FILE);
        size_t n = 0;

        if (!f || !buf) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno ? errno : ENOMEM));
                if (f)
                        fclose(f);
                free(buf);
                return -1;
        }
        n = fread(buf, 1, FZ_MAX_FILE, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
        return 0;
}

static int run_corpus(const char *top, unsigned *count)
{
        char dir[4096], path[8192];
        struct dirent *e;

        snprintf(dir, sizeof(dir), "%s/tests/fuzz-rpc-corpus", top);
        DIR *d = opendir(dir);
        if (!d)
                return errno == ENOENT ? 0 : -1;
        while ((e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
                if (run_file(path) < 0) {
                        closedir(d);
                        return -1;
                }
                (*count)++;
        }
        closedir(d);
        return 0;
}

static int write_seeds(const char *dir)
{
        for (unsigned i = 0; i < FZ_RPC_N_SEEDS; i++) {
                char path[4096];
                uint8_t *b;
                size_t n;

                fz_rpc_seed(i, &b, &n);
                snprintf(path, sizeof(path), "%s/seed-%u", dir, i);
                FILE *f = fopen(path, "wb");
                int ok = f && fwrite(b, 1, n, f) == n;
                if (f && fclose(f) != 0)
                        ok = 0;
                free(b);
                if (!ok) {
                        fprintf(stderr, "%s: write failed\n", path);
                        return EXIT_FAILURE;
                }
        }
        return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
        unsigned n = 0;

        if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0)
                return write_seeds(argv[2]);
        if (argc > 1) {
                for (int i = 1; i < argc; i++) {
                        if (run_file(argv[i]) < 0)
                                return EXIT_FAILURE;
                        n++;
                }
        } else {
                const char *top = getenv("top_srcdir");
                if (top && run_corpus(top, &n) < 0)
                        return EXIT_FAILURE;
                n += fz_rpc_mutations(FZ_ITERATIONS, LLVMFuzzerTestOneInput);
        }
        printf("%u inputs, 0 crashes\n", n);
        return EXIT_SUCCESS;
}
