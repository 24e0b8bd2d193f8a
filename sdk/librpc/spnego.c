/* SPDX-License-Identifier: MIT */
/*
 * SPNEGO's negotiation tokens (spnego.h): a strict DER reader for the four
 * structures a negotiation exchanges, and their writer.  Ours: see
 * spnego.h.  DER only, no BER: definite, minimal lengths, low tag numbers;
 * anything else is refused rather than guessed at.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "spnego.h"

enum {
        TAG_BIT_STRING = 0x03,
        TAG_OCTET_STRING = 0x04,
        TAG_OID = 0x06,
        TAG_ENUMERATED = 0x0a,
        TAG_SEQUENCE = 0x30,
        TAG_APPLICATION_0 = 0x60,
        TAG_CONTEXT = 0xa0,             /* constructed [0]; [n] is TAG_CONTEXT + n */
};

/* The OIDs' contents (after tag and length). */
static const uint8_t oid_spnego[] = { 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02 };
static const struct {
        enum spnego_mech mech;
        uint8_t len;
        uint8_t oid[10];
} mech_oids[] = {
        { SPNEGO_MECH_NTLM, 10, { 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a } },
        { SPNEGO_MECH_KRB5, 9, { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02 } },
        { SPNEGO_MECH_MS_KRB5, 9, { 0x2a, 0x86, 0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02 } },
};

/* ---- reading ---- */

/* What is left to read of one container. */
struct der {
        const uint8_t *p;
        size_t len;
};

/* One element: its tag, its whole encoding, and its contents. */
struct elem {
        uint8_t tag;
        const uint8_t *start;
        size_t total;
        struct der content;
};

/* Reads the length at d (after the tag), minimal and definite only. */
static int read_length(struct der *d, size_t *ret)
{
        size_t n, v = 0;

        if (d->len < 1)
                return -EBADMSG;
        if (d->p[0] < 0x80) {
                *ret = d->p[0];
                d->p++, d->len--;
                return 0;
        }
        n = d->p[0] & 0x7f;
        /* 0x80 is BER's indefinite length; more than 4 bytes is no token of ours. */
        if (n == 0 || n > 4 || d->len < 1 + n || d->p[1] == 0)
                return -EBADMSG;
        for (size_t i = 1; i <= n; i++)
                v = v << 8 | d->p[i];
        /* Minimal: a long form only for what the short form cannot say. */
        if (v < 0x80)
                return -EBADMSG;
        d->p += 1 + n;
        d->len -= 1 + n;
        *ret = v;
        return 0;
}

static int next(struct der *d, struct elem *ret)
{
        struct der rest = *d;
        size_t len;
        int r;

        /* High tag numbers (0x1f) are used by none of these structures. */
        if (rest.len < 1 || (rest.p[0] & 0x1f) == 0x1f)
                return -EBADMSG;
        ret->tag = rest.p[0];
        ret->start = rest.p;
        rest.p++, rest.len--;
        r = read_length(&rest, &len);
        if (r < 0)
                return r;
        if (len > rest.len)
                return -EBADMSG;
        ret->content = (struct der) { rest.p, len };
        ret->total = (size_t) (rest.p - d->p) + len;
        d->p = rest.p + len;
        d->len = rest.len - len;
        return 0;
}

static int expect(struct der *d, uint8_t tag, struct elem *ret)
{
        int r = next(d, ret);

        return r < 0 ? r : ret->tag == tag ? 0 : -EBADMSG;
}

/* 1 and the element when the next one has tag, 0 (nothing read) when another or none follows. */
static int optional(struct der *d, uint8_t tag, struct elem *ret)
{
        if (d->len == 0 || d->p[0] != tag)
                return 0;
        return expect(d, tag, ret) < 0 ? -EBADMSG : 1;
}

/* The contents of an explicitly tagged field: [n] around one element of tag inner. */
static int explicit_field(const struct elem *field, uint8_t inner, struct elem *ret)
{
        struct der c = field->content;
        int r = expect(&c, inner, ret);

        return r < 0 ? r : c.len == 0 ? 0 : -EBADMSG;
}

static enum spnego_mech mech_of(const struct der *oid)
{
        for (size_t i = 0; i < sizeof(mech_oids) / sizeof(mech_oids[0]); i++)
                if (oid->len == mech_oids[i].len && memcmp(oid->p, mech_oids[i].oid, oid->len) == 0)
                        return mech_oids[i].mech;
        return SPNEGO_MECH_OTHER;
}

static int read_mech_list(const struct elem *field, struct spnego_init *init)
{
        struct elem list, oid;
        struct der c;
        int r = explicit_field(field, TAG_SEQUENCE, &list);

        if (r < 0)
                return r;
        init->mech_list = list.start;
        init->mech_list_len = list.total;
        for (c = list.content; c.len > 0; init->n_mechs++) {
                r = expect(&c, TAG_OID, &oid);
                if (r < 0 || oid.content.len == 0)
                        return -EBADMSG;
                if (init->n_mechs < SPNEGO_MAX_MECHS)
                        init->mechs[init->n_mechs] = mech_of(&oid.content);
        }
        /* RFC 4178: the list has at least one mechanism. */
        return init->n_mechs > 0 ? 0 : -EBADMSG;
}

/* An optional [n] OCTET STRING field: its contents into *p and *len. */
static int read_octets(struct der *seq, unsigned n, const uint8_t **p, size_t *len)
{
        struct elem field, s;
        int r = optional(seq, (uint8_t) (TAG_CONTEXT + n), &field);

        if (r <= 0)
                return r;
        r = explicit_field(&field, TAG_OCTET_STRING, &s);
        if (r < 0)
                return r;
        *p = s.content.p;
        *len = s.content.len;
        return 1;
}

/* The GSS-API framing, when there: [APPLICATION 0] { SPNEGO's OID, the token }. */
static int unframe(struct der *d)
{
        struct elem app, oid;
        struct der c;
        int r;

        if (d->len == 0 || d->p[0] != TAG_APPLICATION_0)
                return 0;
        r = expect(d, TAG_APPLICATION_0, &app);
        if (r < 0 || d->len != 0)
                return -EBADMSG;
        c = app.content;
        r = expect(&c, TAG_OID, &oid);
        if (r < 0)
                return r;
        if (oid.content.len != sizeof(oid_spnego) ||
            memcmp(oid.content.p, oid_spnego, sizeof(oid_spnego)) != 0)
                return -ENOTSUP;
        *d = c;
        return 0;
}

/* The choice [n] of NegotiationToken around a SEQUENCE, with nothing after it. */
static int open_choice(struct der *d, unsigned n, struct der *ret_seq)
{
        struct elem choice, seq;
        int r = expect(d, (uint8_t) (TAG_CONTEXT + n), &choice);

        if (r < 0 || d->len != 0)
                return -EBADMSG;
        r = explicit_field(&choice, TAG_SEQUENCE, &seq);
        if (r < 0)
                return r;
        *ret_seq = seq.content;
        return 0;
}

/* Whether the next field is NegTokenInit2's [3] negHints (a SEQUENCE), not [3] mechListMIC. */
static bool is_neg_hints(const struct der *seq)
{
        struct der peek = *seq;
        struct elem field;

        return optional(&peek, TAG_CONTEXT + 3, &field) > 0 && field.content.len > 0 &&
               field.content.p[0] == TAG_SEQUENCE;
}

int spnego_parse_init(const uint8_t *buf, size_t len, struct spnego_init *ret)
{
        struct spnego_init init = { 0 };
        struct der d = { buf, len }, seq;
        struct elem field;
        int r;

        if (!buf || !ret)
                return -EINVAL;
        if ((r = unframe(&d)) < 0 || (r = open_choice(&d, 0, &seq)) < 0)
                return r;
        if ((r = expect(&seq, TAG_CONTEXT + 0, &field)) < 0 ||
            (r = read_mech_list(&field, &init)) < 0)
                return r;
        /* reqFlags: read, and ignored as RFC 4178 says acceptors should. */
        if (optional(&seq, TAG_CONTEXT + 1, &field) < 0)
                return -EBADMSG;
        if (read_octets(&seq, 2, &init.mech_token, &init.mech_token_len) < 0)
                return -EBADMSG;
        /* [3] is mechListMIC in RFC 4178, negHints in MS-SPNG's NegTokenInit2. */
        if (is_neg_hints(&seq)) {
                if (optional(&seq, TAG_CONTEXT + 3, &field) < 0)
                        return -EBADMSG;
                r = read_octets(&seq, 4, &init.mic, &init.mic_len);
        } else
                r = read_octets(&seq, 3, &init.mic, &init.mic_len);
        if (r < 0 || seq.len != 0)
                return -EBADMSG;
        *ret = init;
        return 0;
}

static int read_state(struct der *seq, enum spnego_state *ret)
{
        struct elem field, e;
        int r = optional(seq, TAG_CONTEXT + 0, &field);

        *ret = SPNEGO_STATE_ABSENT;
        if (r <= 0)
                return r;
        r = explicit_field(&field, TAG_ENUMERATED, &e);
        if (r < 0 || e.content.len != 1 || e.content.p[0] > SPNEGO_REQUEST_MIC)
                return -EBADMSG;
        *ret = (enum spnego_state) e.content.p[0];
        return 0;
}

int spnego_parse_resp(const uint8_t *buf, size_t len, struct spnego_resp *ret)
{
        struct spnego_resp resp = { .state = SPNEGO_STATE_ABSENT };
        struct der d = { buf, len }, seq;
        struct elem field, oid;
        int r;

        if (!buf || !ret)
                return -EINVAL;
        if ((r = open_choice(&d, 1, &seq)) < 0 || (r = read_state(&seq, &resp.state)) < 0)
                return r;
        r = optional(&seq, TAG_CONTEXT + 1, &field);
        if (r < 0 || (r > 0 && explicit_field(&field, TAG_OID, &oid) < 0))
                return -EBADMSG;
        if (r > 0) {
                resp.has_mech = 1;
                resp.mech = mech_of(&oid.content);
        }
        if (read_octets(&seq, 2, &resp.token, &resp.token_len) < 0 ||
            read_octets(&seq, 3, &resp.mic, &resp.mic_len) < 0 || seq.len != 0)
                return -EBADMSG;
        *ret = resp;
        return 0;
}

/* ---- writing ---- */

struct out {
        uint8_t *p;
        size_t len, cap;
        bool failed;
};

static void put(struct out *o, const void *data, size_t len)
{
        if (o->failed)
                return;
        if (o->len + len > o->cap) {
                size_t cap = (o->len + len) * 2 + 64;
                uint8_t *p = realloc(o->p, cap);

                if (!p) {
                        o->failed = true;
                        return;
                }
                o->p = p;
                o->cap = cap;
        }
        if (len)
                memcpy(o->p + o->len, data, len);
        o->len += len;
}

/* tag, the DER length of len, then content (which may be inside o: copied first). */
static void put_elem(struct out *o, uint8_t tag, const void *content, size_t len)
{
        uint8_t head[6] = { tag };
        size_t n = 1;

        if (len < 0x80)
                head[n++] = (uint8_t) len;
        else {
                size_t bytes = len > 0xffffff ? 4 : len > 0xffff ? 3 : len > 0xff ? 2 : 1;

                head[n++] = (uint8_t) (0x80 | bytes);
                for (size_t i = bytes; i > 0; i--)
                        head[n++] = (uint8_t) (len >> (8 * (i - 1)));
        }
        put(o, head, n);
        put(o, content, len);
}

/* Replaces o's contents with tag around them. */
static void wrap(struct out *o, uint8_t tag)
{
        struct out w = { 0 };

        put_elem(&w, tag, o->p, o->len);
        w.failed |= o->failed;
        free(o->p);
        *o = w;
}

static int finish(struct out *o, uint8_t **ret, size_t *ret_len)
{
        if (o->failed) {
                free(o->p);
                return -ENOMEM;
        }
        *ret = o->p;
        *ret_len = o->len;
        return 0;
}

static int put_mech_oid(struct out *o, enum spnego_mech mech)
{
        for (size_t i = 0; i < sizeof(mech_oids) / sizeof(mech_oids[0]); i++)
                if (mech_oids[i].mech == mech) {
                        put_elem(o, TAG_OID, mech_oids[i].oid, mech_oids[i].len);
                        return 0;
                }
        return -EINVAL;
}

static int mech_list(const enum spnego_mech *mechs, size_t n, struct out *o)
{
        if (!mechs || n == 0)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (put_mech_oid(o, mechs[i]) < 0)
                        return -EINVAL;
        wrap(o, TAG_SEQUENCE);
        return 0;
}

int spnego_build_mech_list(const enum spnego_mech *mechs, size_t n_mechs, uint8_t **ret,
                           size_t *ret_len)
{
        struct out o = { 0 };
        int r;

        if (!ret || !ret_len)
                return -EINVAL;
        r = mech_list(mechs, n_mechs, &o);
        if (r < 0) {
                free(o.p);
                return r;
        }
        return finish(&o, ret, ret_len);
}

/* Appends what f holds to o, and frees f. */
static void put_out(struct out *o, struct out *f)
{
        put(o, f->p, f->len);
        o->failed |= f->failed;
        free(f->p);
        *f = (struct out) { 0 };
}

/* Appends [n] { OCTET STRING data } when data is there. */
static void put_octets_field(struct out *o, unsigned n, const uint8_t *data, size_t len)
{
        struct out f = { 0 };

        if (!data)
                return;
        put_elem(&f, TAG_OCTET_STRING, data, len);
        wrap(&f, (uint8_t) (TAG_CONTEXT + n));
        put_out(o, &f);
}

int spnego_build_init(const enum spnego_mech *mechs, size_t n_mechs, const uint8_t *token,
                      size_t token_len, uint8_t **ret, size_t *ret_len)
{
        struct out list = { 0 }, seq = { 0 };
        int r;

        if (!ret || !ret_len)
                return -EINVAL;
        r = mech_list(mechs, n_mechs, &list);
        if (r < 0) {
                free(list.p);
                return r;
        }
        wrap(&list, TAG_CONTEXT + 0);
        put_out(&seq, &list);
        put_octets_field(&seq, 2, token, token_len);
        wrap(&seq, TAG_SEQUENCE);
        wrap(&seq, TAG_CONTEXT + 0);
        /* The GSS-API framing: SPNEGO's OID, then the token. */
        {
                struct out framed = { 0 };

                put_elem(&framed, TAG_OID, oid_spnego, sizeof(oid_spnego));
                put_out(&framed, &seq);
                wrap(&framed, TAG_APPLICATION_0);
                return finish(&framed, ret, ret_len);
        }
}

int spnego_build_resp(const struct spnego_resp *r, uint8_t **ret, size_t *ret_len)
{
        struct out seq = { 0 };

        if (!r || !ret || !ret_len || r->state < SPNEGO_STATE_ABSENT || r->state > SPNEGO_REQUEST_MIC)
                return -EINVAL;
        if (r->state != SPNEGO_STATE_ABSENT) {
                uint8_t v = (uint8_t) r->state;
                struct out f = { 0 };

                put_elem(&f, TAG_ENUMERATED, &v, 1);
                wrap(&f, TAG_CONTEXT + 0);
                put_out(&seq, &f);
        }
        if (r->has_mech) {
                struct out f = { 0 };

                if (put_mech_oid(&f, r->mech) < 0) {
                        free(seq.p);
                        return -EINVAL;
                }
                wrap(&f, TAG_CONTEXT + 1);
                put_out(&seq, &f);
        }
        put_octets_field(&seq, 2, r->token, r->token_len);
        put_octets_field(&seq, 3, r->mic, r->mic_len);
        wrap(&seq, TAG_SEQUENCE);
        wrap(&seq, TAG_CONTEXT + 1);
        return finish(&seq, ret, ret_len);
}
