/* SPDX-License-Identifier: MIT */
/*
 * plugin-image.h: a plugin file as the loader sees it: which version of the
 * file it is, and the private copy the dynamic linker maps in its place.
 *
 * Why a copy: the dynamic linker maps a shared object from its file, and a
 * file rewritten in place while loaded (cp(1) over it, a linker writing its
 * output there) changes or truncates the running plugin's code under it,
 * which crashes the server.  A copy in a memfd is the loader's alone.  The
 * copy is checked before the dynamic linker sees it: a file cut short (still
 * being written) would have it map pages past the end of the file.
 *
 * Functions return 0 or -errno and write ret_ parameters only on success.
 */
#ifndef PERFLIBD_PLUGIN_IMAGE_H
#define PERFLIBD_PLUGIN_IMAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

/* A plugin file larger than this is refused rather than copied. */
#define PLUGIN_IMAGE_MAX        (UINT64_C(256) << 20)

/* One version of a plugin file, from stat(2) (links followed). */
struct file_id {
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
        mode_t mode;
        /*
         * Not part of the version (chown(1) or another hard link do not
         * make a new plugin), but every change to the file moves it, and
         * nobody can set it: what tells that a file has been left alone.
         */
        struct timespec ctime;
};

void file_id_from_stat(const struct stat *st, struct file_id *ret);
/* The same version: the same inode, size, modification time and mode. */
bool file_id_equal(const struct file_id *a, const struct file_id *b);
/* The same version, and not touched since (its ctime did not move either). */
bool file_id_untouched(const struct file_id *a, const struct file_id *b);

/* The private copy of one version of a plugin file. */
struct plugin_image {
        int fd;                         /* a memfd, the image's own */
        uint64_t size;
        char path[32];                  /* "/proc/self/fd/N": what dlopen(3) opens */
};

/*
 * Copies the file at path (links followed) into a new memfd named after
 * name, provided it is still the version expect describes and nothing
 * touches it while it is copied.  -ESTALE: it is another version now, or
 * changed under the copy; -EFBIG: larger than PLUGIN_IMAGE_MAX.  *ret owns
 * the memfd (plugin_image_close).
 */
int plugin_image_copy(const char *path, const char *name, const struct file_id *expect,
                      struct plugin_image *ret);

/*
 * 1 when the image is shorter than its ELF headers say the file is (an ELF
 * file still being written, or cut short), with *ret_need the bytes they
 * need; 0 when it is complete, or no ELF file of this machine's class (the
 * dynamic linker says what is wrong with it then).
 */
int plugin_image_short(const struct plugin_image *img, uint64_t *ret_need);

/* Closes the memfd; accepts a closed image (fd -1). */
void plugin_image_close(struct plugin_image *img);

#endif /* PERFLIBD_PLUGIN_IMAGE_H */
