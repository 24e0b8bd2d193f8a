/* SPDX-License-Identifier: MIT */
/*
 * The shared-memory segment of one provider, version 1, and the messages of
 * its collect service.  docs/segment-format.md is the prose description;
 * this header is the normative one.  Everything here is fixed-width,
 * little-endian (the only byte order we build for), addressed by byte
 * offsets from the start of the segment, and padded explicitly.
 *
 * Writers: only the provider process that created the segment.
 * Readers: any process holding a read-only descriptor handed out by the
 * provider's collect service; a reader treats every field as untrusted.
 */
#ifndef PL_SEGMENT_H
#define PL_SEGMENT_H

#include <stdint.h>
#include <stddef.h>

#define PL_SEG_MAGIC            UINT64_C(0x31474553424c5250)    /* "PRLBSEG1" */
#define PL_SEG_VERSION          1u

/* Limits a reader enforces whatever a header claims. */
#define PL_SEG_MAX_SIZE         (UINT64_C(1) << 36)     /* 64 GiB */
#define PL_SEG_MAX_COUNTERSETS  4096u
#define PL_SEG_MAX_COUNTERS     65536u
#define PL_SEG_MAX_INSTANCES    (1u << 22)
#define PL_SEG_MAX_NAME_BYTES   (1024u * 4u)    /* PERF_MAX_INSTANCE_NAME wchar_t incl. NUL */
#define PL_SEG_MAX_DATA_SIZE    (1u << 20)

#define PL_SEG_ALIGN            8u

/* Header flags. */
#define PL_SEG_F_CALLBACK       UINT32_C(0x1)   /* provider has a ControlCallback */
#define PL_SEG_F_STOPPING       UINT32_C(0x2)   /* PerfStopProvider in progress */

/*
 * At offset 0.  Fields marked (atomic) are written with release stores and
 * must be read with acquire loads; the rest never change after the segment
 * is published.
 */
struct pl_seg_header {
        uint64_t magic;                 /* PL_SEG_MAGIC */
        uint32_t version;               /* PL_SEG_VERSION */
        uint32_t header_size;           /* sizeof(struct pl_seg_header) */
        uint64_t segment_size;          /* bytes of the segment, fixed */
        uint8_t provider_guid[16];      /* GUID in Windows memory layout */
        uint32_t pid;                   /* provider's pid, informational only */
        uint32_t flags;                 /* PL_SEG_F_* (atomic) */
        uint64_t created_realtime_ns;   /* CLOCK_REALTIME at PerfStartProvider */

        uint64_t cset_table_off;        /* uint64_t[cset_capacity]: descriptor offsets */
        uint32_t cset_capacity;
        uint32_t cset_count;            /* (atomic) published entries of the table */

        uint64_t dir_off;               /* uint64_t[dir_capacity]: instance directory */
        uint32_t dir_capacity;
        uint32_t dir_high;              /* (atomic) slots [0, dir_high) may be in use */

        uint64_t heap_off;              /* first byte of the heap */
        uint64_t heap_top;              /* (atomic) heap bytes handed out so far */

        uint64_t generation;            /* (atomic) +1 on every counterset add and
                                           instance create/delete */
        uint64_t collect_seq;           /* (atomic) last collect request served */

        uint64_t desc_off;              /* self-description blob (below), in the heap */
        uint64_t desc_size;             /* (atomic) 0 when absent; published last */

        uint32_t instance_count;        /* (atomic) live instances */
        uint32_t reserved0;
        uint8_t reserved[112];          /* zero */
};
_Static_assert(sizeof(struct pl_seg_header) == 256, "segment header layout");
_Static_assert(offsetof(struct pl_seg_header, cset_table_off) == 56, "segment header layout");
_Static_assert(offsetof(struct pl_seg_header, generation) == 104, "segment header layout");

/*
 * A counter as the segment describes it.  The first 32 bytes are the
 * PERF_COUNTER_INFO of the template with Offset resolved (relative to the
 * start of the counter data, i.e. the end of PERF_COUNTERSET_INSTANCE).
 */
#define PL_SEG_NO_REF           UINT32_C(0xFFFFFFFF)
struct pl_seg_counter {
        uint32_t id;
        uint32_t type;
        uint64_t attrib;
        uint32_t size;                  /* bytes of the value in the data block */
        uint32_t detail_level;
        int32_t scale;
        uint32_t offset;                /* from the start of the counter data */
        uint32_t ref_index;             /* index among by-reference counters, or PL_SEG_NO_REF */
        uint32_t reserved;
};
_Static_assert(sizeof(struct pl_seg_counter) == 40, "counter descriptor layout");

/* A counterset descriptor, in the heap; never changes once published. */
struct pl_seg_counterset {
        uint8_t guid[16];
        uint32_t instance_type;
        uint32_t num_counters;
        uint32_t data_size;             /* counter data bytes per instance, multiple of 8 */
        uint32_t num_refs;              /* by-reference counters */
        uint32_t index;                 /* its position in the counterset table */
        uint32_t reserved;
        /* struct pl_seg_counter counters[num_counters]; */
};
_Static_assert(sizeof(struct pl_seg_counterset) == 40, "counterset descriptor layout");

/*
 * An instance block, in the heap:
 *   struct pl_seg_instance         (8 bytes, private to perflib)
 *   PERF_COUNTERSET_INSTANCE       (32 bytes; the pointer the API returns)
 *   counter data                   (data_size bytes)
 *   instance name                  (wchar_t UTF-32, NUL-terminated, at
 *                                   InstanceNameOffset = 32 + data_size,
 *                                   InstanceNameSize bytes)
 *   padding to 8
 * Its size is therefore 8 + dwSize, with dwSize = 32 + data_size +
 * round8(InstanceNameSize); a reader derives and checks it.
 *
 * seq is a sequence lock on the block's identity: odd while the block is
 * free or being initialised, even while it is a live instance.  A reader
 * copies what it needs between an acquire load of seq and a second load
 * after an acquire fence, and keeps the copy only if both loads returned the
 * same even value.  Counter values change without touching seq; each is read
 * with one aligned atomic load of its size, so it is never torn.
 */
struct pl_seg_instance {
        uint32_t seq;                   /* (atomic) */
        uint32_t dir_slot;              /* its slot in the instance directory */
};
_Static_assert(sizeof(struct pl_seg_instance) == 8, "instance header layout");

/*
 * Instance directory entries are uint64_t, 0 = empty, otherwise
 *   bits 0-47   offset of the struct pl_seg_instance
 *   bits 48-63  index of its counterset in the counterset table
 * written with one release store after the block is complete, so a reader
 * gets block and counterset in one atomic load.
 */
#define PL_DIR_OFFSET_MASK      ((UINT64_C(1) << 48) - 1)
#define PL_DIR_CSET_SHIFT       48
#define PL_DIR_ENTRY(off, cset) ((uint64_t) (off) | ((uint64_t) (cset) << PL_DIR_CSET_SHIFT))

/*
 * The provider's self-description (pl_set_provider_description): one blob
 * in the heap at desc_off, desc_size bytes, written completely before
 * desc_size is release-stored and never changed afterwards; published at
 * most once.  Readers of segment format 1 that predate it ignore both
 * fields, so the segment version stays 1.
 *
 *   struct pl_desc_header            at blob offset 0
 *   struct pl_desc_counterset        [n_countersets] at csets_off
 *   struct pl_desc_counter           [n_counters] at counters_off, the
 *                                    counters of counterset 0 first, then 1, ...
 *   string table                     strings_size bytes at strings_off
 *
 * Offsets are from the start of the blob and 8-aligned; the sections come
 * in this order and do not overlap; blob_size = desc_size is a multiple
 * of 8.  The string table is a run of NUL-terminated UTF-8 strings and its
 * last byte is a NUL.  A string field holds the offset of the first byte of
 * one of those strings (so it is strings_off or follows a NUL), or
 * PL_DESC_NO_STRING when the string is absent.
 */
#define PL_DESC_MAGIC           UINT32_C(0x43534450)    /* "PDSC" */
#define PL_DESC_VERSION         1u
#define PL_DESC_NO_STRING       0u      /* offset 0 is the header, never a string */

/* Limits the writer and readers enforce. */
#define PL_SEG_MAX_DESC_SIZE    (16u << 20)
#define PL_DESC_MAX_COUNTERSETS PL_SEG_MAX_COUNTERSETS
#define PL_DESC_MAX_COUNTERS    PL_SEG_MAX_COUNTERS     /* per counterset */

struct pl_desc_header {
        uint32_t magic;                 /* PL_DESC_MAGIC */
        uint32_t version;               /* PL_DESC_VERSION */
        uint32_t header_size;           /* >= sizeof(struct pl_desc_header), multiple of 8 */
        uint32_t blob_size;             /* = desc_size */
        uint8_t guid[16];               /* the provider's; equals provider_guid */
        uint32_t callback_custom;
        uint32_t kernel_mode;
        uint32_t resource_base;         /* CTRPP_NO_ID when absent */
        uint32_t n_countersets;
        uint32_t n_counters;            /* over all countersets */
        uint32_t csets_off;
        uint32_t counters_off;
        uint32_t strings_off;
        uint32_t strings_size;
        uint32_t name;                  /* strings; name is providerName */
        uint32_t symbol;
        uint32_t application_identity;
        uint32_t schema_version;
        uint32_t manifest;
        uint32_t reserved[2];           /* zero */
};
_Static_assert(sizeof(struct pl_desc_header) == 96, "description header layout");

struct pl_desc_counterset {
        uint8_t guid[16];
        uint32_t instance_type;
        uint32_t name_id;
        uint32_t description_id;
        uint32_t n_counters;
        uint32_t first_counter;         /* index of its first counter; the
                                           counts of the countersets before it */
        uint32_t symbol;                /* strings */
        uint32_t uri;
        uint32_t name;
        uint32_t description;
        uint32_t instances;
        uint32_t reserved[2];           /* zero */
};
_Static_assert(sizeof(struct pl_desc_counterset) == 64, "description counterset layout");

struct pl_desc_counter {
        uint32_t id;
        uint32_t type;
        uint64_t attrib;
        uint32_t size;
        uint32_t detail_level;
        int32_t default_scale;
        int32_t aggregate;
        uint32_t base_id;
        uint32_t perf_time_id;
        uint32_t perf_freq_id;
        uint32_t multi_counter_id;
        uint32_t name_id;
        uint32_t description_id;
        uint32_t symbol;                /* strings */
        uint32_t uri;
        uint32_t name;
        uint32_t description;
};
_Static_assert(sizeof(struct pl_desc_counter) == 72, "description counter layout");

/* ---- the collect service: a SOCK_SEQPACKET Unix socket per provider ---- */

#define PL_SVC_MAGIC            UINT32_C(0x50535643)    /* "CVSP" */
#define PL_SVC_VERSION          1u
#define PL_SVC_SOCKET_PREFIX    "provider-"
#define PL_SVC_SOCKET_SUFFIX    ".sock"

enum pl_svc_op {
        PL_SVC_HELLO = 1,               /* server -> reader, with SCM_RIGHTS fd */
        PL_SVC_COLLECT = 2,             /* reader -> provider: copy referenced values */
        PL_SVC_NOTIFY = 3,              /* reader -> provider: run the ControlCallback */
        PL_SVC_REPLY = 4,               /* provider -> reader */
};

/*
 * Every message is this header followed by payload_size bytes of payload
 * (NOTIFY: the callback's buffer), in one SOCK_SEQPACKET datagram.
 */
#define PL_SVC_MAX_PAYLOAD      8192u
struct pl_svc_msg {
        uint32_t magic;                 /* PL_SVC_MAGIC */
        uint16_t version;               /* PL_SVC_VERSION */
        uint16_t op;                    /* enum pl_svc_op */
        uint64_t seq;                   /* request id; echoed in the reply */
        uint32_t status;                /* reply: Win32 error code */
        uint32_t request_code;          /* NOTIFY: PERF_ADD_COUNTER, ... */
        uint64_t segment_size;          /* HELLO */
        uint32_t pid;                   /* HELLO */
        uint32_t payload_size;          /* bytes that follow, <= PL_SVC_MAX_PAYLOAD */
};
_Static_assert(sizeof(struct pl_svc_msg) == 40, "service message layout");

/* How long a reader waits for a provider's collect service by default. */
#define PL_SVC_DEFAULT_TIMEOUT_MS 100

#endif /* PL_SEGMENT_H */
