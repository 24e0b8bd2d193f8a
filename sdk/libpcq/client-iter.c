/* SPDX-License-Identifier: MIT */
/*
 * The typed iterators of pcq.h over the buffers the calls return
 * (MS-PCQ 2.2.4).  A buffer is untrusted: every offset and size is checked
 * against the bytes that are really there before anything is read, a
 * structure that claims fewer bytes than its own header (which could make
 * the walk stand still or go back) or more than remain ends the walk with
 * ERROR_INVALID_DATA, and strings must end with a NUL inside their
 * structure.
 */
#include <stdlib.h>
#include <string.h>

#include "client-wire.h"
#include "perflib.h"

_Static_assert(PCQ_BLOCK_ERROR == PERF_ERROR_RETURN && PCQ_BLOCK_SINGLE_COUNTER == PERF_SINGLE_COUNTER &&
               PCQ_BLOCK_MULTIPLE_COUNTERS == PERF_MULTIPLE_COUNTERS &&
               PCQ_BLOCK_MULTIPLE_INSTANCES == PERF_MULTIPLE_INSTANCES &&
               PCQ_BLOCK_COUNTERSET == PERF_COUNTERSET, "pcq.h block types are perflib.h's");

/* ---- the iterator's private layout ---- */

enum phase { PH_BLOCK, PH_INSTANCE, PH_VALUES };

struct it {
        const uint8_t *data;
        uint32_t size;                  /* bytes the walk may read */
        uint32_t pos;
        uint32_t error;
        uint32_t count, index;          /* items announced, items given */
        uint32_t base;                  /* string iterator: where strings start */
        char *str;                      /* the current item's string copy, owned */
        /* data iterator */
        uint32_t phase, block_end, block_type, block_status;
        uint32_t ids;                   /* offset of the counter id array, 0 if none */
        uint32_t n_ctrs, ctr, inst_left, inst_end, inst_id;
        char *inst;                     /* the current instance's name, owned */
};
_Static_assert(sizeof(struct it) <= sizeof(pcq_iter), "pcq_iter too small");

static struct it *priv(pcq_iter *it)
{
        return (struct it *) (void *) it;
}

static void start(pcq_iter *i, const struct pcq_buf *b)
{
        struct it *it = priv(i);

        memset(i, 0, sizeof(*i));
        if (!b || !b->data)
                return;
        it->data = b->data;
        it->size = b->size;
}

/* Stops the walk for good. */
static bool bad(struct it *it)
{
        it->error = ERROR_INVALID_DATA;
        it->count = it->index;
        it->size = 0;
        return false;
}

/* Whether len bytes at off are inside the first limit bytes. */
static bool fits(uint32_t off, uint32_t len, uint32_t limit)
{
        return off <= limit && len <= limit - off;
}

/* Decodes the NUL-terminated name of at most bytes at off into it->str. */
static bool take_string(struct it *it, char **dst, uint32_t off, uint32_t bytes)
{
        bool terminated;

        free(*dst);
        *dst = cl_utf16_to_utf8(it->data + off, bytes / 2, &terminated);
        if (!*dst || !terminated)
                return bad(it);
        return true;
}

PCQ_API void pcq_iter_done(pcq_iter *i)
{
        struct it *it;

        if (!i)
                return;
        it = priv(i);
        free(it->str);
        free(it->inst);
        it->str = it->inst = NULL;
        it->size = 0;
        it->count = it->index;
}

PCQ_API uint32_t pcq_iter_error(const pcq_iter *i)
{
        return i ? ((const struct it *) (const void *) i)->error : PDH_INVALID_ARGUMENT;
}

/* ---- registration info ---- */

PCQ_API uint32_t pcq_reg_iter_begin(pcq_iter *i, const struct pcq_buf *b,
                                    struct pcq_counterset_reg *ret_set)
{
        struct it *it = priv(i);

        if (!i)
                return PDH_INVALID_ARGUMENT;
        start(i, b);
        if (it->size < CL_REG_SET_SIZE) {
                bad(it);
                return ERROR_INVALID_DATA;
        }
        if (ret_set) {
                cl_guid_read(it->data, &ret_set->guid);
                ret_set->detail_level = cl_le32(it->data + 20);
                ret_set->num_counters = cl_le32(it->data + 24);
                ret_set->instance_type = cl_le32(it->data + 28);
        }
        it->count = cl_le32(it->data + 24);
        it->pos = CL_REG_SET_SIZE;
        return ERROR_SUCCESS;
}

PCQ_API bool pcq_reg_iter_next(pcq_iter *i, struct pcq_counter_reg *ret)
{
        struct it *it = priv(i);
        const uint8_t *p;

        if (!i || !ret || it->index >= it->count)
                return false;
        if (!fits(it->pos, CL_REG_COUNTER_SIZE, it->size))
                return bad(it);
        p = it->data + it->pos;
        *ret = (struct pcq_counter_reg){
                .id = cl_le32(p), .type = cl_le32(p + 4), .attrib = cl_le64(p + 8),
                .detail_level = cl_le32(p + 16), .default_scale = (int32_t) cl_le32(p + 20),
                .base_id = cl_le32(p + 24), .perf_time_id = cl_le32(p + 28),
                .perf_freq_id = cl_le32(p + 32), .multi_id = cl_le32(p + 36),
                .aggregate_func = cl_le32(p + 40),
        };
        it->pos += CL_REG_COUNTER_SIZE;
        it->index++;
        return true;
}

/* ---- string blocks ---- */

PCQ_API uint32_t pcq_string_iter_begin(pcq_iter *i, const struct pcq_buf *b)
{
        struct it *it = priv(i);
        uint32_t total, n;

        if (!i)
                return PDH_INVALID_ARGUMENT;
        start(i, b);
        if (it->size < 8)
                goto fail;
        total = cl_le32(it->data);
        n = cl_le32(it->data + 4);
        if (total > it->size || n > (total - 8) / 8)
                goto fail;
        it->size = total;
        it->count = n;
        it->pos = 8;
        it->base = 8 + 8 * n;
        return ERROR_SUCCESS;
fail:
        bad(it);
        return ERROR_INVALID_DATA;
}

PCQ_API bool pcq_string_iter_next(pcq_iter *i, struct pcq_string_item *ret)
{
        struct it *it = priv(i);
        uint32_t off;

        if (!i || !ret || it->index >= it->count)
                return false;
        off = cl_le32(it->data + it->pos + 4);
        if (off > it->size - it->base)
                return bad(it);
        off += it->base;
        if (!take_string(it, &it->str, off, it->size - off))
                return false;
        ret->counter_id = cl_le32(it->data + it->pos);
        ret->text = it->str;
        it->pos += 8;
        it->index++;
        return true;
}

/* ---- instance lists ---- */

PCQ_API void pcq_instance_iter_begin(pcq_iter *i, const struct pcq_buf *b)
{
        if (!i)
                return;
        start(i, b);
        priv(i)->count = UINT32_MAX;
}

/* A _PERF_INSTANCE_HEADER and its name at it->pos, inside limit. */
static bool instance_header(struct it *it, uint32_t limit, uint32_t *ret_id)
{
        uint32_t size;

        if (!fits(it->pos, 8, limit))
                return bad(it);
        size = cl_le32(it->data + it->pos);
        if (size < 8 || !fits(it->pos, size, limit))
                return bad(it);
        *ret_id = cl_le32(it->data + it->pos + 4);
        if (!take_string(it, &it->inst, it->pos + 8, size - 8))
                return false;
        it->pos += size;
        return true;
}

PCQ_API bool pcq_instance_iter_next(pcq_iter *i, struct pcq_instance_item *ret)
{
        struct it *it = priv(i);
        uint32_t id;

        if (!i || !ret || it->index >= it->count || it->pos >= it->size)
                return false;
        if (!instance_header(it, it->size, &id))
                return false;
        ret->id = id;
        ret->name = it->inst;
        it->index++;
        return true;
}

/* ---- counter identifiers ---- */

PCQ_API void pcq_ident_iter_begin(pcq_iter *i, const struct pcq_buf *b)
{
        if (!i)
                return;
        start(i, b);
        priv(i)->count = UINT32_MAX;
}

PCQ_API bool pcq_ident_iter_next(pcq_iter *i, struct pcq_ident_item *ret)
{
        struct it *it = priv(i);
        const uint8_t *p;
        uint32_t size;

        if (!i || !ret || it->index >= it->count || it->pos >= it->size)
                return false;
        if (!fits(it->pos, CL_IDENT_SIZE, it->size))
                return bad(it);
        p = it->data + it->pos;
        size = cl_le32(p + 20);
        if (size < CL_IDENT_SIZE || !fits(it->pos, size, it->size))
                return bad(it);
        free(it->str);
        it->str = NULL;
        if (size > CL_IDENT_SIZE &&
            !take_string(it, &it->str, it->pos + CL_IDENT_SIZE, size - CL_IDENT_SIZE))
                return false;
        cl_guid_read(p, &ret->counterset);
        ret->status = cl_le32(p + 16);
        ret->counter_id = cl_le32(p + 24);
        ret->instance_id = cl_le32(p + 28);
        ret->index = cl_le32(p + 32);
        ret->instance = it->str && *it->str ? it->str : NULL;
        it->pos += size;
        it->index++;
        return true;
}

/* ---- counter data ---- */

PCQ_API uint32_t pcq_data_iter_begin(pcq_iter *i, const struct pcq_buf *b,
                                     struct pcq_data_header *ret_header)
{
        struct it *it = priv(i);
        uint32_t total;

        if (!i)
                return PDH_INVALID_ARGUMENT;
        start(i, b);
        if (it->size < CL_DATA_HEADER_SIZE)
                goto fail;
        total = cl_le32(it->data);
        if (total < CL_DATA_HEADER_SIZE || total > it->size)
                goto fail;
        it->size = total;
        it->count = cl_le32(it->data + 4);
        it->pos = CL_DATA_HEADER_SIZE;
        it->phase = PH_BLOCK;
        if (ret_header) {
                ret_header->num_counters = it->count;
                ret_header->perf_time = cl_le64(it->data + 8);
                ret_header->perf_time_100ns = cl_le64(it->data + 16);
                ret_header->perf_freq = cl_le64(it->data + 24);
                for (int k = 0; k < 8; k++)
                        ret_header->system_time[k] = cl_le16(it->data + 32 + 2 * k);
        }
        return ERROR_SUCCESS;
fail:
        bad(it);
        return ERROR_INVALID_DATA;
}

/* _PERF_MULTI_COUNTERS and its id array at it->pos. */
static bool multi_counters(struct it *it)
{
        uint32_t size, n;

        if (!fits(it->pos, 8, it->block_end))
                return bad(it);
        size = cl_le32(it->data + it->pos);
        n = cl_le32(it->data + it->pos + 4);
        if (n > (it->block_end - it->pos - 8) / 4 || size < 8 + 4 * n ||
            !fits(it->pos, size, it->block_end))
                return bad(it);
        it->ids = it->pos + 8;
        it->n_ctrs = n;
        it->pos += size;
        return true;
}

/* _PERF_MULTI_INSTANCES at it->pos. */
static bool multi_instances(struct it *it)
{
        uint32_t size;

        if (!fits(it->pos, 8, it->block_end))
                return bad(it);
        size = cl_le32(it->data + it->pos);
        if (size < 8 || !fits(it->pos, size, it->block_end))
                return bad(it);
        it->inst_left = cl_le32(it->data + it->pos + 4);
        it->inst_end = it->pos + size;
        it->pos += 8;
        it->phase = PH_INSTANCE;
        return true;
}

/* Starts the next _PERF_COUNTER_HEADER block. */
static bool block(struct it *it)
{
        const uint8_t *p;
        uint32_t size;

        if (!fits(it->pos, 16, it->size))
                return bad(it);
        p = it->data + it->pos;
        size = cl_le32(p + 8);
        if (size < 16 || !fits(it->pos, size, it->size))
                return bad(it);
        it->block_status = cl_le32(p);
        it->block_type = cl_le32(p + 4);
        it->block_end = it->pos + size;
        it->pos += 16;
        it->ids = 0;
        it->n_ctrs = 1;
        it->ctr = 0;
        it->inst_end = it->block_end;
        free(it->inst);
        it->inst = NULL;
        it->inst_id = 0;
        switch (it->block_type) {
        case PERF_SINGLE_COUNTER:
                it->phase = PH_VALUES;
                return true;
        case PERF_MULTIPLE_COUNTERS:
                it->phase = PH_VALUES;
                return multi_counters(it);
        case PERF_MULTIPLE_INSTANCES:
                return multi_instances(it);
        case PERF_COUNTERSET:
                return multi_counters(it) && multi_instances(it);
        default:
                /* PERF_ERROR_RETURN, or a type this client does not know. */
                return true;
        }
}

/* Ends the current block and moves to the next one. */
static void end_block(struct it *it)
{
        it->pos = it->block_end;
        it->phase = PH_BLOCK;
        it->index++;
}

static void fill(const struct it *it, struct pcq_data_item *ret, const uint8_t *value,
                 uint32_t size)
{
        *ret = (struct pcq_data_item){
                .block = it->index,
                .block_type = it->block_type,
                .status = it->block_status,
                .counter_id = it->ids ? cl_le32(it->data + it->ids + 4 * it->ctr) : CL_NO_ID,
                .instance_id = it->inst_id,
                .instance = it->inst,
                .value = value,
                .size = size,
        };
}

/* One _PERF_COUNTER_DATA at it->pos. */
static bool value(struct it *it, struct pcq_data_item *ret)
{
        uint32_t data_size, size;

        if (!fits(it->pos, 8, it->inst_end))
                return bad(it);
        data_size = cl_le32(it->data + it->pos);
        size = cl_le32(it->data + it->pos + 4);
        if (size < 8 || data_size > size - 8 || !fits(it->pos, size, it->inst_end))
                return bad(it);
        fill(it, ret, it->data + it->pos + 8, data_size);
        it->pos += size;
        it->ctr++;
        return true;
}

/* Where a walk goes once an instance's or a block's values are all given. */
static bool values_done(struct it *it)
{
        if (it->block_type == PERF_MULTIPLE_INSTANCES || it->block_type == PERF_COUNTERSET) {
                it->phase = PH_INSTANCE;
                return true;
        }
        end_block(it);
        return true;
}

static bool instance(struct it *it)
{
        if (it->inst_left == 0) {
                end_block(it);
                return true;
        }
        if (!instance_header(it, it->inst_end, &it->inst_id))
                return false;
        it->inst_left--;
        it->ctr = 0;
        it->phase = PH_VALUES;
        return true;
}

PCQ_API bool pcq_data_iter_next(pcq_iter *i, struct pcq_data_item *ret)
{
        struct it *it = priv(i);

        if (!i || !ret)
                return false;
        while (it->index < it->count) {
                switch (it->phase) {
                case PH_BLOCK:
                        if (!block(it))
                                return false;
                        if (it->block_type == PERF_SINGLE_COUNTER ||
                            it->block_type == PERF_MULTIPLE_COUNTERS ||
                            it->block_type == PERF_MULTIPLE_INSTANCES ||
                            it->block_type == PERF_COUNTERSET)
                                break;
                        /* An error block: one item that says so, no value. */
                        fill(it, ret, NULL, 0);
                        end_block(it);
                        return true;
                case PH_INSTANCE:
                        if (!instance(it))
                                return false;
                        break;
                case PH_VALUES:
                        if (it->ctr >= it->n_ctrs) {
                                values_done(it);
                                break;
                        }
                        return value(it, ret);
                }
        }
        return false;
}
