/* SPDX-License-Identifier: MIT */
/*
 * A plugin file's version and its private copy (plugin-image.h).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "plugin-image.h"

/* The ELF class of this machine's shared objects. */
#if __SIZEOF_POINTER__ == 8
#define NATIVE_CLASS ELFCLASS64
#else
#define NATIVE_CLASS ELFCLASS32
#endif

/* Program headers read at a time. */
#define PHDR_BATCH 32

static bool timespec_equal(const struct timespec *a, const struct timespec *b)
{
        return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

void file_id_from_stat(const struct stat *st, struct file_id *ret)
{
        *ret = (struct file_id) {
                .dev = st->st_dev, .ino = st->st_ino, .size = st->st_size,
                .mtime = st->st_mtim, .mode = st->st_mode, .ctime = st->st_ctim,
        };
}

bool file_id_equal(const struct file_id *a, const struct file_id *b)
{
        return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
               timespec_equal(&a->mtime, &b->mtime) && a->mode == b->mode;
}

bool file_id_untouched(const struct file_id *a, const struct file_id *b)
{
        return file_id_equal(a, b) && timespec_equal(&a->ctime, &b->ctime);
}

/* fd's version, -ESTALE unless it is a regular file still untouched since expect. */
static int check_version(int fd, const struct file_id *expect)
{
        struct file_id now;
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        file_id_from_stat(&st, &now);
        return S_ISREG(st.st_mode) && file_id_untouched(&now, expect) ? 0 : -ESTALE;
}

static int memfd_new(const char *name, int *ret)
{
        char label[64];
        int fd = -1;

        snprintf(label, sizeof(label), "perflib-plugin:%s", name);
#ifdef MFD_EXEC
        /* Where memfds are not executable by default (vm.memfd_noexec); old kernels refuse it. */
        fd = memfd_create(label, MFD_CLOEXEC | MFD_EXEC);
#endif
        if (fd < 0)
                fd = memfd_create(label, MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        *ret = fd;
        return 0;
}

/* Copies all of src into dst: -ESTALE unless that is exactly size bytes. */
static int copy_exact(int src, int dst, uint64_t size)
{
        uint64_t done = 0;

        for (;;) {
                /* One byte more than expected tells a file that grew. */
                ssize_t n = sendfile(dst, src, NULL, (size_t) (size + 1 - done));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return done == size ? 0 : -ESTALE;
                done += (uint64_t) n;
                if (done > size)
                        return -ESTALE;
        }
}

int plugin_image_copy(const char *path, const char *name, const struct file_id *expect,
                      struct plugin_image *ret)
{
        uint64_t size = (uint64_t) expect->size;
        int src, fd = -1, r;

        if (!path || !name || !expect || !ret)
                return -EINVAL;
        /* O_NONBLOCK: a FIFO put there since the scan must not stall the server. */
        src = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (src < 0)
                return errno == ENOENT ? -ESTALE : -errno;
        r = check_version(src, expect);
        if (r == 0 && size > PLUGIN_IMAGE_MAX)
                r = -EFBIG;
        if (r == 0)
                r = memfd_new(name, &fd);
        if (r == 0)
                r = copy_exact(src, fd, size);
        /* What was copied is that version only if nothing touched the file meanwhile. */
        if (r == 0)
                r = check_version(src, expect);
        close(src);
        if (r < 0) {
                if (fd >= 0)
                        close(fd);
                return r;
        }
        ret->fd = fd;
        ret->size = size;
        snprintf(ret->path, sizeof(ret->path), "/proc/self/fd/%d", fd);
        return 0;
}

static int read_at(int fd, void *buf, size_t size, uint64_t off)
{
        ssize_t n = pread(fd, buf, size, (off_t) off);

        if (n < 0)
                return -errno;
        return (size_t) n == size ? 0 : -EIO;
}

/* a + b * c into *end; false when the file's numbers overflow (then not judged). */
static bool extent(uint64_t a, uint64_t b, uint64_t c, uint64_t *end)
{
        uint64_t bc;

        return !__builtin_mul_overflow(b, c, &bc) && !__builtin_add_overflow(a, bc, end);
}

/* The largest end of a segment's file bytes, the program header table's included. */
static int segments_end(const struct plugin_image *img, const ElfW(Ehdr) *eh, uint64_t *need)
{
        ElfW(Phdr) ph[PHDR_BATCH];
        uint64_t end;

        if (eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phnum >= PN_XNUM ||
            !extent(eh->e_phoff, eh->e_phnum, sizeof(ElfW(Phdr)), &end))
                return 0;
        if (end > *need)
                *need = end;
        if (end > img->size)
                return 0;
        for (unsigned i = 0; i < eh->e_phnum; i += PHDR_BATCH) {
                unsigned k = eh->e_phnum - i < PHDR_BATCH ? eh->e_phnum - i : PHDR_BATCH;
                int r = read_at(img->fd, ph, k * sizeof(ph[0]), eh->e_phoff + i * sizeof(ph[0]));

                if (r < 0)
                        return r;
                for (unsigned j = 0; j < k; j++)
                        if (extent(ph[j].p_offset, ph[j].p_filesz, 1, &end) && end > *need)
                                *need = end;
        }
        return 0;
}

int plugin_image_short(const struct plugin_image *img, uint64_t *ret_need)
{
        uint64_t need = sizeof(ElfW(Ehdr)), end;
        ElfW(Ehdr) eh = { 0 };
        int r;

        if (!img || img->fd < 0 || !ret_need)
                return -EINVAL;
        r = read_at(img->fd, &eh, img->size < sizeof(eh) ? img->size : sizeof(eh), 0);
        if (r < 0)
                return r;
        /* An ELF file being written starts with what it has of the magic; other files
         * are no ELF file at all, which the dynamic linker says. */
        if (memcmp(eh.e_ident, ELFMAG, img->size < SELFMAG ? img->size : SELFMAG) != 0)
                return 0;
        if (img->size < sizeof(eh)) {
                *ret_need = need;
                return 1;
        }
        if (eh.e_ident[EI_CLASS] != NATIVE_CLASS)
                return 0;
        r = segments_end(img, &eh, &need);
        if (r < 0)
                return r;
        /* Section headers come last: a file cut short loses them first. */
        if (eh.e_shoff != 0 && eh.e_shentsize == sizeof(ElfW(Shdr)) &&
            extent(eh.e_shoff, eh.e_shnum ? eh.e_shnum : 1, sizeof(ElfW(Shdr)), &end) &&
            end > need)
                need = end;
        if (need <= img->size)
                return 0;
        *ret_need = need;
        return 1;
}

void plugin_image_close(struct plugin_image *img)
{
        if (img && img->fd >= 0) {
                close(img->fd);
                img->fd = -1;
        }
}
