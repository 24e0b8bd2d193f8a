/* SPDX-License-Identifier: MIT */
/*
 * Counter paths as PDH writes them:
 *
 *      [\\host]\Object[(([Parent/]Instance[#Index])]\Counter
 *
 * Where the grammar is ambiguous, these are the readings taken:
 *  - the counter is everything after the last backslash (counter names
 *    hold '/', '(' and ')', never a backslash);
 *  - the object ends at its first '(' (object names hold no parenthesis),
 *    and the instance part runs from there to the ')' that ends right
 *    before the counter's backslash, so instance names may hold
 *    parentheses;
 *  - the parent is what comes before the first '/' of the instance part,
 *    unless that '/' is the part's first character: then there is no
 *    parent and the whole part is the instance, so that Linux instance
 *    names that are paths ("/", "/boot": LogicalDisk's mount points) can
 *    be written as they are listed;
 *  - "#digits" at the end of the instance is the index; any other '#' is
 *    part of the name, as instance names like "C#" exist.
 *
 * Besides pcq.h's parse, format and free, this file owns what the rest of
 * libpcq asks of a path (client-path.h): the path of one listed or
 * queried item, and whether an instance matches a path's instance part.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client-path.h"

static uint32_t fail(size_t pos, size_t *ret_pos)
{
        if (ret_pos)
                *ret_pos = pos;
        return PDH_CSTATUS_BAD_COUNTERNAME;
}

/* The #index at the end of [s, s + len): its value and where the '#' is. */
static uint32_t parse_index(const char *s, size_t len, size_t base, size_t *ret_hash,
                            uint32_t *ret_index, size_t *ret_pos)
{
        size_t d = len;
        uint64_t v = 0;

        while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
                d--;
        if (d == len || d == 0 || s[d - 1] != '#') {
                *ret_hash = len;
                *ret_index = 0;
                return ERROR_SUCCESS;
        }
        for (size_t i = d; i < len; i++) {
                v = v * 10 + (uint64_t) (s[i] - '0');
                if (v > UINT32_MAX)
                        return fail(base + d, ret_pos);
        }
        *ret_hash = d - 1;
        *ret_index = (uint32_t) v;
        return ERROR_SUCCESS;
}

/* The instance part between '(' and ')': [s, s + len), s at offset base. */
static uint32_t parse_instance(const char *s, size_t len, size_t base, struct pcq_path *p,
                               size_t *ret_pos)
{
        const char *slash = memchr(s, '/', len);
        size_t start = 0, end;
        uint32_t e;

        if (slash && slash != s) {
                p->parent = strndup(s, (size_t) (slash - s));
                if (!p->parent)
                        return PDH_MEMORY_ALLOCATION_FAILURE;
                start = (size_t) (slash - s) + 1;
        }
        e = parse_index(s + start, len - start, base + start, &end, &p->index, ret_pos);
        if (e)
                return e;
        if (end == 0)
                return fail(base + start, ret_pos);
        p->instance = strndup(s + start, end);
        return p->instance ? ERROR_SUCCESS : PDH_MEMORY_ALLOCATION_FAILURE;
}

/* "\\host" at the start of path; *ret_next is where the object's '\' is. */
static uint32_t parse_host(const char *path, struct pcq_path *p, size_t *ret_next,
                           size_t *ret_pos)
{
        const char *end;

        if (path[0] != '\\')
                return fail(0, ret_pos);
        if (path[1] != '\\') {
                *ret_next = 0;
                return ERROR_SUCCESS;
        }
        end = strchr(path + 2, '\\');
        if (!end)
                return fail(strlen(path), ret_pos);
        if (end == path + 2)
                return fail(2, ret_pos);
        p->host = strndup(path + 2, (size_t) (end - path - 2));
        if (!p->host)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        *ret_next = (size_t) (end - path);
        return ERROR_SUCCESS;
}

/* Object and instance part in [path + from, path + to): to is the counter's '\'. */
static uint32_t parse_object(const char *path, size_t from, size_t to, struct pcq_path *p,
                             size_t *ret_pos)
{
        const char *open = memchr(path + from, '(', to - from);
        size_t obj_end = open ? (size_t) (open - path) : to;
        const char *close = memchr(path + from, ')', obj_end - from);

        if (obj_end == from)
                return fail(from, ret_pos);
        if (close)
                return fail((size_t) (close - path), ret_pos);
        p->object = strndup(path + from, obj_end - from);
        if (!p->object)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        if (!open)
                return ERROR_SUCCESS;
        if (path[to - 1] != ')') {
                /* Text after the ')' (the error is there), or no ')' at all. */
                for (size_t i = to; i > obj_end + 1; i--)
                        if (path[i - 1] == ')')
                                return fail(i, ret_pos);
                return fail(to, ret_pos);
        }
        if (to - 1 == obj_end + 1)
                return fail(to - 1, ret_pos);
        return parse_instance(path + obj_end + 1, to - 1 - (obj_end + 1), obj_end + 1, p, ret_pos);
}

PCQ_API uint32_t pcq_path_parse(const char *path, struct pcq_path *ret, size_t *ret_error_pos)
{
        struct pcq_path p = { 0 };
        const char *last;
        size_t obj, len;
        uint32_t e;

        if (!path || !ret)
                return PDH_INVALID_ARGUMENT;
        if (!*path) {
                if (ret_error_pos)
                        *ret_error_pos = 0;
                return PDH_CSTATUS_NO_COUNTERNAME;
        }
        len = strlen(path);
        e = parse_host(path, &p, &obj, ret_error_pos);
        if (e)
                goto fail;
        last = strrchr(path, '\\');
        if ((size_t) (last - path) == obj) {
                e = fail(len, ret_error_pos);   /* no counter part */
                goto fail;
        }
        if (!last[1]) {
                e = fail(len, ret_error_pos);
                goto fail;
        }
        e = parse_object(path, obj + 1, (size_t) (last - path), &p, ret_error_pos);
        if (e)
                goto fail;
        p.counter = strdup(last + 1);
        if (!p.counter) {
                e = PDH_MEMORY_ALLOCATION_FAILURE;
                goto fail;
        }
        *ret = p;
        return ERROR_SUCCESS;
fail:
        pcq_path_done(&p);
        return e;
}

PCQ_API void pcq_path_done(struct pcq_path *p)
{
        if (!p)
                return;
        free(p->host);
        free(p->object);
        free(p->parent);
        free(p->instance);
        free(p->counter);
        *p = (struct pcq_path){ 0 };
}

PCQ_API char *pcq_path_format(const struct pcq_path *p)
{
        char idx[16] = "";
        char *s = NULL;
        int r;

        if (!p || !p->object || !p->counter)
                return NULL;
        if (p->index > 0)
                snprintf(idx, sizeof(idx), "#%u", p->index);
        r = asprintf(&s, "%s%s\\%s%s%s%s%s%s%s\\%s",
                     p->host ? "\\\\" : "", p->host ? p->host : "", p->object,
                     p->instance ? "(" : "",
                     p->instance && p->parent ? p->parent : "",
                     p->instance && p->parent ? "/" : "",
                     p->instance ? p->instance : "", p->instance ? idx : "",
                     p->instance ? ")" : "", p->counter);
        return r < 0 ? NULL : s;
}

char *cl_item_path(const struct pcq_path *p, const char *object, const char *instance,
                   uint32_t occurrence, const char *counter)
{
        struct pcq_path q = {
                .host = p ? p->host : NULL,
                .object = (char *) object,
                .instance = (char *) instance,
                .index = occurrence,
                .counter = (char *) counter,
        };

        return pcq_path_format(&q);
}

/* One part of an instance pattern: "x*" matches by prefix, else the exact text. */
static bool part_matches(const char *pat, size_t plen, const char *s, size_t len)
{
        if (plen > 0 && pat[plen - 1] == '*')
                return plen - 1 <= len && !strncasecmp(pat, s, plen - 1);
        return plen == len && !strncasecmp(pat, s, len);
}

/*
 * PDH's "(parent/instance#index)" with a wildcard allowed in each part:
 * "*" or "prefix*" as the parent or the instance matches every
 * occurrence, "#*" every occurrence of one name.  The parent is what the
 * name holds before its first '/' (names without one have no parent).
 */
bool cl_instance_matches(const struct pcq_path *p, const char *name, uint32_t occurrence)
{
        const char *inst = name, *slash;
        size_t plen;

        if (!p->instance)
                return true;
        if (p->parent) {
                slash = strchr(name, '/');
                if (!slash || !part_matches(p->parent, strlen(p->parent), name,
                                            (size_t) (slash - name)))
                        return false;
                inst = slash + 1;
        }
        plen = strlen(p->instance);
        if (plen >= 2 && !strcmp(p->instance + plen - 2, "#*"))
                return part_matches(p->instance, plen - 2, inst, strlen(inst));
        if (plen > 0 && p->instance[plen - 1] == '*')
                return part_matches(p->instance, plen, inst, strlen(inst));
        return part_matches(p->instance, plen, inst, strlen(inst)) && occurrence == p->index;
}

bool cl_path_has_wildcard(const struct pcq_path *p)
{
        return (p->instance && strchr(p->instance, '*')) || (p->parent && strchr(p->parent, '*'));
}
