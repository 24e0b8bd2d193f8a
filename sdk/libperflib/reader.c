/* SPDX-License-Identifier: MIT */
/*
 * The segment reader.  A segment comes from another process (or from a fuzz
 * input), so it is treated as hostile: the constant header fields are
 * validated once and copied, the moving ones are re-validated at every
 * load, and nothing read from it is used as a pointer, size or count before
 * it has been checked against the mapping.  Instance blocks are read under
 * their sequence lock (segment.h) and a block that fails a check is left
 * out of the snapshot rather than failing it, because a block being reused
 * legitimately looks torn for a moment.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "align.h"
#include "desc-parse.h"
#include "proclist.h"
#include "reader.h"
#include "svc.h"

_Static_assert(sizeof(wchar_t) == 4, "instance names are UTF-32");

#define INSTANCE_HDR_SIZE (sizeof(struct pl_seg_instance) + sizeof(PERF_COUNTERSET_INSTANCE))

struct pl_reader {
        const uint8_t *base;            /* the segment image */
        uint64_t avail;                 /* bytes of it readable at base */
        void *map;                      /* the mapping holding it, NULL = none */
        size_t map_len;
        int sock;                       /* collect service connection, -1 = none */
        bool have_id;                   /* dev/ino identify a segment file */
        uint64_t dev, ino;
        uint64_t next_seq;              /* request ids */

        /* Validated copies of the constant header fields. */
        uint64_t segment_size;
        GUID provider_guid;
        uint32_t pid;
        uint64_t cset_table_off;
        uint32_t cset_capacity;
        uint64_t dir_off;
        uint32_t dir_capacity;
        uint64_t heap_off;

        struct pl_counterset **csets;   /* validated descriptors by index, NULL = not yet */
        uint32_t n_csets;               /* entries allocated in csets */

        /* Sizes of the last snapshot, to allocate the next one at once. */
        uint32_t last_instances;
        size_t last_arena;

        struct ctrpp_provider_desc *desc;       /* the parsed self-description, NULL = not yet */
        bool desc_bad;                  /* the published one is malformed: for good */
};

/* ---- bounds ---- */

/* [off, off + len) lies within [lo, hi), without overflow. */
static bool range_ok(uint64_t off, uint64_t len, uint64_t lo, uint64_t hi)
{
        uint64_t end;

        if (__builtin_add_overflow(off, len, &end))
                return false;
        return off >= lo && end <= hi;
}

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

/* An object of len bytes at off, entirely inside the heap and 8-aligned. */
static bool heap_ok(const struct pl_reader *r, uint64_t off, uint64_t len)
{
        return off % PL_SEG_ALIGN == 0 && range_ok(off, len, r->heap_off, r->segment_size);
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

static const struct pl_seg_header *hdr(const struct pl_reader *r)
{
        return (const struct pl_seg_header *) r->base;
}

/* The published counterset count, re-validated at every load. */
static int load_cset_count(const struct pl_reader *r, uint32_t *ret)
{
        uint32_t n = __atomic_load_n(&hdr(r)->cset_count, __ATOMIC_ACQUIRE);

        if (n > r->cset_capacity)
                return -EBADMSG;
        *ret = n;
        return 0;
}

static int load_dir_high(const struct pl_reader *r, uint32_t *ret)
{
        uint32_t n = __atomic_load_n(&hdr(r)->dir_high, __ATOMIC_ACQUIRE);

        if (n > r->dir_capacity)
                return -EBADMSG;
        *ret = n;
        return 0;
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

static struct pl_reader *pl_reader_new(void)
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

static int pl_reader_map_fd(struct pl_reader *r, int fd)
{
        struct stat st;
        uint64_t size = 0;
        int ret;

        if (fstat(fd, &st) < 0)
                return -errno;
        ret = fd_segment_size(fd, &st, &size);
        if (ret < 0)
                return ret;
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

/* ---- the collect service ---- */

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int remaining_ms(int64_t deadline)
{
        int64_t left = deadline - now_ms();

        return left > 0 ? (int) left : 0;
}

int pl_collect_timeout_ms(void)
{
        const char *e = getenv("PERFLIB_COLLECT_TIMEOUT_MS");
        char *end;
        long v;

        if (!e || !*e)
                return PL_SVC_DEFAULT_TIMEOUT_MS;
        errno = 0;
        v = strtol(e, &end, 10);
        if (errno != 0 || *end != '\0' || v < 1 || v > 60000)
                return PL_SVC_DEFAULT_TIMEOUT_MS;
        return (int) v;
}

/*
 * A non-blocking connect: a Unix socket whose backlog is full answers
 * EAGAIN, and a provider that stopped accepting must not hang us, so retry
 * until the deadline.
 */
static int connect_path(int fd, const char *path, int64_t deadline)
{
        struct sockaddr_un sa;
        int dfd, ret;

        ret = pl_sockaddr(path, &sa, &dfd);
        if (ret < 0)
                return ret;
        for (;;) {
                ret = connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ? -errno : 0;
                if (ret != -EAGAIN && ret != -EINTR)
                        break;
                if (remaining_ms(deadline) == 0) {
                        ret = -ETIMEDOUT;
                        break;
                }
                (void) poll(NULL, 0, 1);
        }
        if (dfd >= 0)
                close(dfd);
        return ret;
}

/* The memfd is sealed against shrinking, or a mapping could SIGBUS us. */
static int check_sealed(int fd)
{
        int seals = fcntl(fd, F_GET_SEALS);

        if (seals < 0 || !(seals & F_SEAL_SHRINK))
                return -EBADMSG;
        return 0;
}

static int receive_hello(int sock, int64_t deadline, uint64_t *ret_size, int *ret_fd)
{
        struct pl_svc_msg m;
        uint8_t payload[8];
        int fd = -1, ret;

        ret = pl_svc_recv(sock, &m, payload, sizeof(payload), &fd, remaining_ms(deadline));
        if (ret < 0)
                return ret;
        if (m.op != PL_SVC_HELLO || fd < 0) {
                if (fd >= 0)
                        close(fd);
                return -EBADMSG;
        }
        *ret_size = m.segment_size;
        *ret_fd = fd;
        return 0;
}

static int reader_connect(struct pl_reader *r, const char *socket_path)
{
        int64_t deadline = now_ms() + pl_collect_timeout_ms();
        uint64_t size;
        int fd, ret;

        r->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (r->sock < 0)
                return -errno;
        ret = connect_path(r->sock, socket_path, deadline);
        if (ret < 0)
                return ret;
        ret = receive_hello(r->sock, deadline, &size, &fd);
        if (ret < 0)
                return ret;
        ret = check_sealed(fd);
        if (ret == 0)
                ret = pl_reader_map_fd(r, fd);
        /* The mapping keeps the segment; the descriptor is not needed. */
        close(fd);
        if (ret == 0 && size != r->segment_size)
                ret = -EBADMSG;
        return ret;
}

int pl_reader_open(const char *socket_path, struct pl_reader **ret)
{
        struct pl_reader *r;
        int k;

        if (!socket_path || !ret)
                return -EINVAL;
        r = pl_reader_new();
        if (!r)
                return -ENOMEM;
        k = reader_connect(r, socket_path);
        if (k < 0) {
                pl_reader_close(r);
                return k;
        }
        *ret = r;
        return 0;
}

int pl_reader_alive(struct pl_reader *r)
{
        struct pollfd p;
        char c;
        int k;

        if (!r)
                return -EINVAL;
        if (r->sock < 0)
                return -ENOTCONN;
        p = (struct pollfd) { .fd = r->sock, .events = POLLIN | POLLRDHUP };
        do
                k = poll(&p, 1, 0);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        if (p.revents & (POLLHUP | POLLRDHUP | POLLERR))
                return 0;
        if (!(p.revents & POLLIN))
                return 1;
        /* Readable: either EOF or a late reply to a request that timed out. */
        ssize_t n = recv(r->sock, &c, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
                return 1;
        return 0;
}

/*
 * Sends m with a fresh request id and waits for the reply carrying it;
 * replies to earlier requests that timed out are dropped on the way.
 */
static int request(struct pl_reader *r, struct pl_svc_msg *m, const void *payload,
                   uint32_t *ret_status)
{
        int64_t deadline = now_ms() + pl_collect_timeout_ms();
        uint64_t seq = ++r->next_seq;
        struct pl_svc_msg reply;
        uint8_t buf[PL_SVC_MAX_PAYLOAD];
        int ret;

        m->seq = seq;
        ret = pl_svc_send(r->sock, m, payload, -1);
        if (ret < 0)
                return ret == -EAGAIN ? -ETIMEDOUT : ret;
        for (;;) {
                ret = pl_svc_recv(r->sock, &reply, buf, sizeof(buf), NULL, remaining_ms(deadline));
                if (ret == 0 && reply.op == PL_SVC_REPLY && reply.seq == seq) {
                        *ret_status = reply.status;
                        return 0;
                }
                /* A malformed or stale message is skipped, not fatal. */
                if (ret < 0 && ret != -EBADMSG)
                        return ret;
                if (remaining_ms(deadline) == 0)
                        return -ETIMEDOUT;
        }
}

int pl_reader_notify(struct pl_reader *r, uint32_t request_code,
                     const void *buffer, uint32_t size, uint32_t *ret_status)
{
        struct pl_svc_msg m;
        uint32_t status;
        int ret;

        if (!r || !ret_status || size > PL_SVC_MAX_PAYLOAD || (size > 0 && !buffer))
                return -EINVAL;
        if (r->sock < 0)
                return -ENOTCONN;
        pl_svc_init(&m, PL_SVC_NOTIFY, 0);
        m.request_code = request_code;
        m.payload_size = size;
        ret = request(r, &m, buffer, &status);
        if (ret < 0)
                return ret;
        *ret_status = status;
        return 0;
}

/* Refreshes by-reference counters; false when that could not be done in time. */
static bool pl_reader_collect(struct pl_reader *r)
{
        struct pl_svc_msg m;
        uint32_t status;

        if (r->have_id && pl_provider_collect_local(r->dev, r->ino) == 0)
                return true;
        if (r->sock < 0)
                return false;
        pl_svc_init(&m, PL_SVC_COLLECT, 0);
        return request(r, &m, NULL, &status) == 0 && status == 0;
}

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

/* ---- countersets ---- */

int pl_reader_counterset_count(struct pl_reader *r)
{
        uint32_t n;
        int ret;

        if (!r)
                return -EINVAL;
        ret = load_cset_count(r, &n);
        return ret < 0 ? ret : (int) n;
}

static bool counter_numeric(uint32_t type)
{
        uint32_t s = type & PERF_SIZE_VARIABLE_LEN;

        return s != PERF_SIZE_ZERO && s != PERF_SIZE_VARIABLE_LEN;
}

static bool counter_ok(const struct pl_seg_counter *c, uint32_t data_size, uint32_t num_refs)
{
        if ((uint64_t) c->offset + c->size > data_size)
                return false;
        if (counter_numeric(c->type) &&
            ((c->size != 4 && c->size != 8) || c->offset % c->size != 0))
                return false;
        return c->ref_index == PL_SEG_NO_REF || c->ref_index < num_refs;
}

static bool cset_head_ok(const struct pl_seg_counterset *d, uint32_t index)
{
        return d->num_counters > 0 && d->num_counters <= PL_SEG_MAX_COUNTERS &&
               d->data_size % PL_SEG_ALIGN == 0 && d->data_size <= PL_SEG_MAX_DATA_SIZE &&
               d->num_refs <= d->num_counters && d->index == index;
}

/* Every counter in bounds, and exactly num_refs of them by reference. */
static bool counters_ok(const struct pl_seg_counter *cs, const struct pl_seg_counterset *d)
{
        uint32_t refs = 0;

        for (uint32_t i = 0; i < d->num_counters; i++) {
                if (!counter_ok(&cs[i], d->data_size, d->num_refs))
                        return false;
                refs += cs[i].ref_index != PL_SEG_NO_REF;
        }
        return refs == d->num_refs;
}

/* Copies and validates the descriptor at off; the copy is what gets checked. */
static int cset_load(const struct pl_reader *r, uint64_t off, uint32_t index,
                     struct pl_counterset **ret)
{
        struct pl_seg_counterset d;
        struct pl_counterset *c;
        size_t bytes;

        if (!heap_ok(r, off, sizeof(d)))
                return -EBADMSG;
        memcpy(&d, r->base + off, sizeof(d));
        bytes = (size_t) d.num_counters * sizeof(struct pl_seg_counter);
        if (!cset_head_ok(&d, index) || !heap_ok(r, off, sizeof(d) + (uint64_t) bytes))
                return -EBADMSG;
        c = malloc(sizeof(*c) + bytes);
        if (!c)
                return -ENOMEM;
        c->counters = (struct pl_seg_counter *) (c + 1);
        memcpy(c->counters, r->base + off + sizeof(d), bytes);
        if (!counters_ok(c->counters, &d)) {
                free(c);
                return -EBADMSG;
        }
        memcpy(&c->guid, d.guid, sizeof(GUID));
        c->index = index;
        c->instance_type = d.instance_type;
        c->num_counters = d.num_counters;
        c->data_size = d.data_size;
        c->num_refs = d.num_refs;
        *ret = c;
        return 0;
}

static int cache_grow(struct pl_reader *r, uint32_t index)
{
        uint32_t n = r->n_csets ? r->n_csets : 8;

        while (n <= index)
                n *= 2;
        struct pl_counterset **a = realloc(r->csets, sizeof(*a) * n);
        if (!a)
                return -ENOMEM;
        memset(a + r->n_csets, 0, sizeof(*a) * (n - r->n_csets));
        r->csets = a;
        r->n_csets = n;
        return 0;
}

/* The counterset at index, which the caller has checked is below the published count. */
static int pl_reader_cset_get(struct pl_reader *r, uint32_t index, const struct pl_counterset **ret)
{
        int k;

        if (index < r->n_csets && r->csets[index]) {
                *ret = r->csets[index];
                return 0;
        }
        if (index >= r->n_csets && (k = cache_grow(r, index)) < 0)
                return k;
        const uint64_t *table = (const uint64_t *) (r->base + r->cset_table_off);
        uint64_t off = __atomic_load_n(&table[index], __ATOMIC_ACQUIRE);
        k = cset_load(r, off, index, &r->csets[index]);
        if (k < 0)
                return k;
        *ret = r->csets[index];
        return 0;
}

int pl_reader_counterset(struct pl_reader *r, uint32_t index, const struct pl_counterset **ret)
{
        uint32_t n;
        int k;

        if (!r || !ret)
                return -EINVAL;
        k = load_cset_count(r, &n);
        if (k < 0)
                return k;
        if (index >= n)
                return -ENOENT;
        return pl_reader_cset_get(r, index, ret);
}

int pl_reader_find_counterset(struct pl_reader *r, const GUID *guid,
                              const struct pl_counterset **ret)
{
        const struct pl_counterset *c;
        uint32_t n;
        int k;

        if (!r || !guid || !ret)
                return -EINVAL;
        k = load_cset_count(r, &n);
        if (k < 0)
                return k;
        for (uint32_t i = 0; i < n; i++) {
                /* A broken counterset cannot be the one asked for; look on. */
                if (pl_reader_cset_get(r, i, &c) == 0 &&
                    memcmp(&c->guid, guid, sizeof(GUID)) == 0) {
                        *ret = c;
                        return 0;
                }
        }
        return -ENOENT;
}

/* ---- the self-description ---- */

/* A private copy of the published blob, so that the provider cannot change it under the checks. */
static int desc_copy(const struct pl_reader *r, uint8_t **ret, uint64_t *ret_size)
{
        uint64_t size = __atomic_load_n(&hdr(r)->desc_size, __ATOMIC_ACQUIRE);
        uint64_t off = __atomic_load_n(&hdr(r)->desc_off, __ATOMIC_RELAXED);
        uint8_t *copy;

        if (size == 0)
                return -ENODATA;
        if (size > PL_SEG_MAX_DESC_SIZE || !heap_ok(r, off, size))
                return -EBADMSG;
        copy = malloc(size);
        if (!copy)
                return -ENOMEM;
        memcpy(copy, r->base + off, size);
        *ret = copy;
        *ret_size = size;
        return 0;
}

int pl_reader_description(struct pl_reader *r, const struct ctrpp_provider_desc **ret)
{
        uint8_t *blob = NULL;
        uint64_t size;
        int k;

        if (!r || !ret)
                return -EINVAL;
        /*
         * Published once and never changed: one parse holds for good, a
         * malformed blob too (perflibd asks on every request until it has one).
         */
        if (r->desc_bad)
                return -EBADMSG;
        if (!r->desc) {
                k = desc_copy(r, &blob, &size);
                if (k == 0) {
                        k = pl_desc_parse(blob, size, &r->desc);
                        free(blob);
                }
                if (k == -EBADMSG)
                        r->desc_bad = true;
                if (k < 0)
                        return k;
        }
        *ret = r->desc;
        return 0;
}

/* ---- snapshots ---- */

void pl_snapshot_free(struct pl_snapshot *s)
{
        if (!s)
                return;
        /* Every instance's values and name live in the arena (snap_finish). */
        free(s->arena);
        free(s->instances);
        free(s);
}

/* The PERF_COUNTERSET_INSTANCE copy agrees with the directory and the descriptor. */
static bool inst_head_ok(const struct pl_counterset *c, const PERF_COUNTERSET_INSTANCE *ci)
{
        uint32_t name_off = (uint32_t) sizeof(*ci) + c->data_size;

        if (memcmp(&ci->CounterSetGuid, &c->guid, sizeof(GUID)) != 0)
                return false;
        if (ci->InstanceNameOffset != name_off || ci->InstanceNameSize < sizeof(wchar_t) ||
            ci->InstanceNameSize % sizeof(wchar_t) != 0 ||
            ci->InstanceNameSize > PL_SEG_MAX_NAME_BYTES)
                return false;
        return ci->dwSize == name_off + pl_align_up(ci->InstanceNameSize, PL_SEG_ALIGN);
}

/*
 * data is 8-aligned (block offset and header sizes are multiples of 8), so a
 * slot aligned to its own size gets one atomic load; text and size-zero
 * counters that are not such slots read as 0.
 */
static uint64_t load_value(const uint8_t *data, const struct pl_seg_counter *c)
{
        if (c->size == 8 && c->offset % 8 == 0)
                return __atomic_load_n((const uint64_t *) (data + c->offset), __ATOMIC_RELAXED);
        if (c->size == 4 && c->offset % 4 == 0)
                return __atomic_load_n((const uint32_t *) (data + c->offset), __ATOMIC_RELAXED);
        return 0;
}

/* The name copy holds exactly one NUL, at its end. */
static bool name_ok(const wchar_t *name, uint32_t chars)
{
        return name[chars - 1] == L'\0' && wcsnlen(name, chars) == chars - 1;
}

/*
 * Copies the parts of a block read under its sequence lock.  Everything
 * that sizes a copy comes from the local header copy, so a block changing
 * underneath can only produce a copy that the seq check then discards.
 * name NULL: the name is checked for size only and not copied (the caller
 * fetches it with pl_reader_instance_name when it does not know it yet).
 */
static inline int inst_copy(const struct pl_reader *r, const struct pl_counterset *c, uint64_t off,
                     uint32_t slot, wchar_t *name, struct pl_instance *out)
{
        const struct pl_seg_instance *si = (const struct pl_seg_instance *) (r->base + off);
        const uint8_t *ci_base = r->base + off + sizeof(*si);
        PERF_COUNTERSET_INSTANCE ci;
        uint32_t seq, dir_slot;

        seq = __atomic_load_n(&si->seq, __ATOMIC_ACQUIRE);
        if (seq & 1)
                return -EAGAIN;
        dir_slot = __atomic_load_n(&si->dir_slot, __ATOMIC_RELAXED);
        __builtin_memcpy(&ci, ci_base, sizeof(ci));
        if (dir_slot != slot || !inst_head_ok(c, &ci) ||
            !heap_ok(r, off, sizeof(*si) + (uint64_t) ci.dwSize))
                return -EBADMSG;
        if (name)
                memcpy(name, ci_base + ci.InstanceNameOffset, ci.InstanceNameSize);
        for (uint32_t i = 0; i < c->num_counters; i++)
                out->values[i] = load_value(ci_base + sizeof(ci), &c->counters[i]);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&si->seq, __ATOMIC_RELAXED) != seq)
                return -EAGAIN;
        uint32_t chars = ci.InstanceNameSize / (uint32_t) sizeof(wchar_t);
        if (name && !name_ok(name, chars))
                return -EBADMSG;
        out->instance_id = ci.InstanceId;
        out->seq = seq;
        out->name_len = name ? chars - 1 : 0;
        return 0;
}

/*
 * Reads one directory entry's block into out: the values into vals (the
 * counterset's counters), the name into scratch (PL_SEG_MAX_NAME_BYTES;
 * NULL: no name).  <0 leaves the block out of the snapshot.
 */
static inline int inst_read(const struct pl_reader *r, const struct pl_counterset *c, uint64_t off,
                     uint32_t slot, wchar_t *scratch, uint64_t *vals, struct pl_instance *out)
{
        /* The fixed part first; the name's extent is checked once it is known. */
        if (!heap_ok(r, off, INSTANCE_HDR_SIZE + (uint64_t) c->data_size))
                return -EBADMSG;
        *out = (struct pl_instance) {
                .cset_index = c->index,
                .dir_slot = slot,
                .block_off = off,
                .num_values = c->num_counters,
                .values = vals,
        };
        return inst_copy(r, c, off, slot, scratch, out);
}

struct snap_state {
        struct pl_reader *r;
        uint32_t want;                  /* cset index or PL_ALL_COUNTERSETS */
        uint32_t n_csets;               /* published when the scan started */
        bool no_names;                  /* PL_SNAPSHOT_NO_NAMES */
        uint32_t last_ci;               /* the counterset of the last slot read, */
        const struct pl_counterset *last_c;     /* NULL = none yet */
        struct pl_snapshot *s;
        uint32_t cap;
        uint64_t *vals;                 /* scratch for one instance's values */
        uint32_t vals_cap;
        /*
         * Every kept instance's values and name, back to back: one growing
         * block rather than an allocation per instance (a snapshot of
         * 100,000 instances is taken on every query).  offs[i] is where
         * instance i's part starts; pointers are set once the block stops
         * moving (snap_finish).
         */
        uint8_t *arena;
        size_t arena_len, arena_cap;
        size_t *offs;
        wchar_t name[PL_SEG_MAX_NAME_BYTES / sizeof(wchar_t)];
};

/* Copies one instance's values and name to the end of the arena. */
static int arena_put(struct snap_state *st, const struct pl_instance *inst, size_t *ret_off)
{
        size_t vsize = (size_t) inst->num_values * sizeof(uint64_t);
        size_t nsize = st->no_names ? 0 : ((size_t) inst->name_len + 1) * sizeof(wchar_t);
        size_t need = (vsize + nsize + 7) & ~(size_t) 7;

        if (need > st->arena_cap - st->arena_len) {
                size_t hint = st->r->last_arena + st->r->last_arena / 8;
                size_t cap = st->arena_cap ? st->arena_cap : hint > 4096 ? hint : 4096;
                uint8_t *a;

                while (cap - st->arena_len < need)
                        cap *= 2;
                a = realloc(st->arena, cap);
                if (!a)
                        return -ENOMEM;
                st->arena = a;
                st->arena_cap = cap;
        }
        /* A few values at most, aligned: a loop, not a call. */
        for (uint32_t i = 0; i < inst->num_values; i++)
                memcpy(st->arena + st->arena_len + i * sizeof(uint64_t), &inst->values[i],
                       sizeof(uint64_t));
        if (nsize)
                memcpy(st->arena + st->arena_len + vsize, st->name, nsize);
        *ret_off = st->arena_len;
        st->arena_len += need;
        return 0;
}

/* Points every instance into the arena, which the snapshot now owns. */
static void snap_finish(struct snap_state *st)
{
        struct pl_snapshot *s = st->s;

        for (uint32_t i = 0; i < s->n_instances; i++) {
                struct pl_instance *in = &s->instances[i];

                in->values = (uint64_t *) (st->arena + st->offs[i]);
                if (!st->no_names)
                        in->name = (wchar_t *) (st->arena + st->offs[i] +
                                                (size_t) in->num_values * sizeof(uint64_t));
        }
        s->arena = st->arena;
        st->arena = NULL;
}

static int vals_reserve(struct snap_state *st, uint32_t n)
{
        uint64_t *v;

        if (n <= st->vals_cap)
                return 0;
        v = realloc(st->vals, (size_t) n * sizeof(*v));
        if (!v)
                return -ENOMEM;
        st->vals = v;
        st->vals_cap = n;
        return 0;
}

static int snap_push(struct snap_state *st, const struct pl_instance *inst)
{
        struct pl_snapshot *s = st->s;
        size_t off;

        if (s->n_instances == st->cap) {
                uint32_t hint = st->r->last_instances + st->r->last_instances / 8;
                uint32_t cap = st->cap ? st->cap * 2 : hint > 64 ? hint : 64;
                struct pl_instance *a = realloc(s->instances, sizeof(*a) * cap);
                size_t *o;

                if (!a)
                        return -ENOMEM;
                s->instances = a;
                o = realloc(st->offs, sizeof(*o) * cap);
                if (!o)
                        return -ENOMEM;
                st->offs = o;
                st->cap = cap;
        }
        if (arena_put(st, inst, &off) < 0)
                return -ENOMEM;

        st->offs[s->n_instances] = off;
        s->instances[s->n_instances] = *inst;
        s->instances[s->n_instances].values = NULL;     /* set by snap_finish */
        s->instances[s->n_instances].name = NULL;
        s->n_instances++;
        return 0;
}

/* One directory slot; only out-of-memory is an error, a bad block is skipped. */
static int snap_slot(struct snap_state *st, const uint64_t *dir, uint32_t slot)
{
        const struct pl_counterset *c;
        struct pl_instance inst;
        uint64_t e = __atomic_load_n(&dir[slot], __ATOMIC_ACQUIRE);
        uint32_t ci = (uint32_t) (e >> PL_DIR_CSET_SHIFT);
        int k;

        if (e == 0 || (st->want != PL_ALL_COUNTERSETS && ci != st->want))
                return 0;
        if (ci >= st->n_csets) {
                /* Published after the count was read, or garbage: re-check. */
                if (load_cset_count(st->r, &st->n_csets) < 0 || ci >= st->n_csets)
                        return 0;
        }
        if (st->last_c && ci == st->last_ci) {
                /* Slot after slot holds the same counterset: looked up once. */
                c = st->last_c;
        } else {
                k = pl_reader_cset_get(st->r, ci, &c);
                if (k < 0)
                        return k == -ENOMEM ? k : 0;
                k = vals_reserve(st, c->num_counters);
                if (k < 0)
                        return k;
                st->last_ci = ci;
                st->last_c = c;
        }
        k = inst_read(st->r, c, e & PL_DIR_OFFSET_MASK, slot, st->no_names ? NULL : st->name,
                      st->vals, &inst);
        if (k < 0)
                return k == -ENOMEM ? k : 0;
        return snap_push(st, &inst);
}

static int snap_scan(struct snap_state *st)
{
        const uint64_t *dir = (const uint64_t *) (st->r->base + st->r->dir_off);
        uint32_t high;
        int k;

        k = load_dir_high(st->r, &high);
        if (k < 0)
                return k;
        for (uint32_t slot = 0; slot < high; slot++) {
                k = snap_slot(st, dir, slot);
                if (k < 0)
                        return k;
        }
        return 0;
}

/* Whether any of the requested countersets has by-reference counters. */
static bool wants_refs(struct pl_reader *r, uint32_t want, uint32_t n_csets)
{
        const struct pl_counterset *c;

        for (uint32_t i = 0; i < n_csets; i++)
                if ((want == PL_ALL_COUNTERSETS || want == i) &&
                    pl_reader_cset_get(r, i, &c) == 0 && c->num_refs > 0)
                        return true;
        return false;
}

static int snap_prepare(struct snap_state *st, uint32_t cset_index)
{
        const struct pl_counterset *c;
        int k;

        k = load_cset_count(st->r, &st->n_csets);
        if (k < 0)
                return k;
        if (cset_index != PL_ALL_COUNTERSETS) {
                if (cset_index >= st->n_csets)
                        return -ENOENT;
                k = pl_reader_cset_get(st->r, cset_index, &c);
                if (k < 0)
                        return k;
        }
        st->s = calloc(1, sizeof(*st->s));
        return st->s ? 0 : -ENOMEM;
}

int pl_reader_snapshot(struct pl_reader *r, uint32_t cset_index, unsigned flags,
                       struct pl_snapshot **ret)
{
        struct snap_state st = { .r = r, .want = cset_index,
                                 .no_names = flags & PL_SNAPSHOT_NO_NAMES };
        int k;

        if (!r || !ret || (flags & ~(PL_SNAPSHOT_COLLECT | PL_SNAPSHOT_NO_NAMES)))
                return -EINVAL;
        k = snap_prepare(&st, cset_index);
        if (k < 0)
                return k;
        if ((flags & PL_SNAPSHOT_COLLECT) && wants_refs(r, cset_index, st.n_csets))
                st.s->refs_stale = !pl_reader_collect(r);
        st.s->generation = __atomic_load_n(&hdr(r)->generation, __ATOMIC_ACQUIRE);
        k = snap_scan(&st);
        if (k == 0) {
                /* Most snapshots of a reader look like the one before. */
                r->last_instances = st.s->n_instances;
                r->last_arena = st.arena_len;
                snap_finish(&st);
        }
        free(st.vals);
        free(st.offs);
        free(st.arena);
        if (k < 0) {
                pl_snapshot_free(st.s);
                return k;
        }
        *ret = st.s;
        return 0;
}

/* ---- values only, into the caller's records ---- */

/*
 * What every block of one counterset must show, worked out once per call
 * rather than per instance.  all8: every counter an aligned 8-byte slot
 * (the common layout), read without looking at each counter's size.
 */
struct rec_shape {
        const struct pl_counterset *c;
        uint64_t guid[2];
        uint32_t name_off;              /* InstanceNameOffset every block has */
        uint32_t n;                     /* counters */
        bool all8;
};

static void rec_shape_init(struct rec_shape *sh, const struct pl_counterset *c)
{
        *sh = (struct rec_shape) { .c = c, .n = c->num_counters, .all8 = true,
                                   .name_off = (uint32_t) sizeof(PERF_COUNTERSET_INSTANCE) +
                                               c->data_size };
        memcpy(sh->guid, &c->guid, sizeof(sh->guid));
        for (uint32_t i = 0; i < c->num_counters; i++)
                sh->all8 &= c->counters[i].size == 8 && c->counters[i].offset % 8 == 0;
}

/* inst_head_ok, with what depends on the counterset alone taken from sh. */
static inline bool rec_head_ok(const struct rec_shape *sh, const PERF_COUNTERSET_INSTANCE *ci)
{
        uint64_t g[2];

        memcpy(g, &ci->CounterSetGuid, sizeof(g));
        if (((g[0] ^ sh->guid[0]) | (g[1] ^ sh->guid[1])) != 0)
                return false;
        if (ci->InstanceNameOffset != sh->name_off || ci->InstanceNameSize < sizeof(wchar_t) ||
            ci->InstanceNameSize % sizeof(wchar_t) != 0 ||
            ci->InstanceNameSize > PL_SEG_MAX_NAME_BYTES)
                return false;
        return ci->dwSize == sh->name_off + pl_align_up(ci->InstanceNameSize, PL_SEG_ALIGN);
}

static inline void rec_values(const struct rec_shape *sh, const uint8_t *data, uint64_t *out)
{
        const struct pl_seg_counter *cs = sh->c->counters;

        if (sh->all8) {
                /* n >= 1 (cset_head_ok); a plain loop, nothing to unroll for one or two. */
                uint32_t i = 0;

                do
                        out[i] = __atomic_load_n((const uint64_t *) (data + cs[i].offset),
                                                 __ATOMIC_RELAXED);
                while (++i < sh->n);
                return;
        }
        for (uint32_t i = 0; i < sh->n; i++)
                out[i] = load_value(data, &cs[i]);
}

/*
 * One block read under its seq lock straight into rec: the checks of
 * inst_copy, without the name, the intermediate instance or its copy.
 */
static inline bool rec_read(const struct pl_reader *r, const struct rec_shape *sh,
                            uint64_t off, uint32_t slot, struct pl_value_rec *rec)
{
        const struct pl_seg_instance *si = (const struct pl_seg_instance *) (r->base + off);
        const uint8_t *ci_base = r->base + off + sizeof(*si);
        PERF_COUNTERSET_INSTANCE ci;
        uint32_t seq;

        if (!heap_ok(r, off, INSTANCE_HDR_SIZE + (uint64_t) sh->c->data_size))
                return false;
        seq = __atomic_load_n(&si->seq, __ATOMIC_ACQUIRE);
        if (seq & 1)
                return false;
        if (__atomic_load_n(&si->dir_slot, __ATOMIC_RELAXED) != slot)
                return false;
        __builtin_memcpy(&ci, ci_base, sizeof(ci));
        if (!rec_head_ok(sh, &ci) || !heap_ok(r, off, sizeof(*si) + (uint64_t) ci.dwSize))
                return false;
        rec_values(sh, ci_base + sizeof(ci), rec->values);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&si->seq, __ATOMIC_RELAXED) != seq)
                return false;
        rec->dir_slot = slot;
        rec->seq = seq;
        rec->block_off = off;
        rec->instance_id = ci.InstanceId;
        rec->num_values = sh->n;
        return true;
}

/* Room for n records of v->stride bytes; the records already there are kept. */
static int values_reserve(struct pl_values *v, size_t n)
{
        size_t need, cap;
        uint8_t *a;

        if (n > SIZE_MAX / v->stride)
                return -ENOMEM;
        need = n * v->stride;
        if (need <= v->cap)
                return 0;
        cap = v->cap ? v->cap : 4096;
        while (cap < need)
                cap *= 2;
        a = realloc(v->recs, cap);
        if (!a)
                return -ENOMEM;
        v->recs = a;
        v->cap = cap;
        return 0;
}

/*
 * Every slot up to dir_high holding an instance of c: a record is claimed
 * for each used slot of the counterset before it is read, so a block that
 * fails a check costs only the slot, left unused.
 */
static int values_scan(struct pl_reader *r, const struct pl_counterset *c, struct pl_values *v)
{
        const uint64_t *dir = (const uint64_t *) (r->base + r->dir_off);
        struct rec_shape sh;
        uint8_t *at, *end;
        uint32_t high;
        int k;

        k = load_dir_high(r, &high);
        if (k < 0)
                return k;
        rec_shape_init(&sh, c);
        /* A buffer from the first call on: no arithmetic on a NULL one below. */
        if (!v->recs && (k = values_reserve(v, 1)) < 0)
                return k;
        at = v->recs;
        end = v->recs + v->cap / v->stride * v->stride;
        for (uint32_t slot = 0; slot < high; slot++) {
                uint64_t e = __atomic_load_n(&dir[slot], __ATOMIC_ACQUIRE);

                if (e == 0 || (uint32_t) (e >> PL_DIR_CSET_SHIFT) != c->index)
                        continue;
                if (at == end) {
                        size_t n = (size_t) (at - v->recs) / v->stride;

                        k = values_reserve(v, n + 1);
                        if (k < 0)
                                return k;
                        at = v->recs + n * v->stride;
                        end = v->recs + v->cap / v->stride * v->stride;
                }
                if (rec_read(r, &sh, e & PL_DIR_OFFSET_MASK, slot, (struct pl_value_rec *) at))
                        at += v->stride;
        }
        v->n_instances = (uint32_t) ((size_t) (at - v->recs) / v->stride);
        return 0;
}

int pl_reader_values(struct pl_reader *r, uint32_t cset_index, unsigned flags,
                     struct pl_values *v)
{
        const struct pl_counterset *c;
        uint32_t n_csets;
        int k;

        if (!r || !v || (flags & ~PL_SNAPSHOT_COLLECT))
                return -EINVAL;
        v->n_instances = 0;
        v->refs_stale = false;
        k = load_cset_count(r, &n_csets);
        if (k < 0)
                return k;
        if (cset_index >= n_csets)
                return -ENOENT;
        k = pl_reader_cset_get(r, cset_index, &c);
        if (k < 0)
                return k;
        v->num_values = c->num_counters;
        v->stride = sizeof(struct pl_value_rec) + (size_t) c->num_counters * sizeof(uint64_t);
        if ((flags & PL_SNAPSHOT_COLLECT) && c->num_refs > 0)
                v->refs_stale = !pl_reader_collect(r);
        v->generation = __atomic_load_n(&hdr(r)->generation, __ATOMIC_ACQUIRE);
        k = values_scan(r, c, v);
        if (k < 0)
                v->n_instances = 0;
        return k;
}

void pl_reader_values_done(struct pl_values *v)
{
        if (!v)
                return;
        free(v->recs);
        v->recs = NULL;
        v->cap = 0;
        v->n_instances = 0;
}

int pl_reader_rec_name(struct pl_reader *r, uint32_t cset_index, const struct pl_value_rec *rec,
                       wchar_t *buf, uint32_t *ret_len)
{
        struct pl_instance in;

        if (!rec)
                return -EINVAL;
        in = (struct pl_instance) { .cset_index = cset_index, .instance_id = rec->instance_id,
                                    .dir_slot = rec->dir_slot, .seq = rec->seq,
                                    .block_off = rec->block_off };
        return pl_reader_instance_name(r, &in, buf, ret_len);
}

int pl_reader_instance_name(struct pl_reader *r, const struct pl_instance *in,
                            wchar_t *buf, uint32_t *ret_len)
{
        const struct pl_counterset *c;
        struct pl_instance again;
        uint64_t *vals;
        int k;

        if (!r || !in || !buf || !ret_len)
                return -EINVAL;
        k = pl_reader_cset_get(r, in->cset_index, &c);
        if (k < 0)
                return k;
        /* The values are read again and dropped: one read path, one set of checks. */
        vals = malloc(((size_t) c->num_counters + 1) * sizeof(*vals));
        if (!vals)
                return -ENOMEM;
        k = inst_read(r, c, in->block_off, in->dir_slot, buf, vals, &again);
        free(vals);
        if (k == 0 && again.seq != in->seq)
                return -ESTALE;
        if (k < 0 && k != -ENOMEM && heap_ok(r, in->block_off, sizeof(struct pl_seg_instance))) {
                /* A block reused for another instance looks malformed for a moment. */
                const struct pl_seg_instance *si =
                        (const struct pl_seg_instance *) (r->base + in->block_off);

                if (k == -EAGAIN || __atomic_load_n(&si->seq, __ATOMIC_ACQUIRE) != in->seq)
                        return -ESTALE;
        }
        if (k < 0)
                return k;
        *ret_len = again.name_len;
        return 0;
}

/* ---- discovery ---- */

static bool socket_name(const struct dirent *de)
{
        size_t len = strlen(de->d_name);
        size_t pre = strlen(PL_SVC_SOCKET_PREFIX), suf = strlen(PL_SVC_SOCKET_SUFFIX);

        if (de->d_type != DT_UNKNOWN && de->d_type != DT_SOCK)
                return false;
        return len > pre + suf && strncmp(de->d_name, PL_SVC_SOCKET_PREFIX, pre) == 0 &&
               strcmp(de->d_name + len - suf, PL_SVC_SOCKET_SUFFIX) == 0;
}

/* 0: someone listens; -ECONNREFUSED: nobody does; other -errno: cannot tell. */
static int probe(const char *path)
{
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_un sa;
        int dfd, k;

        if (fd < 0)
                return -errno;
        k = pl_sockaddr(path, &sa, &dfd);
        if (k == 0)
                k = connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ? -errno : 0;
        /* A full backlog means a live listener that is busy. */
        if (k == -EAGAIN)
                k = 0;
        if (dfd >= 0)
                close(dfd);
        close(fd);
        return k;
}

/*
 * Removes a dead provider's socket, unless a new provider has meanwhile
 * replaced it under the same name (the file is no longer the one probed).
 */
static bool reclaim(int dfd, const char *name, const struct stat *before)
{
        struct stat now;

        if (fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
            now.st_ino != before->st_ino || now.st_dev != before->st_dev)
                return false;
        return unlinkat(dfd, name, 0) == 0;
}

static int scan_entry(const char *dir, DIR *d, const struct dirent *de,
                      int (*cb)(const char *, void *), void *userdata, unsigned *reclaimed)
{
        struct stat st;
        char *path;
        int k;

        if (!socket_name(de))
                return 0;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode))
                return 0;
        if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
                return -ENOMEM;
        k = probe(path);
        if (k == -ECONNREFUSED)
                *reclaimed += reclaim(dirfd(d), de->d_name, &st);
        k = k == 0 ? cb(path, userdata) : 0;
        free(path);
        return k;
}

int pl_scan(const char *dir, int (*cb)(const char *socket_path, void *userdata),
            void *userdata, unsigned *ret_reclaimed)
{
        unsigned reclaimed = 0;
        struct dirent *de;
        int k = 0;

        if (!dir || !cb)
                return -EINVAL;
        DIR *d = opendir(dir);
        if (!d)
                return -errno;
        while (k == 0 && (de = readdir(d)))
                k = scan_entry(dir, d, de, cb, userdata, &reclaimed);
        closedir(d);
        if (ret_reclaimed)
                *ret_reclaimed = reclaimed;
        return k;
}
