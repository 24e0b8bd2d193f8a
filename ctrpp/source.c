/* SPDX-License-Identifier: MIT */
/*
 * The manifest's text, and where things are in it.  The text is read as
 * UTF-8 (a UTF-16 document is converted), and indexed by its line starts
 * and its start tags.
 *
 * libxml2 knows an element's line only where its start tag ends, and an
 * attribute's not at all, while a manifest spreads each start tag over many
 * lines.  So the source is scanned for start tags as well, and the n-th tag
 * is matched with the n-th element: diagnostics then point at the '<' of an
 * element or at the name of an attribute.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "parser.h"
#include "source.h"

/* ---- where things are in the source ---- */

static bool starts_at(const struct source *s, size_t i, const char *what)
{
        size_t n = strlen(what);

        return i + n <= s->size && memcmp(s->text + i, what, n) == 0;
}

static size_t skip_past(const struct source *s, size_t i, const char *end)
{
        size_t n = strlen(end);

        for (; i + n <= s->size; i++)
                if (memcmp(s->text + i, end, n) == 0)
                        return i + n;
        return s->size;
}

/* From an opening quote: just past the closing one. */
static size_t skip_quoted(const struct source *s, size_t i)
{
        const char *q = memchr(s->text + i + 1, s->text[i], s->size - i - 1);

        return q ? (size_t) (q - s->text) + 1 : s->size;
}

bool pm_is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* From the '<' of a start tag: past its '>' ('>' may appear in quoted values). */
static size_t skip_start_tag(const struct source *s, size_t i)
{
        for (i++; i < s->size;) {
                char c = s->text[i];

                if (c == '"' || c == '\'')
                        i = skip_quoted(s, i);
                else if (c == '>')
                        return i + 1;
                else
                        i++;
        }
        return s->size;
}

static int push_tag(struct source *s, size_t start, size_t end)
{
        size_t n = 0;

        if (s->n_tags == s->cap_tags) {
                size_t cap = s->cap_tags ? s->cap_tags * 2 : 64;
                struct tag *t = realloc(s->tags, cap * sizeof(*t));
                if (!t)
                        return -ENOMEM;
                s->tags = t;
                s->cap_tags = cap;
        }
        while (start + 1 + n < end && !pm_is_space(s->text[start + 1 + n]) &&
               s->text[start + 1 + n] != '/' && s->text[start + 1 + n] != '>')
                n++;
        s->tags[s->n_tags++] = (struct tag) { .start = start, .end = end, .name_len = n };
        return 0;
}

static int index_tags(struct source *s)
{
        for (size_t i = 0; i < s->size;) {
                const char *lt = memchr(s->text + i, '<', s->size - i);

                if (!lt)
                        break;
                i = (size_t) (lt - s->text);
                if (starts_at(s, i, "<!--"))
                        i = skip_past(s, i + 4, "-->");
                else if (starts_at(s, i, "<![CDATA["))
                        i = skip_past(s, i + 9, "]]>");
                else if (starts_at(s, i, "<!"))    /* no DTD gets this far (refuse_dtd) */
                        i = skip_past(s, i + 2, ">");
                else if (starts_at(s, i, "<?"))
                        i = skip_past(s, i + 2, "?>");
                else if (starts_at(s, i, "</"))
                        i = skip_past(s, i + 2, ">");
                else {
                        size_t end = skip_start_tag(s, i);
                        if (push_tag(s, i, end) < 0)
                                return -ENOMEM;
                        i = end;
                }
        }
        return 0;
}

int pm_index_lines(struct source *s)
{
        size_t n = 1;

        for (size_t i = 0; i < s->size; i++)
                n += s->text[i] == '\n';
        s->line_starts = malloc(n * sizeof(*s->line_starts));
        if (!s->line_starts)
                return -ENOMEM;
        s->line_starts[0] = 0;
        s->n_lines = 1;
        for (size_t i = 0; i < s->size; i++)
                if (s->text[i] == '\n')
                        s->line_starts[s->n_lines++] = i + 1;
        return 0;
}

static bool tag_names(const struct source *s, const struct tag *t, const xmlNode *n)
{
        const char *p = s->text + t->start + 1;
        size_t len = t->name_len;

        if (n->ns && n->ns->prefix) {
                size_t pl = strlen((const char *) n->ns->prefix);
                if (len <= pl || memcmp(p, n->ns->prefix, pl) != 0 || p[pl] != ':')
                        return false;
                p += pl + 1;
                len -= pl + 1;
        }
        return strlen((const char *) n->name) == len && memcmp(p, n->name, len) == 0;
}

/* Gives each element (in document order) its tag; false when they disagree. */
static bool match_tags(struct source *s, xmlNode *n, size_t *k)
{
        for (; n; n = n->next) {
                if (n->type != XML_ELEMENT_NODE)
                        continue;
                if (*k >= s->n_tags || !tag_names(s, &s->tags[*k], n))
                        return false;
                n->_private = &s->tags[(*k)++];
                if (!match_tags(s, n->children, k))
                        return false;
        }
        return true;
}

void pm_source_done(struct source *s)
{
        free(s->line_starts);
        free(s->tags);
}

int pm_index_source(struct parser *p)
{
        size_t k = 0;

        if (index_tags(&p->src) < 0)
                return -ENOMEM;
        p->src.tags_ok = match_tags(&p->src, xmlDocGetRootElement(p->doc), &k) &&
                         k == p->src.n_tags;
        return 0;
}

struct pm_loc pm_loc_at(const struct parser *p, size_t off)
{
        const struct source *s = &p->src;
        size_t lo = 0, hi = s->n_lines;
        unsigned col = 1;

        /* The last line starting at or before off. */
        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (s->line_starts[mid] <= off)
                        lo = mid;
                else
                        hi = mid;
        }
        for (size_t i = s->line_starts[lo]; i < off; i++)
                col += ((unsigned char) s->text[i] & 0xC0) != 0x80;  /* characters, not bytes */
        return (struct pm_loc) { .file = p->file, .line = (unsigned) lo + 1, .col = col };
}

struct pm_loc pm_node_loc(const struct parser *p, const xmlNode *n)
{
        long line;

        if (p->src.tags_ok && n->_private)
                return pm_loc_at(p, ((const struct tag *) n->_private)->start);
        line = xmlGetLineNo(n);
        return (struct pm_loc) { .file = p->file, .line = line > 0 ? (unsigned) line : 0 };
}

/* Offset of attribute name in a start tag, or 0 when it has none. */
static size_t find_attribute(const struct source *s, const struct tag *t, const char *name)
{
        size_t len = strlen(name);

        for (size_t i = t->start + 1 + t->name_len; i < t->end;) {
                size_t a;

                while (i < t->end && pm_is_space(s->text[i]))
                        i++;
                a = i;
                while (i < t->end && !pm_is_space(s->text[i]) && !strchr("=/>", s->text[i]))
                        i++;
                if (i == a)
                        return 0;
                if (i - a == len && memcmp(s->text + a, name, len) == 0)
                        return a;
                while (i < t->end && s->text[i] != '"' && s->text[i] != '\'')
                        i++;
                if (i < t->end)
                        i = skip_quoted(s, i);
        }
        return 0;
}

struct pm_loc pm_attr_loc(const struct parser *p, const xmlNode *n, const char *name)
{
        size_t off = 0;

        if (p->src.tags_ok && n->_private)
                off = find_attribute(&p->src, n->_private, name);
        return off ? pm_loc_at(p, off) : pm_node_loc(p, n);
}

/* Column of the last "<name" on line, 0 when there is none. */
unsigned pm_tag_column(const struct parser *p, unsigned line, const char *name)
{
        const struct source *s = &p->src;
        size_t start, end, len = name ? strlen(name) : 0, found = SIZE_MAX;

        if (!name || line == 0 || line > s->n_lines)
                return 0;
        start = s->line_starts[line - 1];
        end = line < s->n_lines ? s->line_starts[line] : s->size;
        for (size_t i = start; i + 1 + len <= end; i++)
                if (s->text[i] == '<' && memcmp(s->text + i + 1, name, len) == 0 &&
                    (i + 1 + len == end || pm_is_space(s->text[i + 1 + len]) ||
                     strchr("/>", s->text[i + 1 + len])))
                        found = i;
        return found == SIZE_MAX ? 0 : pm_loc_at(p, found).col;
}

/* ---- reading ---- */

static bool has_utf16_bom(const unsigned char *b, size_t n, bool *ret_big_endian)
{
        if (n < 2 || !((b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF)))
                return false;
        *ret_big_endian = b[0] == 0xFE;
        return true;
}

static char *put_utf8(char *w, uint32_t c)
{
        if (c < 0x80)
                *w++ = (char) c;
        else if (c < 0x800) {
                *w++ = (char) (0xC0 | c >> 6);
                *w++ = (char) (0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
                *w++ = (char) (0xE0 | c >> 12);
                *w++ = (char) (0x80 | (c >> 6 & 0x3F));
                *w++ = (char) (0x80 | (c & 0x3F));
        } else {
                *w++ = (char) (0xF0 | c >> 18);
                *w++ = (char) (0x80 | (c >> 12 & 0x3F));
                *w++ = (char) (0x80 | (c >> 6 & 0x3F));
                *w++ = (char) (0x80 | (c & 0x3F));
        }
        return w;
}

/*
 * Windows tools often save manifests as UTF-16.  They are read as UTF-8 so
 * that the tag scan above sees the same text as libxml2.  -EILSEQ when the
 * text is not UTF-16.
 */
static int utf16_to_utf8(const unsigned char *b, size_t n, bool be, char **ret, size_t *ret_n)
{
        char *out, *w;

        if (n % 2)
                return -EILSEQ;
        out = w = malloc(n / 2 * 3 + 1);
        if (!out)
                return -ENOMEM;
        for (size_t i = 2; i < n; i += 2) {
                uint32_t c = be ? (uint32_t) b[i] << 8 | b[i + 1] : (uint32_t) b[i + 1] << 8 | b[i];

                if (c >= 0xD800 && c < 0xDC00 && i + 3 < n) {
                        uint32_t lo = be ? (uint32_t) b[i + 2] << 8 | b[i + 3] :
                                           (uint32_t) b[i + 3] << 8 | b[i + 2];
                        if (lo < 0xDC00 || lo >= 0xE000)
                                goto fail;
                        c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
                        i += 2;
                } else if (c >= 0xD800 && c < 0xE000)
                        goto fail;
                w = put_utf8(w, c);
        }
        *w = 0;
        *ret = out;
        *ret_n = (size_t) (w - out);
        return 0;
fail:
        free(out);
        return -EILSEQ;
}

/*
 * The document's text as UTF-8 without a BOM: *ret_owned is set when it had
 * to be converted (and must be freed).
 */
int pm_source_text(struct parser *p, const void *data, size_t size, char **ret_owned)
{
        const unsigned char *b = data;
        bool be;
        int r;

        *ret_owned = NULL;
        if (has_utf16_bom(b, size, &be)) {
                r = utf16_to_utf8(b, size, be, ret_owned, &p->src.size);
                if (r == -EILSEQ)
                        pm_diag(p->d, PM_ERROR, &(struct pm_loc) { .file = p->file },
                                "the document starts with a UTF-16 byte order mark but is not UTF-16");
                if (r < 0)
                        return r == -EILSEQ ? -EBADMSG : r;
                p->src.text = *ret_owned;
                return 0;
        }
        if (size >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF)
                b += 3, size -= 3;
        p->src.text = (const char *) b;
        p->src.size = size;
        return 0;
}
