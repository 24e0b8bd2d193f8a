/* SPDX-License-Identifier: MIT */
/* A thread's stat line and Windows' view of it (task.h). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"

/* Field k (3: the state) of a stat line, p just past the comm's ')'; NULL past the end. */
static const char *stat_field(const char *p, unsigned k)
{
        for (unsigned i = 3; i < k; i++) {
                p += strspn(p, " ");
                if (*p == '\0' || *p == '\n')
                        return NULL;
                p += strcspn(p, " \n");
        }
        p += strspn(p, " ");
        return *p == '\0' || *p == '\n' ? NULL : p;
}

static int signed_field(const char *p, int64_t *ret)
{
        char *end;
        long long v;

        if (!p || (*p != '-' && (*p < '0' || *p > '9')))
                return -EBADMSG;
        v = strtoll(p, &end, 10);
        *ret = v;
        return 0;
}

int pv_task_stat_parse(const char *line, struct pv_task_stat *ret)
{
        struct pv_task_stat t = { 0 };
        const char *close, *p;
        int64_t v;

        if (!line || !ret)
                return -EINVAL;
        if (pv_pid_stat_parse(line, &t.stat) < 0)
                return -EBADMSG;
        close = strrchr(line, ')') + 1;
        if (signed_field(stat_field(close, 18), &t.priority) < 0 ||
            signed_field(stat_field(close, 19), &t.nice) < 0)
                return -EBADMSG;
        /* Fields 40 and 41 came with Linux 2.5.19; a line without them is an old kernel's. */
        if ((p = stat_field(close, 40)) && signed_field(p, &v) == 0 && v >= 0)
                t.rt_priority = (uint64_t) v;
        if ((p = stat_field(close, 41)) && signed_field(p, &v) == 0 && v >= 0)
                t.policy = (uint64_t) v;
        *ret = t;
        return 0;
}

uint64_t pv_task_priority_base(const struct pv_task_stat *t)
{
        if (t->policy == SCHED_FIFO || t->policy == SCHED_RR)
                return 40 + t->rt_priority;
        return t->nice >= -20 && t->nice <= 19 ? (uint64_t) (20 - t->nice) : 20;
}

uint64_t pv_task_priority_current(const struct pv_task_stat *t)
{
        /* priority is prio - 100: nice + 20 (0 to 39), or -1 - rt_priority (-2 to -100). */
        if (t->priority < 0)
                return t->priority >= -100 ? (uint64_t) (39 - t->priority) : 139;
        return t->priority <= 39 ? (uint64_t) (40 - t->priority) : 1;
}

uint64_t pv_task_state(char state)
{
        switch (state) {
        case 'R':
                return 2;
        case 'S': case 'D': case 'I': case 'T': case 't': case 'W': case 'P':
                return 5;
        case 'Z': case 'X': case 'x':
                return 4;
        default:
                return 7;
        }
}

uint64_t pv_task_wait_reason(char state)
{
        switch (state) {
        case 'S':
                return 6;
        case 'T':
        case 't':
                return 5;
        default:
                return 0;
        }
}

int pv_task_schedstat_switches(const char *text, uint64_t *ret)
{
        unsigned long long run, wait, slices;
        int end = 0;

        if (*text < '0' || *text > '9' ||
            sscanf(text, "%llu %llu %llu%n", &run, &wait, &slices, &end) != 3 ||
            (text[end] != '\n' && text[end] != '\0'))
                return -EINVAL;
        *ret = slices;
        return 0;
}
