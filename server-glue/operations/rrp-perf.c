/* SPDX-License-Identifier: MIT */
/*
 * rrp-perf.c: the Perflib V1 view of the namespace that MS-RRP clients read
 * (see rrp-perf.h): title indexes, the name and help texts, and the
 * PERF_DATA_BLOCK of HKEY_PERFORMANCE_DATA, laid out as winperf.h defines
 * it (the same on 32- and 64-bit Windows: its pointer fields are DWORDs).
 *
 * Each value is built twice with the same code, measuring then writing
 * (pcq-buf.h), so its size and its bytes cannot disagree.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcq-buf.h"
#include "pcq-ns.h"
#include "pcq-spec.h"
#include "rrp-perf.h"

#define WIN_ERROR_SUCCESS               0u
#define WIN_ERROR_FILE_NOT_FOUND        2u
#define WIN_ERROR_ACCESS_DENIED         5u
#define WIN_ERROR_NOT_ENOUGH_MEMORY     8u

/*
 * winperf.h's sizes, which are Windows' (it asserts them); PERF_DATA_BLOCK's
 * is not, as its WCHAR Signature is 4 wchar_t here: on the wire, 88 bytes.
 */
#define DATA_BLOCK_SIZE                 88u
#define OBJECT_TYPE_SIZE                ((uint32_t) sizeof(PERF_OBJECT_TYPE))
#define COUNTER_DEFINITION_SIZE         ((uint32_t) sizeof(PERF_COUNTER_DEFINITION))
#define INSTANCE_DEFINITION_SIZE        ((uint32_t) sizeof(PERF_INSTANCE_DEFINITION))
/* The counter block's ByteLength, padded: values start 8 bytes in, one 8-byte slot each. */
#define COUNTER_BLOCK_HEAD              8u

/* The first title index handed out; 1 is the "last index" entry of Counter. */
#define FIRST_INDEX                     2u
#define MAX_NAME_UNITS                  256u

/* ---- title indexes ---- */

struct title {
        GUID guid;
        uint32_t n_counters;
        uint32_t base;                  /* 0: a free slot */
};

struct rrp_titles {
        struct title *v;                /* open addressing, mask + 1 slots */
        size_t mask, n;
        uint32_t next;
};

int rrp_titles_new(struct rrp_titles **ret)
{
        struct rrp_titles *t = calloc(1, sizeof(*t));

        if (!t)
                return -ENOMEM;
        t->mask = 63;
        t->v = calloc(t->mask + 1, sizeof(*t->v));
        if (!t->v) {
                free(t);
                return -ENOMEM;
        }
        t->next = FIRST_INDEX;
        *ret = t;
        return 0;
}

void rrp_titles_free(struct rrp_titles *t)
{
        if (!t)
                return;
        free(t->v);
        free(t);
}

static size_t title_hash(const GUID *g, uint32_t n)
{
        uint64_t h = 1469598103934665603ULL;
        const uint8_t *b = (const uint8_t *) g;

        for (size_t i = 0; i < sizeof(*g); i++)
                h = (h ^ b[i]) * 1099511628211ULL;
        return (size_t) ((h ^ n) * 1099511628211ULL);
}

static struct title *title_slot(struct rrp_titles *t, const GUID *g, uint32_t n)
{
        for (size_t i = title_hash(g, n) & t->mask;; i = (i + 1) & t->mask) {
                struct title *s = &t->v[i];
                if (s->base == 0 || (s->n_counters == n && memcmp(&s->guid, g, sizeof(*g)) == 0))
                        return s;
        }
}

static int titles_grow(struct rrp_titles *t)
{
        size_t cap = (t->mask + 1) * 2;
        struct title *old = t->v, *v = calloc(cap, sizeof(*v));

        if (!v)
                return -ENOMEM;
        t->v = v;
        for (size_t i = 0; i <= t->mask; i++)
                if (old[i].base)
                        *title_slot(t, &old[i].guid, old[i].n_counters) = old[i];
        t->mask = cap - 1;
        free(old);
        return 0;
}

/* Forgets every index: when the table is full, or the indexes would pass 2^31. */
static void titles_reset(struct rrp_titles *t)
{
        memset(t->v, 0, (t->mask + 1) * sizeof(*t->v));
        t->n = 0;
        t->next = FIRST_INDEX;
}

/*
 * The name index of cs, handed out at its first sighting (a counterset
 * whose counters changed is a new one).  0 when memory ran out.
 */
static uint32_t titles_get(struct rrp_titles *t, const struct ns_counterset *cs)
{
        struct title *s = title_slot(t, &cs->guid, cs->n_counters);

        if (s->base)
                return s->base;
        if (t->n >= RRP_TITLES_MAX || t->next > 0x7FFFFFFFu - 2 * (cs->n_counters + 1))
                titles_reset(t);
        if ((t->n + 1) * 2 > t->mask + 1) {
                if (titles_grow(t) < 0)
                        return 0;
        }
        s = title_slot(t, &cs->guid, cs->n_counters);
        *s = (struct title) { cs->guid, cs->n_counters, t->next };
        t->n++;
        t->next += 2 * (cs->n_counters + 1);
        return s->base;
}

/* The name index of counter j of a counterset whose own is base. */
static uint32_t counter_index(uint32_t base, size_t j)
{
        return base + 2 * (uint32_t) (j + 1);
}

/* ---- building a value: measure, then write ---- */

typedef void (*emit_fn)(struct pcq_buf *b, const void *ctx);

/*
 * *ret of the bytes f emits, or a Win32 error.  Its data is malloc'd and
 * paid from ns's query memory: the caller gives both back with
 * rrp_perf_release.
 */
static uint32_t build(struct ns *ns, emit_fn f, const void *ctx, uint32_t type,
                      struct rrp_value *ret)
{
        struct pcq_buf b;

        pcq_buf_measure(&b, RRP_MAX_DATA);
        f(&b, ctx);
        if (b.overflow)
                return WIN_ERROR_NOT_ENOUGH_MEMORY;
        size_t n = b.len;
        if (ns_mem_take(ns, n) < 0)
                return WIN_ERROR_NOT_ENOUGH_MEMORY;
        uint8_t *data = malloc(n ? n : 1);
        if (!data) {
                ns_mem_give(ns, n);
                return WIN_ERROR_NOT_ENOUGH_MEMORY;
        }
        pcq_buf_write(&b, data, n);
        f(&b, ctx);
        if (b.overflow || b.len != n) {
                free(data);
                ns_mem_give(ns, n);
                return WIN_ERROR_NOT_ENOUGH_MEMORY;
        }
        *ret = (struct rrp_value) { .type = type, .data = data, .len = n };
        return WIN_ERROR_SUCCESS;
}

/* A number as the texts write it: decimal, UTF-16LE, NUL-terminated. */
static void emit_number(struct pcq_buf *b, uint32_t v)
{
        char s[11];
        size_t n = 0;

        do
                s[sizeof(s) - 1 - ++n] = (char) ('0' + v % 10);
        while ((v /= 10) != 0);
        s[sizeof(s) - 1] = '\0';
        pcq_buf_utf8(b, s + sizeof(s) - 1 - n);
}

/* ---- Counter and Help ---- */

struct text_ctx {
        const struct rrp_perf_session *s;
        bool help;
};

static void emit_text(struct pcq_buf *b, const void *ctx)
{
        const struct text_ctx *t = ctx;
        struct ns *ns = t->s->ns;
        uint32_t odd = t->help ? 1 : 0;

        if (!t->help) {
                emit_number(b, 1);
                emit_number(b, t->s->titles->next - 1);
        }
        for (size_t i = 0; i < ns_count(ns); i++) {
                const struct ns_counterset *cs = ns_at(ns, i);
                uint32_t base = titles_get(t->s->titles, cs);
                if (base == 0)
                        continue;
                emit_number(b, base + odd);
                pcq_buf_utf8(b, t->help ? cs->description : cs->name);
                for (size_t j = 0; j < cs->n_counters; j++) {
                        const struct ns_counter *c = &cs->counters[j];
                        const char *text = t->help ? c->description : c->name;
                        if (!*text)
                                continue;
                        emit_number(b, counter_index(base, j) + odd);
                        pcq_buf_utf8(b, text);
                }
        }
        pcq_buf_u16(b, 0);
}

static uint32_t text_value(const struct rrp_perf_session *s, bool help, struct rrp_value *ret)
{
        const struct text_ctx t = { s, help };

        /* Every counterset gets its index before "1\0<last>" is written. */
        for (size_t i = 0; i < ns_count(s->ns); i++)
                (void) titles_get(s->titles, ns_at(s->ns, i));
        return build(s->ns, emit_text, &t, RRP_REG_MULTI_SZ, ret);
}

/* ---- the PERF_DATA_BLOCK ---- */

struct object {
        const struct ns_counterset *cs;
        struct ns_snapshot *snap;
        uint32_t base;
        bool single;                    /* PERF_NO_INSTANCES: one counter block, no instance */
        uint32_t n_defs;
        uint32_t *defs;                 /* counter positions, each base right after its user */
        uint64_t perf_time, perf_freq;
};

struct global {
        const struct rrp_perf_session *s;
        struct object *o;
        size_t n;
        struct pcq_clocks clk;
};

static bool is_base_of_another(const struct ns_counterset *cs, size_t j)
{
        for (size_t k = 0; k < cs->n_counters; k++)
                if (k != j && cs->counters[k].base_id == cs->counters[j].id)
                        return true;
        return false;
}

/*
 * V1 finds a fraction's or an average's base in the definition right
 * after it: each counter in order, its base after it (again, when two
 * share one); bases are not listed on their own.
 */
static int object_defs(struct object *o)
{
        const struct ns_counterset *cs = o->cs;

        o->defs = calloc(2 * (size_t) cs->n_counters + 1, sizeof(*o->defs));
        if (!o->defs)
                return -ENOMEM;
        for (size_t j = 0; j < cs->n_counters; j++) {
                if (is_base_of_another(cs, j))
                        continue;
                o->defs[o->n_defs++] = (uint32_t) j;
                long k = cs->counters[j].base_id == NS_NO_ID ? -1 :
                         pcq_counter_index(cs, cs->counters[j].base_id);
                if (k >= 0)
                        o->defs[o->n_defs++] = (uint32_t) k;
        }
        return 0;
}

/* V1 has one PerfTime and PerfFreq per object: the first object-timer counter's. */
static void object_clock(struct object *o, const struct pcq_clocks *clk)
{
        const struct ns_counterset *cs = o->cs;

        o->perf_time = clk->perf_time;
        o->perf_freq = PCQ_PERF_FREQ;
        if (o->snap->n_instances == 0)
                return;
        const uint64_t *v = o->snap->instances[0].values;
        for (size_t j = 0; j < cs->n_counters && j < o->snap->n_counters; j++) {
                long t = cs->counters[j].perf_time_id == NS_NO_ID ? -1 :
                         pcq_counter_index(cs, cs->counters[j].perf_time_id);
                long f = cs->counters[j].perf_freq_id == NS_NO_ID ? -1 :
                         pcq_counter_index(cs, cs->counters[j].perf_freq_id);
                if (t >= 0 && f >= 0 && (size_t) t < o->snap->n_counters &&
                    (size_t) f < o->snap->n_counters) {
                        o->perf_time = v[t];
                        o->perf_freq = v[f];
                        return;
                }
        }
}

static void emit_counter_block(struct pcq_buf *b, const struct object *o,
                               const struct ns_instance *inst)
{
        uint32_t n = o->cs->n_counters;

        pcq_buf_u32(b, COUNTER_BLOCK_HEAD + 8 * n);
        pcq_buf_u32(b, 0);
        for (uint32_t j = 0; j < n; j++)
                pcq_buf_u64(b, j < o->snap->n_counters ? inst->values[j] : 0);
}

static void emit_instance(struct pcq_buf *b, const struct object *o,
                          const struct ns_instance *inst)
{
        uint32_t name_bytes = 2 * (uint32_t) (pcq_wcs_utf16_len(inst->name, inst->name_len) + 1);

        pcq_buf_u32(b, INSTANCE_DEFINITION_SIZE + (uint32_t) pcq_align8(name_bytes));
        pcq_buf_u32(b, 0);                      /* ParentObjectTitleIndex */
        pcq_buf_u32(b, 0);                      /* ParentObjectInstance */
        pcq_buf_u32(b, (uint32_t) PERF_NO_UNIQUE_ID); /* instances are known by name */
        pcq_buf_u32(b, INSTANCE_DEFINITION_SIZE);
        pcq_buf_u32(b, name_bytes);
        pcq_buf_wcs(b, inst->name, inst->name_len);
        pcq_buf_pad8(b);
        emit_counter_block(b, o, inst);
}

static void emit_definitions(struct pcq_buf *b, const struct object *o)
{
        for (uint32_t d = 0; d < o->n_defs; d++) {
                const struct ns_counter *c = &o->cs->counters[o->defs[d]];
                uint32_t index = counter_index(o->base, o->defs[d]);

                pcq_buf_u32(b, COUNTER_DEFINITION_SIZE);
                pcq_buf_u32(b, index);
                pcq_buf_u32(b, 0);
                pcq_buf_u32(b, index + 1);
                pcq_buf_u32(b, 0);
                pcq_buf_u32(b, (uint32_t) c->default_scale);
                pcq_buf_u32(b, c->detail_level);
                pcq_buf_u32(b, c->type);
                pcq_buf_u32(b, c->size);
                pcq_buf_u32(b, COUNTER_BLOCK_HEAD + 8 * o->defs[d]);
        }
}

static void emit_object(struct pcq_buf *b, const struct object *o)
{
        size_t start = b->len;

        pcq_buf_u32(b, 0);                      /* TotalByteLength, patched below */
        pcq_buf_u32(b, OBJECT_TYPE_SIZE + COUNTER_DEFINITION_SIZE * o->n_defs);
        pcq_buf_u32(b, OBJECT_TYPE_SIZE);
        pcq_buf_u32(b, o->base);
        pcq_buf_u32(b, 0);
        pcq_buf_u32(b, o->base + 1);
        pcq_buf_u32(b, 0);
        pcq_buf_u32(b, o->cs->detail_level);
        pcq_buf_u32(b, o->n_defs);
        pcq_buf_u32(b, 0);                      /* DefaultCounter */
        pcq_buf_u32(b, o->single ? (uint32_t) PERF_NO_INSTANCES : o->snap->n_instances);
        pcq_buf_u32(b, 0);                      /* CodePage: the names are UTF-16 */
        pcq_buf_u64(b, o->perf_time);
        pcq_buf_u64(b, o->perf_freq);
        emit_definitions(b, o);
        if (o->single)
                emit_counter_block(b, o, &o->snap->instances[0]);
        else
                for (uint32_t i = 0; i < o->snap->n_instances; i++)
                        emit_instance(b, o, &o->snap->instances[i]);
        pcq_buf_patch_u32(b, start, (uint32_t) (b->len - start));
}

static void emit_global(struct pcq_buf *b, const void *ctx)
{
        const struct global *g = ctx;
        const char *name = g->s->system_name ? g->s->system_name : "";
        uint32_t name_bytes = 2 * (uint32_t) (pcq_utf8_utf16_len(name) + 1);

        for (const char *sig = "PERF"; *sig; sig++)     /* Signature: 4 WCHARs, no NUL */
                pcq_buf_u16(b, (uint16_t) *sig);
        pcq_buf_u32(b, 1);                      /* LittleEndian */
        pcq_buf_u32(b, PERF_DATA_VERSION);
        pcq_buf_u32(b, PERF_DATA_REVISION);
        pcq_buf_u32(b, 0);                      /* TotalByteLength, patched below */
        pcq_buf_u32(b, (uint32_t) pcq_align8(DATA_BLOCK_SIZE + name_bytes));
        pcq_buf_u32(b, (uint32_t) g->n);
        pcq_buf_u32(b, g->n ? g->o[0].base : 0);
        pcq_emit_systemtime(b, &g->clk);
        pcq_buf_u32(b, 0);
        pcq_buf_u64(b, g->clk.perf_time);
        pcq_buf_u64(b, PCQ_PERF_FREQ);
        pcq_buf_u64(b, g->clk.time_100ns);
        pcq_buf_u32(b, name_bytes);
        pcq_buf_u32(b, DATA_BLOCK_SIZE);
        pcq_buf_utf8(b, name);
        pcq_buf_pad8(b);
        for (size_t i = 0; i < g->n; i++)
                emit_object(b, &g->o[i]);
        pcq_buf_patch_u32(b, 20, (uint32_t) b->len);
}

/* ---- which objects: "Global", "Costly", or title indexes ---- */

#define MAX_LISTED 64

struct selection {
        bool all;
        size_t n;
        uint32_t index[MAX_LISTED];
};

/* "238 2 4": at most MAX_LISTED decimal indexes; false when name is not such a list. */
static bool parse_indexes(const char *name, struct selection *ret)
{
        const char *p = name;

        ret->all = false;
        ret->n = 0;
        while (*p) {
                if (*p == ' ') {
                        p++;
                        continue;
                }
                uint64_t v = 0;
                if (*p < '0' || *p > '9')
                        return false;
                for (; *p >= '0' && *p <= '9'; p++)
                        if ((v = v * 10 + (uint64_t) (*p - '0')) > UINT32_MAX)
                                return false;
                if (ret->n == MAX_LISTED)
                        return false;
                ret->index[ret->n++] = (uint32_t) v;
        }
        return ret->n > 0;
}

static bool selected(const struct selection *sel, uint32_t base)
{
        if (sel->all)
                return true;
        for (size_t i = 0; i < sel->n; i++)
                if (sel->index[i] == base)
                        return true;
        return false;
}

static void global_done(struct global *g)
{
        for (size_t i = 0; i < g->n; i++) {
                ns_snapshot_free(g->o[i].snap);
                free(g->o[i].defs);
        }
        free(g->o);
}

/* Collects one object; false when it has nothing to show (no live single instance, or a failure). */
static bool object_collect(struct global *g, const struct ns_counterset *cs, uint32_t base)
{
        struct object *o = &g->o[g->n];

        *o = (struct object) { .cs = cs, .base = base };
        o->single = pcq_cs_kind(cs) != PCQ_CS_MULTI;
        if (ns_collect(g->s->ns, cs, NULL, 0, &o->snap) < 0)
                return false;
        if ((o->single && o->snap->n_instances == 0) || object_defs(o) < 0) {
                ns_snapshot_free(o->snap);
                free(o->defs);
                return false;
        }
        object_clock(o, &g->clk);
        g->n++;
        return true;
}

static uint32_t global_value(const struct rrp_perf_session *s, const struct selection *sel,
                             struct rrp_value *ret)
{
        struct ns *ns = s->ns;
        struct global g = { .s = s };
        uint32_t status;

        pcq_clocks_read(&g.clk);
        g.o = calloc(ns_count(ns) + 1, sizeof(*g.o));
        if (!g.o)
                return WIN_ERROR_NOT_ENOUGH_MEMORY;
        for (size_t i = 0; i < ns_count(ns); i++) {
                const struct ns_counterset *cs = ns_at(ns, i);
                uint32_t base = titles_get(s->titles, cs);
                if (base && cs->live && selected(sel, base))
                        (void) object_collect(&g, cs, base);
        }
        status = build(s->ns, emit_global, &g, RRP_REG_BINARY, ret);
        global_done(&g);
        return status;
}

/* ---- the handlers ---- */

void rrp_perf_release(void *ctx, struct rrp_value *v)
{
        const struct rrp_perf_session *s = ctx;

        if (!v || !v->data)
                return;
        free(v->data);
        ns_mem_give(s->ns, v->len);
        *v = (struct rrp_value) { 0 };
}

/* The value name in lower-case ASCII; false for anything else (no value has such a name). */
static bool ascii_name(const uint8_t *name, size_t units, char out[MAX_NAME_UNITS + 1])
{
        if (units > MAX_NAME_UNITS)
                return false;
        for (size_t i = 0; i < units; i++) {
                uint16_t u = (uint16_t) (name[2 * i] | name[2 * i + 1] << 8);
                if (u == 0 || u >= 0x80)
                        return false;
                out[i] = (char) (u >= 'A' && u <= 'Z' ? u + ('a' - 'A') : u);
        }
        out[units] = '\0';
        return true;
}

uint32_t rrp_perf_query_value(void *ctx, enum rrp_hive hive, const uint8_t *name, size_t units,
                              struct rrp_value *ret)
{
        const struct rrp_perf_session *s = ctx;
        char n[MAX_NAME_UNITS + 1];
        struct selection sel = { .all = true };

        if (!s->allowed)
                return WIN_ERROR_ACCESS_DENIED;
        if (hive == RRP_HKLM || !ascii_name(name, units, n))
                return WIN_ERROR_FILE_NOT_FOUND;
        if (hive != RRP_HKPD) {
                /* Performance text: the names in English, which is every language here. */
                if (strcmp(n, "counter") == 0 || strcmp(n, "help") == 0)
                        return text_value(s, n[0] == 'h', ret);
                return WIN_ERROR_FILE_NOT_FOUND;
        }
        if (strcmp(n, "counter 009") == 0 || strcmp(n, "help 009") == 0)
                return text_value(s, n[0] == 'h', ret);
        if (strcmp(n, "costly") == 0)
                sel.all = false;
        else if (n[0] != '\0' && strcmp(n, "global") != 0 && !parse_indexes(n, &sel))
                return WIN_ERROR_FILE_NOT_FOUND;
        return global_value(s, &sel, ret);
}
