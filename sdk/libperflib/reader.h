/* SPDX-License-Identifier: MIT */
/*
 * The segment reader: internal, not API.  perflibd and the tests use it; it
 * is exported from libperflib.so only under the PERFLIB_PRIVATE version node
 * (as glibc does with GLIBC_PRIVATE) because in-process dereferencing of
 * reference counters must share the provider runtime's state.  No header of
 * this is installed.
 *
 * Every function returns 0 (or a count) on success and -errno on failure,
 * and writes its ret_ parameters only on success.  A segment is untrusted
 * input: every offset, size and count read from it is checked, and a bad
 * one is reported as -EBADMSG, never followed.
 */
#ifndef PL_READER_H
#define PL_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <wchar.h>

#include "perflib.h"
#include "segment.h"

/* PL_PRIVATE and pl_runtime_dir, which the provider runtime uses too. */
#include "runtime.h"

/*
 * A reader is not thread-safe: one thread at a time per struct pl_reader
 * (perflibd serialises its use; open one reader per thread otherwise).
 */
struct pl_reader;

/*
 * Connects to the collect service socket of one provider, receives its
 * segment descriptor and maps it read-only.  -ECONNREFUSED or -ENOENT: the
 * provider is gone.  -ETIMEDOUT: it did not answer within the collect bound.
 * -EPERM: the process listening is not the user who made the socket file.
 * The returned reader is owned by the caller (pl_reader_close).
 */
PL_PRIVATE int pl_reader_open(const char *socket_path, struct pl_reader **ret);

/*
 * As pl_reader_open, but a segment announcing more than max_size bytes (0:
 * no cap but the format's) is refused with -EFBIG before anything is
 * mapped: a server caps what one provider makes it map.
 */
PL_PRIVATE int pl_reader_open_max(const char *socket_path, uint64_t max_size,
                                  struct pl_reader **ret);

/*
 * Maps a segment from a descriptor (read-only) with no service connection:
 * for tests and the fuzz harness.  The descriptor stays the caller's; the
 * mapping does not need it once this returns.
 */
PL_PRIVATE int pl_reader_open_fd(int fd, struct pl_reader **ret);

/* Also validates a segment image in memory (the fuzz harness's entry). */
PL_PRIVATE int pl_reader_open_memory(const void *data, size_t size, struct pl_reader **ret);

/* Unmaps and disconnects; accepts NULL. */
PL_PRIVATE void pl_reader_close(struct pl_reader *r);

/*
 * 1 while the provider lives, 0 once it has exited or been killed (its
 * service connection hung up), -errno on error.  Costs one poll(2).
 */
PL_PRIVATE int pl_reader_alive(struct pl_reader *r);

/*
 * The provider's pid as the kernel saw it listen (SO_PEERCRED of the
 * service connection, in this process's pid namespace), not the header's,
 * which the provider writes itself.  -ESRCH when it is not visible here.
 */
PL_PRIVATE int pl_reader_peer_pid(struct pl_reader *r, pid_t *ret_pid);
/* The bytes of the segment the reader maps, from the (validated) header. */
PL_PRIVATE int pl_reader_segment_size(struct pl_reader *r, uint64_t *ret_size);

/*
 * The uid of the process that made the provider's socket listen, as the
 * kernel recorded it (SO_PEERCRED): who the provider runs as, which the
 * provider cannot forge.  -ENOTCONN for a reader without a connection.
 */
PL_PRIVATE int pl_reader_peer_uid(struct pl_reader *r, uid_t *ret_uid);

/* Provider identity, from the (validated) header. */
PL_PRIVATE int pl_reader_provider(struct pl_reader *r, GUID *ret_guid, uint32_t *ret_pid);

/*
 * 1 when the provider registered a ControlCallback (PerfStartProviderEx with
 * one, as callback="custom" providers do), 0 when not: perflibd sends
 * notifications only to those.
 */
PL_PRIVATE int pl_reader_has_callback(struct pl_reader *r);

/*
 * How full the segment is: heap bytes handed out so far (freed blocks stay
 * counted; they are reused from free lists) and the heap's size.
 */
PL_PRIVATE int pl_reader_heap_usage(struct pl_reader *r, uint64_t *ret_used, uint64_t *ret_size);

/*
 * Countersets, as validated copies owned by the reader and valid until
 * pl_reader_close.  Descriptors never change once published, so each is
 * validated once and cached.
 */
struct pl_counterset {
        GUID guid;
        uint32_t index;
        uint32_t instance_type;
        uint32_t num_counters;
        uint32_t data_size;
        uint32_t num_refs;
        struct pl_seg_counter *counters;        /* num_counters entries */
};
/* Number of countersets currently published (re-reads the header). */
PL_PRIVATE int pl_reader_counterset_count(struct pl_reader *r);
PL_PRIVATE int pl_reader_counterset(struct pl_reader *r, uint32_t index,
                                    const struct pl_counterset **ret);
PL_PRIVATE int pl_reader_find_counterset(struct pl_reader *r, const GUID *guid,
                                         const struct pl_counterset **ret);

/*
 * The provider's self-description (pl_set_provider_description), validated
 * and copied: owned by the reader, valid until pl_reader_close.  -ENODATA
 * while the provider has published none (it may still do so later),
 * -EBADMSG when the published blob is malformed.
 */
PL_PRIVATE int pl_reader_description(struct pl_reader *r, const struct ctrpp_provider_desc **ret);

/*
 * A consistent snapshot of the live instances of one counterset (or of all
 * countersets with cset_index PL_ALL_COUNTERSETS).  An instance created or
 * deleted while the snapshot is taken is either wholly in it or wholly out;
 * every value is read with one atomic load of its width.
 */
#define PL_ALL_COUNTERSETS      UINT32_C(0xFFFFFFFF)
/* Refresh reference counters first (in-process: directly; otherwise through
 * the provider's collect service, waiting at most the collect bound). */
#define PL_SNAPSHOT_COLLECT     0x1u
/* Leave the names out (name NULL, name_len 0): for a caller that keeps them
 * by (dir_slot, block_off, seq) and asks pl_reader_instance_name for the
 * ones it has not seen. */
#define PL_SNAPSHOT_NO_NAMES    0x2u

struct pl_instance {
        uint32_t cset_index;
        uint32_t instance_id;
        uint32_t dir_slot;
        uint32_t seq;
        uint64_t block_off;             /* identity: (block_off, seq) is unique over the
                                           provider's life; a block's seq moves by 2 on
                                           every reuse */
        wchar_t *name;                  /* NUL-terminated copy */
        uint32_t name_len;              /* characters, without the NUL */
        uint32_t num_values;            /* = the counterset's num_counters */
        uint64_t *values;               /* in descriptor order, zero-extended */
};
struct pl_snapshot {
        uint64_t generation;            /* the segment's generation when taken */
        uint32_t n_instances;
        bool refs_stale;                /* a collect was asked for and did not finish */
        struct pl_instance *instances;
        void *arena;                    /* every instance's values and name, in one block */
};
PL_PRIVATE int pl_reader_snapshot(struct pl_reader *r, uint32_t cset_index,
                                  unsigned flags, struct pl_snapshot **ret);
/* Accepts NULL. */
PL_PRIVATE void pl_snapshot_free(struct pl_snapshot *s);

/*
 * The values of one counterset's live instances, without names, in one
 * pass over the directory straight into records the caller keeps from one
 * call to the next (perflibd's QueryCounterData: names come from its cache,
 * keyed by (dir_slot, block_off, seq)).  The same guarantees as
 * pl_reader_snapshot: a record is a whole instance read under its seq
 * lock, and PL_SNAPSHOT_COLLECT refreshes reference counters first.
 */
struct pl_value_rec {
        uint32_t dir_slot;
        uint32_t seq;
        uint64_t block_off;
        uint32_t instance_id;
        uint32_t num_values;            /* = the counterset's num_counters */
        uint64_t values[];              /* in descriptor order, zero-extended */
};
struct pl_values {
        uint64_t generation;            /* the segment's generation when read */
        uint32_t n_instances;
        uint32_t num_values;            /* per record: the counterset's num_counters */
        bool refs_stale;                /* a collect was asked for and did not finish */
        size_t stride;                  /* bytes from one record to the next */
        uint8_t *recs;                  /* n_instances records; owned, reused */
        size_t cap;                     /* bytes allocated at recs */
};
/*
 * Fills v (zero it before the first call; its buffer is reused and grown as
 * needed).  Only PL_SNAPSHOT_COLLECT is accepted in flags.  On failure v
 * keeps its buffer and holds no records.
 */
PL_PRIVATE int pl_reader_values(struct pl_reader *r, uint32_t cset_index, unsigned flags,
                                struct pl_values *v);
/* Frees v's buffer (not v); accepts NULL. */
PL_PRIVATE void pl_reader_values_done(struct pl_values *v);

static inline const struct pl_value_rec *pl_values_at(const struct pl_values *v, uint32_t i)
{
        return (const struct pl_value_rec *) (v->recs + (size_t) i * v->stride);
}

/*
 * The name of the instance a record names: as pl_reader_instance_name.
 */
PL_PRIVATE int pl_reader_rec_name(struct pl_reader *r, uint32_t cset_index,
                                  const struct pl_value_rec *rec, wchar_t *buf,
                                  uint32_t *ret_len);

/*
 * The name of an instance a snapshot returned, into buf
 * (PL_SEG_MAX_NAME_BYTES), NUL-terminated, *ret_len characters without the
 * NUL.  -ESTALE when the block no longer holds that instance (deleted, or
 * reused: its seq moved), -EBADMSG when it is malformed.
 */
PL_PRIVATE int pl_reader_instance_name(struct pl_reader *r, const struct pl_instance *in,
                                       wchar_t *buf, uint32_t *ret_len);

/*
 * Asks the provider to run its ControlCallback with request_code and the
 * given buffer (at most PL_SVC_MAX_PAYLOAD bytes), waiting at most the
 * collect bound.  *ret_status is the callback's return value.
 */
PL_PRIVATE int pl_reader_notify(struct pl_reader *r, uint32_t request_code,
                                const void *buffer, uint32_t size, uint32_t *ret_status);

/*
 * Calls cb for every provider socket in dir, and in the users' directories
 * of dir/users (those only their owner can write, at most 4 a user and 1024
 * in all; in each only the sockets its owner made), whose provider is
 * alive, or that could not be probed for want of descriptors or memory
 * (opening it will tell), and removes the sockets of providers that are
 * gone (reclaiming them).  A
 * non-zero return from cb stops the scan and is returned.  *ret_reclaimed,
 * when not NULL, counts the sockets removed.
 */
PL_PRIVATE int pl_scan(const char *dir,
                       int (*cb)(const char *socket_path, void *userdata),
                       void *userdata, unsigned *ret_reclaimed);

/*
 * What pl_scan would read, fingerprinted: the modification times of dir,
 * its users/ and the users' directories it would scan.  sum changes when a
 * socket comes or goes in any of them; newest is the latest of the times
 * (a change within one tick of the file system's clock may not move it).
 */
struct pl_scan_stamp {
        uint64_t sum;
        struct timespec newest;
};
PL_PRIVATE int pl_scan_stamp(const char *dir, struct pl_scan_stamp *ret);

/* The collect bound in milliseconds: $PERFLIB_COLLECT_TIMEOUT_MS or 100. */
PL_PRIVATE int pl_collect_timeout_ms(void);

#endif /* PL_READER_H */
