/* SPDX-License-Identifier: MIT */
/*
 * Runs the segment fuzz harness without libFuzzer:
 *   fuzz-segment-standalone FILE...        each file as one input
 *   fuzz-segment-standalone                built-in mutations of a valid image
 *   fuzz-segment-standalone --seed FILE    writes the valid image (a corpus seed)
 * A crash kills the process, so reaching the summary means there was none.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-segment.h"

#define FZ_DEFAULT_ITERATIONS 5000u
#define FZ_MAX_FILE (64u << 20)

static int fz_read_file(const char *path, uint8_t **ret, size_t *ret_size)
{
        FILE *f = fopen(path, "rb");
        uint8_t *buf = NULL;
        size_t n = 0, cap = 0;

        if (!f)
                return -errno;
        for (;;) {
                if (n == cap) {
                        cap = cap ? cap * 2 : 65536;
                        uint8_t *b = cap <= FZ_MAX_FILE ? realloc(buf, cap) : NULL;
                        if (!b) {
                                free(buf);
                                fclose(f);
                                return -EFBIG;
                        }
                        buf = b;
                }
                size_t k = fread(buf + n, 1, cap - n, f);
                n += k;
                if (k == 0)
                        break;
        }
        int err = ferror(f) ? -EIO : 0;
        fclose(f);
        if (err < 0) {
                free(buf);
                return err;
        }
        *ret = buf;
        *ret_size = n;
        return 0;
}

static int fz_write_seed(const char *path)
{
        static struct fz_image img;
        FILE *f = fopen(path, "wb");

        if (!f)
                return -errno;
        fz_build_image(&img);
        size_t n = fwrite(img.data, 1, img.size, f);
        if (fclose(f) != 0 || n != img.size)
                return -EIO;
        return 0;
}

static int fz_run_files(int argc, char **argv)
{
        unsigned n = 0;

        for (int i = 1; i < argc; i++) {
                uint8_t *buf = NULL;
                size_t size = 0;
                int r = fz_read_file(argv[i], &buf, &size);
                if (r < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(-r));
                        return EXIT_FAILURE;
                }
                LLVMFuzzerTestOneInput(buf, size);
                free(buf);
                n++;
        }
        printf("%u inputs, 0 crashes\n", n);
        return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
        if (argc == 3 && strcmp(argv[1], "--seed") == 0) {
                int r = fz_write_seed(argv[2]);
                if (r < 0)
                        fprintf(stderr, "%s: %s\n", argv[2], strerror(-r));
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }
        if (argc > 1)
                return fz_run_files(argc, argv);
        unsigned n = pl_fuzz_mutations(FZ_DEFAULT_ITERATIONS, LLVMFuzzerTestOneInput);
        printf("%u inputs, 0 crashes\n", n);
        return n == FZ_DEFAULT_ITERATIONS ? EXIT_SUCCESS : EXIT_FAILURE;
}
