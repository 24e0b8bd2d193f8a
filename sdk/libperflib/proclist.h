/* SPDX-License-Identifier: MIT */
/*
 * proclist.c: every provider of this process, in one list, for in-process
 * readers and for fork.  Hidden.
 */
#ifndef PL_PROCLIST_H
#define PL_PROCLIST_H

#include <stdint.h>

struct pl_provider;

/* Enters p into the list (at start) and takes it out (at stop). */
void pl_proclist_add(struct pl_provider *p);
void pl_proclist_remove(struct pl_provider *p);

/*
 * When the segment identified by (dev, ino) belongs to a provider of this
 * process, copies its referenced values into their slots directly and
 * returns 0; -ESRCH when it is not ours.
 */
int pl_provider_collect_local(uint64_t dev, uint64_t ino);

#endif /* PL_PROCLIST_H */
