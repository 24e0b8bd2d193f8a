/* SPDX-License-Identifier: MIT */
/* collect.c: refreshing by-reference counters.  Hidden. */
#ifndef PL_COLLECT_H
#define PL_COLLECT_H

struct pl_provider;

/* Copies every referenced value into its slot; takes p->lock. */
void pl_provider_collect(struct pl_provider *p);

#endif /* PL_COLLECT_H */
