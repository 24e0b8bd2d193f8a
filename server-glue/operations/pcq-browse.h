/* SPDX-License-Identifier: MIT */
/*
 * pcq-browse.h: the browsing operations (pcq-browse.c), which keep no
 * state: EnumerateCounterSet (opnum 0), QueryCounterSetRegistrationInfo
 * (opnum 1) and EnumerateCounterSetInstances (opnum 2).  pcq-core.c calls
 * them with an allowed session and a zeroed *out; each returns a Win32 code.
 */
#ifndef PERFLIBD_PCQ_BROWSE_H
#define PERFLIBD_PCQ_BROWSE_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "ns.h"
#include "pcq-reply.h"
#include "perflibv2.h"

uint32_t pcq_op_enumerate_counterset(struct ns *ns, uint32_t in_size, struct pv2_out *out);
uint32_t pcq_op_registration_info(struct ns *ns, const GUID *guid, uint32_t code,
                                  uint32_t lcid, uint32_t in_size, struct pv2_out *out);
/* Its reply, as large as the counterset's instances, is paid from reuse (pcq-reply.h). */
uint32_t pcq_op_enumerate_instances(struct ns *ns, const wchar_t *machine, size_t machine_len,
                                    const GUID *guid, uint32_t in_size,
                                    struct pcq_reuse *reuse, struct pv2_out *out);

#endif /* PERFLIBD_PCQ_BROWSE_H */
