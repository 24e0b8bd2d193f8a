/* SPDX-License-Identifier: MIT */
/*
 * task.h: a thread's /proc/PID/task/TID/stat beyond what pv_pid_stat_parse
 * reads (procfs.h): its priorities and scheduling policy, for the Thread
 * provider.  Internal to providers/; the conventions of procfs.h.
 */
#ifndef PV_TASK_H
#define PV_TASK_H

#include <stdint.h>

#include "procfs.h"

struct pv_task_stat {
        struct pv_pid_stat stat;        /* its pid is the thread's id */
        int64_t priority;               /* field 18: nice + 20, or -1 - rt_priority (effective) */
        int64_t nice;                   /* field 19 */
        uint64_t rt_priority;           /* field 40; 0 on kernels that do not print it */
        uint64_t policy;                /* field 41, SCHED_*; 0 likewise */
};

int pv_task_stat_parse(const char *line, struct pv_task_stat *ret);

/*
 * Windows' view of the priorities, larger is more urgent: 20 - nice for
 * the normal policies (1 to 40, nice 0 is 20), 40 + rt_priority for the
 * real-time ones (41 to 139).  base from the thread's own settings,
 * current from the effective priority the kernel runs it at (a real-time
 * boost by priority inheritance shows there only).
 */
uint64_t pv_task_priority_base(const struct pv_task_stat *t);
uint64_t pv_task_priority_current(const struct pv_task_stat *t);

/*
 * Windows' Thread State and Thread Wait Reason for a Linux state letter:
 * R running (2); S D I T t waiting (5), for the reasons 6 (S: a user
 * request, a sleep, poll or read the thread asked for), 5 (T t: suspended,
 * stopped or traced) or 0 (D I: the executive, an uninterruptible kernel
 * wait, disk I/O mostly, or a kernel thread's idle wait); Z X terminated
 * (4) with reason 0; anything else unknown (7).
 */
uint64_t pv_task_state(char state);
uint64_t pv_task_wait_reason(char state);

/*
 * The times a thread was switched in, from task/TID/schedstat ("RUN_NS
 * WAIT_NS TIMESLICES", CONFIG_SCHED_INFO): each one ends in a voluntary or
 * an involuntary switch out, so this is status's voluntary_ctxt_switches
 * plus nonvoluntary_ctxt_switches (one more while the thread runs) at an
 * eighth of the cost of generating status.  0, or -EINVAL on anything else.
 */
int pv_task_schedstat_switches(const char *text, uint64_t *ret);

#endif /* PV_TASK_H */
