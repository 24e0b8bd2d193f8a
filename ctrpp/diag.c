/* SPDX-License-Identifier: MIT */
/* Diagnostics as a compiler prints them: file:line:col: error: message. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfman.h"

struct pm_diags *pm_diags_new(void)
{
        return calloc(1, sizeof(struct pm_diags));
}

void pm_diags_free(struct pm_diags *d)
{
        if (!d)
                return;
        for (size_t i = 0; i < d->n; i++)
                free(d->items[i].message);
        free(d->items);
        free(d);
}

static int diags_grow(struct pm_diags *d)
{
        size_t cap = d->cap ? d->cap * 2 : 16;
        struct pm_diag *n = realloc(d->items, cap * sizeof(*n));

        if (!n)
                return -ENOMEM;
        d->items = n;
        d->cap = cap;
        return 0;
}

void pm_diag(struct pm_diags *d, enum pm_severity sev, const struct pm_loc *loc,
             const char *fmt, ...)
{
        va_list ap;
        char *msg = NULL;
        int r;

        if (sev == PM_ERROR)
                d->n_errors++;
        else
                d->n_warnings++;
        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        /* The count above still fails the run; only the text is lost. */
        if (r < 0 || (d->n == d->cap && diags_grow(d) < 0)) {
                if (r >= 0)
                        free(msg);
                return;
        }
        d->items[d->n] = (struct pm_diag) {
                .severity = sev,
                .loc = loc ? *loc : (struct pm_loc) { 0 },
                .message = msg,
                .order = d->n,
        };
        d->n++;
}

static int loc_cmp(const void *a, const void *b)
{
        const struct pm_diag *x = a, *y = b;
        int c = strcmp(x->loc.file ? x->loc.file : "", y->loc.file ? y->loc.file : "");

        if (c)
                return c;
        if (x->loc.line != y->loc.line)
                return x->loc.line < y->loc.line ? -1 : 1;
        if (x->loc.col != y->loc.col)
                return x->loc.col < y->loc.col ? -1 : 1;
        return x->order < y->order ? -1 : x->order > y->order;
}

void pm_diags_print(struct pm_diags *d, FILE *f)
{
        if (d->n == 0)
                return;         /* items is NULL then, which qsort must not see */
        qsort(d->items, d->n, sizeof(*d->items), loc_cmp);
        for (size_t i = 0; i < d->n; i++) {
                const struct pm_diag *g = &d->items[i];
                const char *sev = g->severity == PM_ERROR ? "error" :
                                  d->werror ? "error" : "warning";

                if (g->loc.file && g->loc.line && g->loc.col)
                        fprintf(f, "%s:%u:%u: ", g->loc.file, g->loc.line, g->loc.col);
                else if (g->loc.file && g->loc.line)
                        fprintf(f, "%s:%u: ", g->loc.file, g->loc.line);
                else if (g->loc.file)
                        fprintf(f, "%s: ", g->loc.file);
                fprintf(f, "%s: %s\n", sev, g->message);
        }
}

bool pm_diags_failed(const struct pm_diags *d)
{
        return d->n_errors > 0 || (d->werror && d->n_warnings > 0);
}
