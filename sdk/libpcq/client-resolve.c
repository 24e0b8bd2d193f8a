/* SPDX-License-Identifier: MIT */
/*
 * Resolving a counter path against a connection's catalog (cl_resolve),
 * for pcq_expand_path and pcq_query_add: the path's host must be the
 * connection's, its object a counterset of the catalog and its counter one
 * of that counterset's, and when one is not, the error says which part
 * and what the connection is.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client-catalog.h"
#include "client-conn.h"
#include "client-resolve.h"

static void say(char **ret_error, const char *fmt, ...)
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

uint32_t cl_resolve(pcq_conn *c, const char *path, struct pcq_path *ret_path,
                    const struct cl_set **ret_set, char **ret_error)
{
        struct pcq_path p = { 0 };
        const struct cl_set *s;
        char buf[300];
        size_t pos = 0;
        uint32_t e = pcq_path_parse(path, &p, &pos);

        if (e) {
                say(ret_error, "malformed counter path '%s' (at byte %zu)", path, pos);
                return e;
        }
        if (p.host && strcasecmp(p.host, c->host) &&
            !(!*c->host && (!strcmp(p.host, ".") || !strcasecmp(p.host, "localhost")))) {
                say(ret_error, "path '%s' names host '%s', but the query is connected to %s",
                    path, p.host, where(c, buf, sizeof(buf)));
                e = PDH_CSTATUS_NO_MACHINE;
                goto fail;
        }
        s = cl_catalog_find(&c->catalog, &c->link, p.object);
        if (!s) {
                say(ret_error, "no counterset named '%s' on %s", p.object,
                    where(c, buf, sizeof(buf)));
                e = PDH_CSTATUS_NO_OBJECT;
                goto fail;
        }
        if (strcmp(p.counter, "*") && !cl_set_counter(s, p.counter)) {
                say(ret_error, "counterset '%s' has no counter named '%s'", s->name, p.counter);
                e = PDH_CSTATUS_NO_COUNTER;
                goto fail;
        }
        *ret_path = p;
        *ret_set = s;
        return ERROR_SUCCESS;
fail:
        pcq_path_done(&p);
        return e;
}
