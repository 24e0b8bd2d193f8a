/* SPDX-License-Identifier: MIT */
/*
 * ns-log.c: the namespace's reports (ns-log.h), through the daemon's log
 * when it gave one.  Apart from the rest so that every part may log
 * without including the part that maps segments.
 */
#include <stdarg.h>

#include "ns-log.h"

void ns_set_log(struct ns *ns, ns_log_fn log, void *userdata)
{
        ns->log = log;
        ns->log_userdata = userdata;
}

void ns_log(struct ns *ns, int priority, const char *format, ...)
{
        va_list ap;

        if (!ns->log)
                return;
        va_start(ap, format);
        ns->log(ns->log_userdata, priority, format, ap);
        va_end(ap);
}

void ns_set_missed(struct ns *ns, ns_missed_fn missed, void *userdata)
{
        ns->missed = missed;
        ns->missed_userdata = userdata;
}
