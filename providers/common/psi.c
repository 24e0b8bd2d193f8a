/* SPDX-License-Identifier: MIT */
/* The pressure stall files (psi.h). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "psi.h"

/* A decimal integer of at most 19 digits (no overflow); advances *p. */
static bool parse_u64(const char **p, uint64_t *ret)
{
        uint64_t v = 0;
        int n = 0;

        for (; **p >= '0' && **p <= '9'; (*p)++, n++) {
                if (n == 19)
                        return false;
                v = v * 10 + (uint64_t) (**p - '0');
        }
        *ret = v;
        return n > 0;
}

/*
 * "12.34" as 1234: the kernel prints two decimals ("%lu.%02lu"); fewer are
 * read as if padded, more are cut.
 */
static bool parse_hundredths(const char **p, uint64_t *ret)
{
        uint64_t whole, frac = 0;

        if (!parse_u64(p, &whole) || whole > UINT64_MAX / 100 - 100)
                return false;
        if (**p == '.') {
                (*p)++;
                for (int k = 0; k < 2; k++, (*p)++) {
                        if (**p < '0' || **p > '9')
                                break;
                        frac += (uint64_t) (**p - '0') * (k == 0 ? 10 : 1);
                }
                while (**p >= '0' && **p <= '9')
                        (*p)++;
        }
        *ret = whole * 100 + frac;
        return true;
}

static const struct field {
        const char *key;                /* with its '=' */
        size_t offset;                  /* in struct pv_psi_line */
        bool hundredths;
} fields[] = {
        { "avg10=", offsetof(struct pv_psi_line, avg10), true },
        { "avg60=", offsetof(struct pv_psi_line, avg60), true },
        { "avg300=", offsetof(struct pv_psi_line, avg300), true },
        { "total=", offsetof(struct pv_psi_line, total), false },
};
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

/* One "key=value" field at *p; advances *p past it.  Fields a later kernel may
 * add are skipped (true). */
static bool parse_field(const char **p, struct pv_psi_line *l, unsigned *seen)
{
        for (size_t i = 0; i < N_FIELDS; i++) {
                size_t len = strlen(fields[i].key);
                uint64_t *v = (uint64_t *) ((char *) l + fields[i].offset);

                if (strncmp(*p, fields[i].key, len) != 0)
                        continue;
                *p += len;
                *seen |= 1u << i;
                return fields[i].hundredths ? parse_hundredths(p, v) : parse_u64(p, v);
        }
        *p += strcspn(*p, " \t\n");
        return true;
}

/* The fields after "some"/"full", up to the end of the line; whether all four were there. */
static bool parse_fields(const char *p, struct pv_psi_line *ret)
{
        struct pv_psi_line l = { 0 };
        unsigned seen = 0;

        for (p += strspn(p, " \t"); *p && *p != '\n'; p += strspn(p, " \t"))
                if (!parse_field(&p, &l, &seen) || (*p && !strchr(" \t\n", *p)))
                        return false;
        if (seen != (1u << N_FIELDS) - 1)
                return false;
        *ret = l;
        return true;
}

int pv_psi_parse(const char *text, struct pv_psi *ret)
{
        struct pv_psi psi = { 0 };

        if (!text || !ret)
                return -EINVAL;
        for (const char *line = text; *line; ) {
                const char *nl = strchr(line, '\n');

                if (strncmp(line, "some ", 5) == 0 && parse_fields(line + 5, &psi.some))
                        psi.have |= PV_PSI_SOME;
                else if (strncmp(line, "full ", 5) == 0 && parse_fields(line + 5, &psi.full))
                        psi.have |= PV_PSI_FULL;
                if (!nl)
                        break;
                line = nl + 1;
        }
        if (!psi.have)
                return -EINVAL;
        *ret = psi;
        return 0;
}
