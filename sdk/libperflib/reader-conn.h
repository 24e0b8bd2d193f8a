/* SPDX-License-Identifier: MIT */
/* reader-conn.c: a reader's connection to its provider's collect service.  Hidden. */
#ifndef PL_READER_CONN_H
#define PL_READER_CONN_H

#include <stdbool.h>

struct pl_reader;

/* Refreshes by-reference counters; false when that could not be done in time. */
bool pl_reader_collect(struct pl_reader *r);

#endif /* PL_READER_CONN_H */
