/* SPDX-License-Identifier: MIT */
/*
 * Fake PerflibV2 handlers for the wire tests and the RPC fuzz harness: each
 * method returns a small, deterministic buffer that follows MS-PCQ's sizing
 * rule (ERROR_NOT_ENOUGH_MEMORY with pdwRtnSize when in_size is too small),
 * and counts what it was asked.
 */
#ifndef PV2_FAKE_H
#define PV2_FAKE_H

#include <stddef.h>
#include <stdint.h>

#include "perflibv2.h"

/* Sizes the fake methods need (opnum 0 in GUIDs, the others in bytes). */
#define FAKE_N_GUIDS            2u
#define FAKE_REG_INFO_BYTES     40u
#define FAKE_INSTANCES_BYTES    24u
#define FAKE_COUNTER_INFO_BYTES 16u

struct fake_stats {
        unsigned calls[8];
        unsigned opened;
        unsigned closed;
        uint32_t counter_data_bytes;    /* what query_counter_data returns; default 32 */
        uint32_t last_add;
        uint32_t last_code;
        uint32_t last_lcid;
        GUID last_counterset;
        uint16_t last_machine[64];      /* truncated copy, NUL-terminated */
        int machine_null;
};

extern struct fake_stats fake;
extern const struct pv2_handlers fake_handlers;

void fake_reset(void);
/* The byte the fake methods put at offset i of opnum's buffer. */
uint8_t fake_byte(unsigned opnum, size_t i);

#endif
