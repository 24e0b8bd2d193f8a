/* SPDX-License-Identifier: MIT */
/*
 * Opening a segment without a service connection: mapping it from a
 * descriptor or copying an image from memory, validating its header once
 * (reader-open.h says why), and closing a reader; and what the validated
 * header says about the provider.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "align.h"
#include "reader-open.h"
#include "reader.h"

/* ---- bounds ---- */

/* A table of n uint64 entries at off, 8-aligned, between the header and the heap. */
static bool table_ok(uint64_t off, uint32_t n, uint64_t lo, uint64_t hi)
{
        return off % PL_SEG_ALIGN == 0 && range_ok(off, (uint64_t) n * 8u, lo, hi);
}

static bool disjoint(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
        /* Both ranges are known not to overflow. */
        return a + alen <= b || b + blen <= a;
}

/* ---- header ---- */

static int header_check_fixed(const struct pl_seg_header *h, uint64_t avail)
{
        if (h->magic != PL_SEG_MAGIC || h->version != PL_SEG_VERSION)
                return -EBADMSG;
        if (h->header_size < sizeof(*h) || h->header_size % PL_SEG_ALIGN != 0)
                return -EBADMSG;
        if (h->segment_size > PL_SEG_MAX_SIZE || h->segment_size > avail ||
            h->segment_size < h->header_size)
                return -EBADMSG;
        if (h->cset_capacity > PL_SEG_MAX_COUNTERSETS || h->dir_capacity > PL_SEG_MAX_INSTANCES)
                return -EBADMSG;
        return 0;
}

/* Tables after the header, before the heap, not overlapping each other. */
static int header_check_layout(const struct pl_seg_header *h)
{
        uint64_t cset_len = (uint64_t) h->cset_capacity * 8u;
        uint64_t dir_len = (uint64_t) h->dir_capacity * 8u;

        if (h->heap_off % PL_SEG_ALIGN != 0 || h->heap_off < h->header_size ||
            h->heap_off > h->segment_size)
                return -EBADMSG;
        if (!table_ok(h->cset_table_off, h->cset_capacity, h->header_size, h->heap_off) ||
            !table_ok(h->dir_off, h->dir_capacity, h->header_size, h->heap_off))
                return -EBADMSG;
        if (!disjoint(h->cset_table_off, cset_len, h->dir_off, dir_len))
                return -EBADMSG;
        return 0;
}

static void header_adopt(struct pl_reader *r, const struct pl_seg_header *h)
{
        r->segment_size = h->segment_size;
        memcpy(&r->provider_guid, h->provider_guid, sizeof(GUID));
        r->pid = h->pid;
        r->cset_table_off = h->cset_table_off;
        r->cset_capacity = h->cset_capacity;
        r->dir_off = h->dir_off;
        r->dir_capacity = h->dir_capacity;
        r->heap_off = h->heap_off;
}

/* Validates the mapped header (a copy of it: the mapping may change under us). */
static int header_validate(struct pl_reader *r)
{
        struct pl_seg_header h;
        uint32_t n;
        int ret;

        if (r->avail < sizeof(h))
                return -EBADMSG;
        memcpy(&h, r->base, sizeof(h));
        ret = header_check_fixed(&h, r->avail);
        if (ret < 0)
                return ret;
        ret = header_check_layout(&h);
        if (ret < 0)
                return ret;
        header_adopt(r, &h);
        ret = load_cset_count(r, &n);
        if (ret < 0)
                return ret;
        return load_dir_high(r, &n);
}

/* ---- lifetime ---- */

struct pl_reader *pl_reader_new(void)
{
        struct pl_reader *r = calloc(1, sizeof(*r));

        if (r)
                r->sock = -1;
        return r;
}

void pl_reader_close(struct pl_reader *r)
{
        if (!r)
                return;
        for (uint32_t i = 0; i < r->n_csets; i++)
                free(r->csets[i]);
        free(r->csets);
        free(r->desc);
        if (r->map)
                munmap(r->map, r->map_len);
        if (r->sock >= 0)
                close(r->sock);
        free(r);
}

/* Reads the header through the descriptor to learn how much to map. */
static int fd_segment_size(int fd, const struct stat *st, uint64_t *ret)
{
        struct pl_seg_header h;
        ssize_t n;

        if (!S_ISREG(st->st_mode) || st->st_size < (off_t) sizeof(h))
                return -EBADMSG;
        do
                n = pread(fd, &h, sizeof(h), 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if ((size_t) n != sizeof(h))
                return -EBADMSG;
        int k = header_check_fixed(&h, (uint64_t) st->st_size);
        if (k < 0)
                return k;
        *ret = h.segment_size;
        return 0;
}

int pl_reader_map_fd(struct pl_reader *r, int fd)
{
        struct stat st;
        uint64_t size = 0;
        int ret;

        if (fstat(fd, &st) < 0)
                return -errno;
        ret = fd_segment_size(fd, &st, &size);
        if (ret < 0)
                return ret;
        if (r->max_map > 0 && size > r->max_map)
                return -EFBIG;
        void *p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
                return -errno;
        r->map = p;
        r->map_len = size;
        r->base = p;
        r->avail = size;
        r->have_id = true;
        r->dev = (uint64_t) st.st_dev;
        r->ino = (uint64_t) st.st_ino;
        /* The header may have changed since pread: validate what is mapped. */
        ret = header_validate(r);
        if (ret == 0 && r->segment_size != size)
                ret = -EBADMSG;
        return ret;
}

int pl_reader_open_fd(int fd, struct pl_reader **ret)
{
        struct pl_reader *r;
        int k;

        if (fd < 0 || !ret)
                return -EINVAL;
        r = pl_reader_new();
        if (!r)
                return -ENOMEM;
        k = pl_reader_map_fd(r, fd);
        if (k < 0) {
                pl_reader_close(r);
                return k;
        }
        *ret = r;
        return 0;
}

/*
 * A private read-only copy, placed so that it ends (give or take the 8-byte
 * alignment the atomic loads need) right before an inaccessible page: a
 * read past the image faults at once instead of going unnoticed, which is
 * what makes the fuzz harness find such bugs.
 */
static int reader_copy_memory(struct pl_reader *r, const void *data, size_t size)
{
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        size_t body = (size_t) pl_align_up(size, page);
        size_t start = (body - size) & ~(size_t) (PL_SEG_ALIGN - 1);
        uint8_t *p;

        if (body < size || body + page < body)
                return -ENOMEM;
        p = mmap(NULL, body + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return -ENOMEM;
        r->map = p;
        r->map_len = body + page;
        memcpy(p + start, data, size);
        if (mprotect(p, body, PROT_READ) < 0 || mprotect(p + body, page, PROT_NONE) < 0)
                return -errno;
        r->base = p + start;
        r->avail = size;
        return 0;
}

int pl_reader_open_memory(const void *data, size_t size, struct pl_reader **ret)
{
        struct pl_reader *r;
        int k;

        if ((!data && size > 0) || !ret)
                return -EINVAL;
        if (size < sizeof(struct pl_seg_header))
                return -EBADMSG;
        r = pl_reader_new();
        if (!r)
                return -ENOMEM;
        k = reader_copy_memory(r, data, size);
        if (k == 0)
                k = header_validate(r);
        if (k < 0) {
                pl_reader_close(r);
                return k;
        }
        *ret = r;
        return 0;
}

/* ---- what the header says ---- */

int pl_reader_provider(struct pl_reader *r, GUID *ret_guid, uint32_t *ret_pid)
{
        if (!r)
                return -EINVAL;
        if (ret_guid)
                *ret_guid = r->provider_guid;
        if (ret_pid)
                *ret_pid = r->pid;
        return 0;
}

int pl_reader_has_callback(struct pl_reader *r)
{
        if (!r)
                return -EINVAL;
        return !!(__atomic_load_n(&hdr(r)->flags, __ATOMIC_ACQUIRE) & PL_SEG_F_CALLBACK);
}

int pl_reader_segment_size(struct pl_reader *r, uint64_t *ret_size)
{
        if (!r || !ret_size)
                return -EINVAL;
        *ret_size = r->segment_size;
        return 0;
}

int pl_reader_heap_usage(struct pl_reader *r, uint64_t *ret_used, uint64_t *ret_size)
{
        if (!r || !ret_used || !ret_size)
                return -EINVAL;
        uint64_t size = r->segment_size - r->heap_off;
        uint64_t used = __atomic_load_n(&hdr(r)->heap_top, __ATOMIC_ACQUIRE);
        if (used > size)
                return -EBADMSG;
        *ret_used = used;
        *ret_size = size;
        return 0;
}
