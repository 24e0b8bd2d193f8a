/* SPDX-License-Identifier: MIT */
/*
 * expo-select.h: which counters a scrape exports (expo-select.c): every
 * counterset but those --collect.exclude names, narrowed to the paths of
 * --counters when given.  Hidden symbols, expo_ prefix.
 */
#ifndef EXPO_SELECT_H
#define EXPO_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "pcq.h"

struct expo_select;

/*
 * A selection of the countersets whose name matches none of the exclude
 * expressions (POSIX ERE, matching anywhere in the name), and of the paths of counters_file when
 * not NULL (one a line, '#' comments, blank lines skipped).  Each bad line
 * or expression is logged ("FILE:LINE: cause"); then -EINVAL.  *ret is
 * the caller's (expo_select_free).
 */
int expo_select_new(const char *const *exclude, size_t n_exclude, const char *counters_file,
                    struct expo_select **ret);
void expo_select_free(struct expo_select *s);

/*
 * Checks the paths of the --counters file against a server, each line's
 * failure logged as "FILE:LINE: cause"; -ENOENT if any names nothing that
 * exists (an instance not live yet is fine: it may come).
 */
int expo_select_check(const struct expo_select *s, pcq_conn *c);

/* Whether anything of the counterset set is exported. */
bool expo_select_set(const struct expo_select *s, const char *set);
/* Whether the selection names counters one by one or instances of set (else: all). */
bool expo_select_narrow(const struct expo_select *s, const char *set);
/* Whether counter of instance (NULL: single-instance) of set is exported. */
bool expo_select_value(const struct expo_select *s, const char *set, const char *counter,
                       const char *instance);

#endif /* EXPO_SELECT_H */
