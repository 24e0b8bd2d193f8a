/* SPDX-License-Identifier: MIT */
/* desc-parse.c: the reader's side of the self-description blob.  Hidden. */
#ifndef PL_DESC_PARSE_H
#define PL_DESC_PARSE_H

#include <stdint.h>

/*
 * Validates a self-description blob (segment.h) of size bytes, a private
 * copy the caller owns, and builds the pointer tree it describes, with
 * copies of its strings: one allocation, owned by the caller (free).
 * -EBADMSG when anything in it is wrong.
 */
struct ctrpp_provider_desc;
int pl_desc_parse(const uint8_t *blob, uint64_t size, struct ctrpp_provider_desc **ret);

#endif /* PL_DESC_PARSE_H */
