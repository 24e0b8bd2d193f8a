/* SPDX-License-Identifier: MIT */
/*
 * libxml2's own messages made diagnostics: on one line, without namespace
 * names, long quoted values shortened, at the place they are about.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser.h"
#include "source.h"
#include "xml-error.h"

/*
 * From the quote at s: the quoted text, shortened when long (the schema
 * quotes whole values).  *w trails s in the same buffer.
 */
static const char *copy_quoted(const char *s, char **w)
{
        const char *close = strchr(s + 1, '\'');
        size_t len;

        if (!close)
                return s;
        len = (size_t) (close - s) + 1;
        if (len > 64) {
                size_t keep = 40;
                while (((unsigned char) s[keep] & 0xC0) == 0x80)   /* whole characters */
                        keep--;
                memmove(*w, s, keep);
                memcpy(*w + keep, "...'", 4);
                *w += keep + 4;
        } else {
                memmove(*w, s, len);
                *w += len;
        }
        return close + 1;
}

/*
 * A libxml2 message on one line (what some add on further lines quotes
 * the source, which the location already points at), without namespace
 * names and "[facet 'x'] ".
 */
char *pm_tidy_message(const char *msg)
{
        char *r = strdup(msg ? msg : "unknown error"), *w = r;

        if (!r)
                return NULL;
        r[strcspn(r, "\n")] = 0;
        for (const char *s = r; *s;) {
                const char *close = *s == '{' ? strchr(s, '}') : NULL;
                if (close && memmem(s, (size_t) (close - s), "://", 3))
                        s = close + 1;
                else if (strncmp(s, "[facet '", 8) == 0 && (close = strstr(s, "'] ")))
                        s = close + 3;
                else
                        *w++ = *s++;
        }
        while (w > r && pm_is_space(w[-1]))
                w--;
        *w = 0;
        return r;
}

/* The schema quotes whole values: long ones are shortened, in place. */
void pm_elide_values(char *msg)
{
        char *w = msg;

        for (const char *s = msg; *s;)
                if (*s == '\'' && strchr(s + 1, '\''))
                        s = copy_quoted(s, &w);
                else
                        *w++ = *s++;
        *w = 0;
}

static struct pm_loc xml_error_loc(const struct parser *p, xml_error_t e)
{
        struct pm_loc loc = { .file = p->file, .line = e->line > 0 ? (unsigned) e->line : 0,
                              .col = e->int2 > 0 ? (unsigned) e->int2 : 0 };

        /* Found where the tag should have ended; its start is more use. */
        if (e->code == XML_ERR_GT_REQUIRED && e->int1 > 0) {
                loc.line = (unsigned) e->int1;
                loc.col = pm_tag_column(p, loc.line, e->str1);
        }
        return loc;
}

/* Everything libxml2 reports while it reads the document comes here. */
void pm_on_xml_error(void *userdata, xml_error_t e)
{
        struct parser *p = userdata;
        struct pm_loc loc = xml_error_loc(p, e);
        char *msg = pm_tidy_message(e->message);

        if (e->level != XML_ERR_WARNING)
                p->xml_errors = true;
        pm_diag(p->d, e->level == XML_ERR_WARNING ? PM_WARNING : PM_ERROR, &loc, "%s",
                msg ? msg : "out of memory");
        free(msg);
}

void pm_ignore_xml_error(void *userdata, xml_error_t e)
{
        (void) userdata;
        (void) e;
}
