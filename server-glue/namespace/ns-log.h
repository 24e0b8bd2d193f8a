/* SPDX-License-Identifier: MIT */
/*
 * ns-log.h: how every part of the namespace reports what it refused or
 * could not do (ns-log.c).  The namespace has no log of its own: ns_log
 * goes to the callback the daemon gave (ns_set_log, ns-live.h), which
 * rate-limits by format, and nowhere without one.
 */
#ifndef PERFLIBD_NS_LOG_H
#define PERFLIBD_NS_LOG_H

#include "ns-internal.h"

/* priority: a syslog(3) level; format: a constant, the rate-limiting key. */
void ns_log(struct ns *ns, int priority, const char *format, ...)
        __attribute__((format(printf, 3, 4)));

#endif /* PERFLIBD_NS_LOG_H */
