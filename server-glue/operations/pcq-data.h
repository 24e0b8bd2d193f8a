/* SPDX-License-Identifier: MIT */
/*
 * pcq-data.h: QueryCounterData (opnum 6, pcq-data.c).  pcq-core.c calls it
 * with an allowed session, a zeroed *out and the session's reply buffer;
 * it returns a Win32 code.
 */
#ifndef PERFLIBD_PCQ_DATA_H
#define PERFLIBD_PCQ_DATA_H

#include <stdint.h>

#include "ns.h"
#include "pcq-query.h"
#include "pcq-reply.h"
#include "perflibv2.h"

uint32_t pcq_op_counter_data(struct ns *ns, struct pcq_query *q, uint32_t in_size,
                             struct pcq_reuse *reuse, struct pv2_out *out);

#endif /* PERFLIBD_PCQ_DATA_H */
