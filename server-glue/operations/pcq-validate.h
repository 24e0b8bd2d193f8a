/* SPDX-License-Identifier: MIT */
/*
 * pcq-validate.h: a query's list of counter specifications
 * (pcq-validate.c): ValidateCounters (opnum 7) changes it, QueryCounterInfo
 * (opnum 5) returns it.  pcq-core.c calls them with an allowed session (and
 * a zeroed *out); each returns a Win32 code.
 */
#ifndef PERFLIBD_PCQ_VALIDATE_H
#define PERFLIBD_PCQ_VALIDATE_H

#include <stdbool.h>
#include <stdint.h>

#include "ns.h"
#include "pcq-query.h"
#include "perflibv2.h"

uint32_t pcq_op_counter_info(const struct pcq_query *q, uint32_t in_size, struct pv2_out *out);
uint32_t pcq_op_validate(struct ns *ns, struct pcq_query *q, uint8_t *data, uint32_t in_size,
                         bool add);

#endif /* PERFLIBD_PCQ_VALIDATE_H */
