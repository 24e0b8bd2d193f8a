/* SPDX-License-Identifier: MIT */
/*
 * The PerflibV2 server stubs: each opnum's [in] parameters are read off the
 * request stub exactly as MIDL would lay out the IDL of MS-PCQ section 6
 * (top-level pointers are [ref]: no referent ids), checked (range(),
 * size_is consistency, [string] termination, context handles), the handler
 * runs, and the [out] parameters are written.
 *
 * Faults: stub data that does not parse is nca_s_fault_ndr (0x6F7,
 * RPC_X_BAD_STUB_DATA); a range() or size_is/length_is violation is
 * nca_s_fault_invalid_bound (0x1C000007, what RPC_S_INVALID_BOUND maps to
 * on the wire); a handle this connection does not hold is
 * nca_s_fault_context_mismatch (0x1C00001A).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dcerpc.h"
#include "pv2-stubs.h"

struct pv2_query_slot {
        uint8_t uuid[16];
        void *query;
};

struct pv2_stubs {
        const struct pv2_handlers *h;
        void *conn;
        struct pv2_query_slot *slots;   /* unordered; n used of cap */
        size_t n;
        size_t cap;
        size_t max_queries;             /* at most PV2_MAX_QUERIES_PER_CONN */
};

/* One call's decoded common [in] parameters. */
struct pv2_args {
        uint16_t *machine;              /* malloc'd, NUL-terminated, or NULL */
        GUID counterset;
        uint32_t request_code;
        uint32_t request_lcid;
        uint32_t in_size;
        void *query;
        size_t slot;                    /* index of query in slots */
};

int pv2_stubs_new(const struct pv2_handlers *h, void *conn, struct pv2_stubs **ret)
{
        if (!h || !ret)
                return -EINVAL;
        struct pv2_stubs *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->h = h;
        s->conn = conn;
        s->max_queries = PV2_MAX_QUERIES_PER_CONN;
        *ret = s;
        return 0;
}

void pv2_stubs_free(struct pv2_stubs *s)
{
        if (!s)
                return;
        for (size_t i = s->n; i > 0; i--)
                (void)s->h->close_query(s->conn, s->slots[i - 1].query);
        free(s->slots);
        free(s);
}

size_t pv2_stubs_queries(const struct pv2_stubs *s)
{
        return s ? s->n : 0;
}

int pv2_stubs_set_max_queries(struct pv2_stubs *s, size_t n)
{
        if (!s || n < 1 || n > PV2_MAX_QUERIES_PER_CONN)
                return -EINVAL;
        s->max_queries = n;
        return 0;
}

/* ---- the handle table ---- */

static bool slot_find(const struct pv2_stubs *s, const uint8_t h[NDR_HANDLE_SIZE],
                      size_t *ret)
{
        /* Attributes are 0 in every handle we hand out. */
        if (ndr_le32(h) != 0)
                return false;
        for (size_t i = 0; i < s->n; i++)
                if (memcmp(s->slots[i].uuid, h + 4, 16) == 0) {
                        *ret = i;
                        return true;
                }
        return false;
}

/* Adds query under a fresh uuid, written to ret_handle.  0, -ENOSPC, -ENOMEM. */
static int slot_add(struct pv2_stubs *s, void *query, uint8_t ret_handle[NDR_HANDLE_SIZE])
{
        uint8_t h[NDR_HANDLE_SIZE] = { 0 };
        size_t dummy;
        int r;

        if (s->n >= s->max_queries)
                return -ENOSPC;
        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 16;
                struct pv2_query_slot *n = realloc(s->slots, cap * sizeof(*n));
                if (!n)
                        return -ENOMEM;
                s->slots = n;
                s->cap = cap;
        }
        do {
                r = dcerpc_random_uuid(h + 4);
                if (r < 0)
                        return r;
        } while (slot_find(s, h, &dummy));
        memcpy(s->slots[s->n].uuid, h + 4, 16);
        s->slots[s->n].query = query;
        s->n++;
        memcpy(ret_handle, h, NDR_HANDLE_SIZE);
        return 0;
}

static void slot_remove(struct pv2_stubs *s, size_t i)
{
        s->slots[i] = s->slots[--s->n];
}

/* ---- [in] parameters ---- */

static void pull_machine(struct ndr_pull *p, struct pv2_args *a)
{
        const uint8_t *units = NULL;
        uint32_t n = 0;

        ndr_pull_wstring(p, &units, &n);
        if (p->err)
                return;
        a->machine = malloc((size_t)n * sizeof(uint16_t));
        if (!a->machine) {
                ndr_pull_fail(p, -ENOMEM);
                return;
        }
        for (uint32_t i = 0; i < n; i++)
                a->machine[i] = ndr_le16(units + (size_t)i * 2);
}

static void pull_query(struct pv2_stubs *s, struct ndr_pull *p, struct pv2_args *a,
                       uint32_t *fault)
{
        uint8_t h[NDR_HANDLE_SIZE];

        ndr_pull_handle(p, h);
        if (!p->err && !slot_find(s, h, &a->slot))
                *fault = PV2_NCA_S_FAULT_CONTEXT_MISMATCH;
        else if (!p->err)
                a->query = s->slots[a->slot].query;
}

static void pull_in_size(struct ndr_pull *p, struct pv2_args *a, uint32_t max,
                         uint32_t *fault)
{
        a->in_size = ndr_pull_u32(p);
        if (!p->err && a->in_size > max && !*fault)
                *fault = PV2_NCA_S_FAULT_INVALID_BOUND;
}

/* ---- [out] parameters ---- */

/*
 * pdwOutSize, pdwRtnSize, the conformant varying lpData, the status.  With
 * lp, the lpData bytes are handed over rather than copied into the stub.
 */
static void push_out(struct ndr_push *o, uint32_t in_size, struct pv2_out *out,
                     size_t elem, uint32_t status, struct pv2_lpdata *lp, uint32_t *fault)
{
        size_t n = (size_t)out->out_size * elem;
        uint8_t *b;

        if (out->out_size > in_size || (out->out_size && !out->data)) {
                /* A handler broke the sizing rule: length_is > size_is. */
                *fault = PV2_NCA_S_FAULT_INVALID_BOUND;
                return;
        }
        ndr_push_presize(o, o->size + 24 + (lp ? 0 : n));
        ndr_push_u32(o, out->out_size);
        ndr_push_u32(o, out->rtn_size);
        ndr_push_u32(o, in_size);
        ndr_push_u32(o, 0);
        ndr_push_u32(o, out->out_size);
        if (!lp || !n || o->err) {
                ndr_push_bytes(o, out->data, n);
                ndr_push_align(o, 4);
                ndr_push_u32(o, status);
                return;
        }
        /* The padding after lpData to 4, counted from the stub's start, then the status. */
        size_t pad = (4 - ((o->size + n) & 3)) & 3;

        *lp = (struct pv2_lpdata){ .data = out->data, .len = n, .at = o->size };
        out->data = NULL;
        b = ndr_push_reserve(o, pad + 4);
        if (b)
                ndr_put_le32(b + pad, status);
}

/* ---- the opnums ---- */

/* Methods 0, 1, 2, 5, 6: [in] parameters decoded, an lpData out. */
static void call_out_method(struct pv2_stubs *s, uint16_t opnum, struct pv2_args *a,
                            struct ndr_push *o, struct pv2_lpdata *lp, uint32_t *fault)
{
        const struct pv2_handlers *h = s->h;
        struct pv2_out out = { 0 };
        uint32_t st;
        size_t elem = 1;

        switch (opnum) {
        case PV2_ENUMERATE_COUNTERSET:
                st = h->enumerate_counterset(s->conn, a->machine, a->in_size, &out);
                elem = sizeof(GUID);
                break;
        case PV2_QUERY_COUNTERSET_REGISTRATION_INFO:
                st = h->query_registration_info(s->conn, a->machine, &a->counterset,
                                                a->request_code, a->request_lcid,
                                                a->in_size, &out);
                break;
        case PV2_ENUMERATE_COUNTERSET_INSTANCES:
                st = h->enumerate_instances(s->conn, a->machine, &a->counterset,
                                            a->in_size, &out);
                break;
        case PV2_QUERY_COUNTER_INFO:
                st = h->query_counter_info(s->conn, a->query, a->in_size, &out);
                break;
        default:
                st = h->query_counter_data(s->conn, a->query, a->in_size, &out);
                break;
        }
        push_out(o, a->in_size, &out, elem, st, lp, fault);
        pv2_stubs_release(s, out.data);
}

void pv2_stubs_release(struct pv2_stubs *s, uint8_t *data)
{
        if (!data)
                return;
        if (s->h->release_out)
                s->h->release_out(s->conn, data);
        else
                free(data);
}

static void do_open(struct pv2_stubs *s, struct pv2_args *a, struct ndr_push *o)
{
        uint8_t handle[NDR_HANDLE_SIZE] = { 0 };
        void *q = NULL;
        /* A full table refuses before the handler allocates anything. */
        uint32_t st = s->n >= s->max_queries ? ERROR_OUTOFMEMORY :
                      s->h->open_query(s->conn, a->machine, &q);

        if (st == ERROR_SUCCESS && !q)
                st = ERROR_GEN_FAILURE;
        if (st == ERROR_SUCCESS) {
                int r = slot_add(s, q, handle);
                if (r < 0) {
                        (void)s->h->close_query(s->conn, q);
                        /* MS-PCQ 3.1.4.1.4's code when no state can be stored. */
                        st = r == -ENOSPC || r == -ENOMEM ? ERROR_OUTOFMEMORY
                                                          : ERROR_GEN_FAILURE;
                }
        }
        ndr_push_handle(o, handle);
        ndr_push_u32(o, st);
}

static void do_close(struct pv2_stubs *s, struct pv2_args *a, struct ndr_push *o)
{
        static const uint8_t null_handle[NDR_HANDLE_SIZE];
        void *q = a->query;

        /* The handle is gone whatever the handler says: it owns the query. */
        slot_remove(s, a->slot);
        uint32_t st = s->h->close_query(s->conn, q);
        ndr_push_handle(o, null_handle);
        ndr_push_u32(o, st);
}

static void do_validate(struct pv2_stubs *s, struct ndr_pull *p, struct pv2_args *a,
                        struct ndr_push *o, uint32_t *fault)
{
        uint32_t max = ndr_pull_u32(p);
        if (!p->err && max != a->in_size && !*fault)
                *fault = PV2_NCA_S_FAULT_INVALID_BOUND;
        if (*fault)
                return;
        const uint8_t *bytes = ndr_pull_bytes(p, max);
        uint32_t add = ndr_pull_u32(p);
        if (p->err)
                return;
        uint8_t *buf = malloc(max ? max : 1);
        if (!buf) {
                ndr_pull_fail(p, -ENOMEM);
                return;
        }
        if (max)
                memcpy(buf, bytes, max);
        uint32_t st = s->h->validate_counters(s->conn, a->query, buf, a->in_size, add);
        ndr_push_presize(o, o->size + 12 + (size_t)a->in_size);
        ndr_push_u32(o, a->in_size);
        ndr_push_bytes(o, buf, a->in_size);
        ndr_push_align(o, 4);
        ndr_push_u32(o, st);
        free(buf);
}

/* Reads the [in] parameters every opnum has before its lpData. */
static void pull_common(struct pv2_stubs *s, uint16_t opnum, struct ndr_pull *p,
                        struct pv2_args *a, uint32_t *fault)
{
        switch (opnum) {
        case PV2_ENUMERATE_COUNTERSET:
                pull_machine(p, a);
                pull_in_size(p, a, PV2_MAX_ENUMERATE_GUIDS_EXT, fault);
                break;
        case PV2_QUERY_COUNTERSET_REGISTRATION_INFO:
                pull_machine(p, a);
                ndr_pull_guid(p, &a->counterset);
                a->request_code = ndr_pull_u32(p);
                a->request_lcid = ndr_pull_u32(p);
                pull_in_size(p, a, PV2_MAX_REG_INFO_BYTES, fault);
                break;
        case PV2_ENUMERATE_COUNTERSET_INSTANCES:
                pull_machine(p, a);
                ndr_pull_guid(p, &a->counterset);
                pull_in_size(p, a, PV2_MAX_INSTANCES_BYTES, fault);
                break;
        case PV2_OPEN_QUERY_HANDLE:
                pull_machine(p, a);
                break;
        case PV2_CLOSE_QUERY_HANDLE:
                pull_query(s, p, a, fault);
                break;
        case PV2_QUERY_COUNTER_INFO:
                pull_query(s, p, a, fault);
                pull_in_size(p, a, PV2_MAX_COUNTER_INFO_BYTES, fault);
                break;
        case PV2_QUERY_COUNTER_DATA:
                pull_query(s, p, a, fault);
                pull_in_size(p, a, PV2_MAX_COUNTER_DATA_BYTES, fault);
                break;
        case PV2_VALIDATE_COUNTERS:
                pull_query(s, p, a, fault);
                pull_in_size(p, a, PV2_MAX_VALIDATE_BYTES, fault);
                break;
        }
}

int pv2_stubs_call(struct pv2_stubs *s, uint16_t opnum, const uint8_t *stub,
                   size_t stub_len, struct ndr_push *out, struct pv2_lpdata *lp,
                   uint32_t *ret_fault)
{
        struct pv2_args a = { 0 };
        struct ndr_pull p;
        uint32_t fault = 0;

        if (opnum > _PV2_OPNUM_MAX) {
                *ret_fault = PV2_NCA_S_OP_RNG_ERROR;
                return 0;
        }
        ndr_pull_init(&p, stub, stub_len);
        pull_common(s, opnum, &p, &a, &fault);
        if (opnum == PV2_VALIDATE_COUNTERS && !p.err && !fault)
                do_validate(s, &p, &a, out, &fault);
        else if (!p.err && !fault) {
                if (opnum == PV2_OPEN_QUERY_HANDLE)
                        do_open(s, &a, out);
                else if (opnum == PV2_CLOSE_QUERY_HANDLE)
                        do_close(s, &a, out);
                else
                        call_out_method(s, opnum, &a, out, lp, &fault);
        }
        free(a.machine);
        /* Short or malformed stub data wins over a later range fault. */
        if (p.err == -ENOMEM || out->err == -ENOMEM)
                return -ENOMEM;
        if (p.err)
                fault = PV2_NCA_S_FAULT_NDR;
        else if (out->err && !fault)
                fault = PV2_NCA_S_FAULT_INVALID_BOUND;
        *ret_fault = fault;
        return 0;
}
