/* SPDX-License-Identifier: MIT */
/*
 * ntlm.h: NTLM (MS-NLMP) for the DCE/RPC security layer: NTLMv2 with
 * extended session security, 128-bit keys, key exchange, signing and
 * sealing, both ends.  Ours, not gss-ntlmssp's: see ntlm.c for why.
 * Internal to librpc, libpcq and perflibd.
 *
 * Functions return 0 or -errno and write ret_ parameters only on success.
 */
#ifndef PL_NTLM_H
#define PL_NTLM_H

#include <stddef.h>
#include <stdint.h>

/* An NT hash (NTOWFv1): MD4 of the password in UTF-16LE. */
#define NTLM_HASH_SIZE 16

/*
 * The NT hash of a UTF-8 password (at most NTLM_PASSWORD_MAX bytes).
 * -EINVAL for a password that is not UTF-8 or too long.
 */
#define NTLM_PASSWORD_MAX 256
int ntlm_nt_hash(const char *password, uint8_t ret[NTLM_HASH_SIZE]);

#endif /* PL_NTLM_H */
