/* SPDX-License-Identifier: MIT */
/*
 * The small writers both generators use, so that a string, a comment or a
 * GUID comes out the same in the header and in the resource file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

const char *gen_base_name(const char *path)
{
        const char *s;

        if (!path)
                return "manifest";
        s = strrchr(path, '/');
        return s ? s + 1 : path;
}

bool gen_is_ident_char(char c, bool first)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
               (!first && c >= '0' && c <= '9');
}


/*
 * text made a C identifier: other characters become '_', and a leading
 * digit gets a '_' in front.  NULL when text is empty or NULL, or on ENOMEM.
 */
char *gen_identifier_from(const char *text)
{
        size_t n = text ? strlen(text) : 0;
        char *s, *p;

        if (n == 0)
                return NULL;
        s = p = malloc(n + 2);
        if (!s)
                return NULL;
        if (!gen_is_ident_char(text[0], true) && text[0] >= '0' && text[0] <= '9')
                *p++ = '_';
        for (size_t i = 0; i < n; i++)
                *p++ = gen_is_ident_char(text[i], false) ? text[i] : '_';
        *p = '\0';
        return s;
}

char *gen_symbol_or(const char *symbol, const char *fallback_text, const char *fallback)
{
        char *s = gen_identifier_from(symbol && *symbol ? symbol : fallback_text);

        return s ? s : strdup(fallback);
}

void gen_put_string(FILE *f, const char *s)
{
        fputc('"', f);
        for (; s && *s; s++) {
                unsigned char c = (unsigned char) *s;
                if (c == '"' || c == '\\')
                        fprintf(f, "\\%c", c);
                else if (c == '\n')
                        fputs("\\n", f);
                else if (c == '\t')
                        fputs("\\t", f);
                else if (c < 0x20 || c == 0x7f)
                        fprintf(f, "\\%03o", c);
                else if (c == '?' && s[1] == '?')
                        /* "??" would start a trigraph in C++11 and older C. */
                        fputs("?\\", f);
                else
                        fputc(c, f);
        }
        fputc('"', f);
}

void gen_put_comment_text(FILE *f, const char *s)
{
        for (; s && *s; s++) {
                if (s[0] == '*' && s[1] == '/')
                        fputs("* ", f);
                else if (*s == '\n' || *s == '\r' || *s == '\t')
                        fputc(' ', f);
                else
                        fputc(*s, f);
        }
}

void gen_put_guid(FILE *f, const GUID *g)
{
        fprintf(f, "{ 0x%08x, 0x%04x, 0x%04x, { ", g->Data1, g->Data2, g->Data3);
        for (int i = 0; i < 8; i++)
                fprintf(f, "0x%02x%s", g->Data4[i], i < 7 ? ", " : " } }");
}
