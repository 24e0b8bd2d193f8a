/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "pv2-fake.h"

struct fake_stats fake;

struct fake_query {
        unsigned id;
};

void fake_reset(void)
{
        fake = (struct fake_stats){ .counter_data_bytes = 32 };
}

uint8_t fake_byte(unsigned opnum, size_t i)
{
        return (uint8_t)(opnum * 16 + i * 7 + (i >> 8));
}

static void note_machine(const uint16_t *m)
{
        size_t i = 0;

        fake.machine_null = m == NULL;
        for (; m && m[i] && i < 63; i++)
                fake.last_machine[i] = m[i];
        fake.last_machine[i] = 0;
}

/* The sizing rule: fill out with need bytes of opnum's pattern if they fit. */
static uint32_t fill(unsigned opnum, uint32_t need, uint32_t in_size, struct pv2_out *out)
{
        out->rtn_size = need;
        if (in_size < need) {
                out->out_size = 0;
                return ERROR_NOT_ENOUGH_MEMORY;
        }
        out->data = malloc(need ? need : 1);
        if (!out->data)
                return ERROR_OUTOFMEMORY;
        for (uint32_t i = 0; i < need; i++)
                out->data[i] = fake_byte(opnum, i);
        out->out_size = need;
        return ERROR_SUCCESS;
}

static uint32_t f_enum(void *conn, const uint16_t *machine, uint32_t in_size,
                       struct pv2_out *out)
{
        fake.calls[0]++;
        note_machine(machine);
        uint32_t st = fill(0, FAKE_N_GUIDS * 16, in_size * 16, out);
        out->rtn_size = FAKE_N_GUIDS;
        out->out_size = st == ERROR_SUCCESS ? FAKE_N_GUIDS : 0;
        return st;
}

static uint32_t f_reg(void *conn, const uint16_t *machine, const GUID *cs, uint32_t code,
                      uint32_t lcid, uint32_t in_size, struct pv2_out *out)
{
        fake.calls[1]++;
        note_machine(machine);
        fake.last_counterset = *cs;
        fake.last_code = code;
        fake.last_lcid = lcid;
        return fill(1, FAKE_REG_INFO_BYTES, in_size, out);
}

static uint32_t f_inst(void *conn, const uint16_t *machine, const GUID *cs,
                       uint32_t in_size, struct pv2_out *out)
{
        fake.calls[2]++;
        note_machine(machine);
        fake.last_counterset = *cs;
        return fill(2, FAKE_INSTANCES_BYTES, in_size, out);
}

static uint32_t f_open(void *conn, const uint16_t *machine, void **ret)
{
        struct fake_query *q = malloc(sizeof(*q));

        fake.calls[3]++;
        note_machine(machine);
        if (!q)
                return ERROR_OUTOFMEMORY;
        q->id = ++fake.opened;
        *ret = q;
        return ERROR_SUCCESS;
}

static uint32_t f_close(void *conn, void *query)
{
        fake.calls[4]++;
        fake.closed++;
        free(query);
        return ERROR_SUCCESS;
}

static uint32_t f_info(void *conn, void *query, uint32_t in_size, struct pv2_out *out)
{
        fake.calls[5]++;
        return fill(5, FAKE_COUNTER_INFO_BYTES, in_size, out);
}

static uint32_t f_data(void *conn, void *query, uint32_t in_size, struct pv2_out *out)
{
        fake.calls[6]++;
        return fill(6, fake.counter_data_bytes, in_size, out);
}

static uint32_t f_validate(void *conn, void *query, uint8_t *data, uint32_t in_size,
                           uint32_t add)
{
        fake.calls[7]++;
        fake.last_add = add;
        for (uint32_t i = 0; i < in_size; i++)
                data[i] ^= 0xff;
        return ERROR_SUCCESS;
}

const struct pv2_handlers fake_handlers = {
        .enumerate_counterset = f_enum,
        .query_registration_info = f_reg,
        .enumerate_instances = f_inst,
        .open_query = f_open,
        .close_query = f_close,
        .query_counter_info = f_info,
        .query_counter_data = f_data,
        .validate_counters = f_validate,
};
