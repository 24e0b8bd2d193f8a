/* SPDX-License-Identifier: MIT */
/*
 * The RPC fuzz harness (fuzz-rpc.c): arbitrary bytes into a PerflibV2
 * server connection with the fake handlers, cut into chunks.
 *
 * Input layout: byte 0 steers the harness (bit 0: start with a valid bind,
 * so the fuzzer spends its time past it; bits 1-7: the chunk size in units
 * of 7 bytes, 0 meaning all at once), the rest is the byte stream.
 */
#ifndef PV2_FUZZ_RPC_H
#define PV2_FUZZ_RPC_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The built-in seeds: FZ_RPC_N_SEEDS sessions, each a malloc'd input. */
#define FZ_RPC_N_SEEDS 9u
int fz_rpc_seed(unsigned i, uint8_t **ret, size_t *ret_size);

/*
 * Runs fn over the seeds, then over `iterations` deterministic mutations of
 * them (byte flips, truncations, length and count fields set to extreme
 * values).  Returns the number of inputs run.
 */
unsigned fz_rpc_mutations(unsigned iterations, int (*fn)(const uint8_t *data, size_t size));

#endif
