/* SPDX-License-Identifier: MIT */
/*
 * Resolving a counter path against a connection's catalog (cl_resolve),
 * for pcq_expand_path and pcq_query_add: the path's host must be the
 * connection's, its object a counterset of the catalog and its counter one
 * of that counterset's, and when one is not, the error says which part,
 * what the connection is, and the nearest name there is (sdk/common's
 * suggest.h), since most such errors are typos.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client-catalog.h"
#include "client-conn.h"
#include "client-resolve.h"
#include "suggest.h"

void cl_say(char **ret_error, const char *fmt, ...)
{
        va_list ap;

        if (!ret_error)
                return;
        free(*ret_error);
        va_start(ap, fmt);
        if (vasprintf(ret_error, fmt, ap) < 0)
                *ret_error = NULL;
        va_end(ap);
}

static const char *where(const pcq_conn *c, char *buf, size_t size)
{
        if (!*c->host)
                return "the local machine";
        snprintf(buf, size, "host '%s'", c->host);
        return buf;
}

uint32_t cl_resolve_set(pcq_conn *c, const char *object, const struct cl_set **ret_set,
                        char **ret_error)
{
        const struct cl_set *s = cl_catalog_find(&c->catalog, &c->link, object);
        struct sg_suggest sg;
        char buf[300];

        if (s) {
                *ret_set = s;
                return ERROR_SUCCESS;
        }
        sg_begin(&sg, object);
        for (size_t i = 0; i < c->catalog.n; i++)
                sg_offer(&sg, c->catalog.sets[i].name, strlen(c->catalog.sets[i].name));
        cl_say(ret_error, "no counterset named '%s' on %s%s", object, where(c, buf, sizeof(buf)),
               sg_hint(&sg));
        return PDH_CSTATUS_NO_OBJECT;
}

static uint32_t no_counter(const struct cl_set *s, const char *counter, char **ret_error)
{
        struct sg_suggest sg;

        sg_begin(&sg, counter);
        for (uint32_t i = 0; i < s->reg.num_counters; i++)
                sg_offer(&sg, s->counters[i].name, strlen(s->counters[i].name));
        cl_say(ret_error, "counterset '%s' has no counter named '%s'%s", s->name, counter,
               sg_hint(&sg));
        return PDH_CSTATUS_NO_COUNTER;
}

uint32_t cl_resolve(pcq_conn *c, const char *path, struct pcq_path *ret_path,
                    const struct cl_set **ret_set, char **ret_error)
{
        struct pcq_path p = { 0 };
        const struct cl_set *s = NULL;
        char buf[300];
        size_t pos = 0;
        uint32_t e = pcq_path_parse(path, &p, &pos);

        if (e) {
                cl_say(ret_error, "malformed counter path '%s' (at byte %zu)", path, pos);
                return e;
        }
        if (p.host && strcasecmp(p.host, c->host) &&
            !(!*c->host && (!strcmp(p.host, ".") || !strcasecmp(p.host, "localhost")))) {
                cl_say(ret_error, "path '%s' names host '%s', but the query is connected to %s",
                       path, p.host, where(c, buf, sizeof(buf)));
                e = PDH_CSTATUS_NO_MACHINE;
                goto fail;
        }
        e = cl_resolve_set(c, p.object, &s, ret_error);
        if (e)
                goto fail;
        if (strcmp(p.counter, "*") && !cl_set_counter(s, p.counter)) {
                e = no_counter(s, p.counter, ret_error);
                goto fail;
        }
        *ret_path = p;
        *ret_set = s;
        return ERROR_SUCCESS;
fail:
        pcq_path_done(&p);
        return e;
}
