/* SPDX-License-Identifier: MIT */
/*
 * rrp-stubs.c: the MS-RRP calls a performance client makes on \PIPE\winreg
 * (see rrp.h).  Our own code, from MS-RRP 3.1.5's IDL and C706's NDR rules.
 *
 * Each call is unmarshalled completely and checked (pointers, conformance
 * against the sizes the IDL ties it to, every length against the stub)
 * before anything runs; a request that breaks the IDL gets a fault and
 * changes nothing.  The keys are this connection's: 16 context handles at
 * most, each a random uuid naming one hive.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dcerpc.h"
#include "perflibv2.h"
#include "rrp.h"

/* 338cd001-2244-31f1-aaaa-900038001003 v1.0 */
const uint8_t rrp_syntax[20] = {
        0x01, 0xd0, 0x8c, 0x33, 0x44, 0x22, 0xf1, 0x31,
        0xaa, 0xaa, 0x90, 0x00, 0x38, 0x00, 0x10, 0x03,
        0x01, 0x00, 0x00, 0x00,
};

enum {
        OP_OPEN_HKCR = 0, OP_OPEN_HKCU = 1, OP_OPEN_HKLM = 2, OP_OPEN_HKPD = 3,
        OP_OPEN_HKU = 4, OP_CLOSE_KEY = 5, OP_OPEN_KEY = 15, OP_QUERY_VALUE = 17,
        OP_GET_VERSION = 26, OP_OPEN_HKCC = 27, OP_OPEN_HKPT = 32, OP_OPEN_HKPN = 33,
};

#define WIN_ERROR_SUCCESS               0u
#define WIN_ERROR_FILE_NOT_FOUND        2u
#define WIN_ERROR_ACCESS_DENIED         5u
#define WIN_ERROR_NOT_ENOUGH_MEMORY     8u
#define WIN_ERROR_INVALID_PARAMETER     87u
#define WIN_ERROR_MORE_DATA             234u
#define WIN_ERROR_NO_MORE_KEYS          1020u   /* Windows' answer to too many open keys here */

/* The version BaseRegGetVersion reports, as Windows and Samba do. */
#define RRP_VERSION                     5u
/* A referent id for the [unique] pointers of a reply: any nonzero value. */
#define REFERENT                        0x00020000u

struct rrp_key {
        uint8_t uuid[16];
        enum rrp_hive hive;
};

struct rrp_stubs {
        const struct rrp_handlers *h;
        struct rrp_key keys[RRP_MAX_KEYS];
        size_t n;
};

int rrp_stubs_new(const struct rrp_handlers *h, struct rrp_stubs **ret)
{
        if (!h || !h->query_value || !ret)
                return -EINVAL;
        struct rrp_stubs *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->h = h;
        *ret = s;
        return 0;
}

void rrp_stubs_free(struct rrp_stubs *s)
{
        free(s);
}

/* The key a handle names, or NULL; attributes are 0 in every handle we hand out. */
static struct rrp_key *key_find(struct rrp_stubs *s, const uint8_t h[NDR_HANDLE_SIZE])
{
        if (ndr_le32(h) != 0)
                return NULL;
        for (size_t i = 0; i < s->n; i++)
                if (memcmp(s->keys[i].uuid, h + 4, 16) == 0)
                        return &s->keys[i];
        return NULL;
}

/* ---- requests ---- */

/* [in, unique] PREGISTRY_SERVER_NAME (one wchar_t), [in] REGSAM: read and dropped. */
static void pull_open_args(struct ndr_pull *p)
{
        if (ndr_pull_u32(p) != 0)
                (void) ndr_pull_u16(p);
        ndr_pull_align(p, 4);
        (void) ndr_pull_u32(p);
}

/*
 * An RRP_UNICODE_STRING and its [unique] buffer: *ret points into the stub
 * (*ret_units code units, a trailing NUL left out), NULL with 0 when the
 * pointer is null.  Length and MaximumLength are even, Length <=
 * MaximumLength, and the array's counts are theirs in units (MS-RRP 2.2.4).
 */
static void pull_unicode_string(struct ndr_pull *p, const uint8_t **ret, size_t *ret_units)
{
        uint16_t len = ndr_pull_u16(p), max = ndr_pull_u16(p);
        uint32_t ref = ndr_pull_u32(p);

        *ret = NULL;
        *ret_units = 0;
        if (p->err)
                return;
        if (len % 2 || max % 2 || len > max) {
                ndr_pull_fail(p, -EBADMSG);
                return;
        }
        if (ref == 0) {
                if (len)
                        ndr_pull_fail(p, -EBADMSG);
                return;
        }
        uint32_t actual = ndr_pull_varying_header(p, max / 2);
        if (!p->err && actual != len / 2u)
                ndr_pull_fail(p, -EBADMSG);
        const uint8_t *units = ndr_pull_bytes(p, (size_t) actual * 2);
        if (p->err)
                return;
        if (actual && ndr_le16(units + 2 * (actual - 1)) == 0)
                actual--;
        *ret = units;
        *ret_units = actual;
}

/* An [in, out, unique] LPDWORD: whether it is there, and its value. */
static bool pull_opt_u32(struct ndr_pull *p, uint32_t *ret)
{
        ndr_pull_align(p, 4);
        if (ndr_pull_u32(p) == 0)
                return false;
        *ret = ndr_pull_u32(p);
        return true;
}

/* ---- replies ---- */

static void push_open_reply(struct ndr_push *o, const uint8_t h[NDR_HANDLE_SIZE], uint32_t status)
{
        ndr_push_handle(o, h);
        ndr_push_u32(o, status);
}

static void push_opt_u32(struct ndr_push *o, bool there, uint32_t v)
{
        ndr_push_align(o, 4);
        ndr_push_u32(o, there ? REFERENT : 0);
        if (there)
                ndr_push_u32(o, v);
}

/* ---- the calls ---- */

static int open_hive(struct rrp_stubs *s, struct ndr_pull *p, uint16_t opnum,
                     struct ndr_push *o, uint32_t *ret_fault)
{
        static const uint8_t null_handle[NDR_HANDLE_SIZE];
        uint8_t h[NDR_HANDLE_SIZE] = { 0 };
        enum rrp_hive hive;

        pull_open_args(p);
        if (p->err || p->off != p->size) {
                *ret_fault = PV2_NCA_S_FAULT_NDR;
                return 0;
        }
        switch (opnum) {
        case OP_OPEN_HKLM: hive = RRP_HKLM; break;
        case OP_OPEN_HKPD: hive = RRP_HKPD; break;
        case OP_OPEN_HKPT: hive = RRP_HKPT; break;
        case OP_OPEN_HKPN: hive = RRP_HKPN; break;
        default:
                push_open_reply(o, null_handle, WIN_ERROR_ACCESS_DENIED);
                return o->err;
        }
        if (s->n == RRP_MAX_KEYS) {
                push_open_reply(o, null_handle, WIN_ERROR_NO_MORE_KEYS);
                return o->err;
        }
        struct rrp_key *k = &s->keys[s->n];
        int r = dcerpc_random_uuid(k->uuid);
        if (r < 0) {
                push_open_reply(o, null_handle, WIN_ERROR_NOT_ENOUGH_MEMORY);
                return o->err;
        }
        k->hive = hive;
        s->n++;
        memcpy(h + 4, k->uuid, 16);
        push_open_reply(o, h, WIN_ERROR_SUCCESS);
        return o->err;
}

/* Pulls the one handle a call starts with: its key, or a fault. */
static struct rrp_key *pull_key(struct rrp_stubs *s, struct ndr_pull *p, uint32_t *ret_fault)
{
        uint8_t h[NDR_HANDLE_SIZE];

        ndr_pull_handle(p, h);
        if (p->err) {
                *ret_fault = PV2_NCA_S_FAULT_NDR;
                return NULL;
        }
        struct rrp_key *k = key_find(s, h);
        if (!k)
                *ret_fault = PV2_NCA_S_FAULT_CONTEXT_MISMATCH;
        return k;
}

static int close_key(struct rrp_stubs *s, struct ndr_pull *p, struct ndr_push *o,
                     uint32_t *ret_fault)
{
        static const uint8_t null_handle[NDR_HANDLE_SIZE];
        struct rrp_key *k = pull_key(s, p, ret_fault);

        if (!k)
                return 0;
        if (p->off != p->size) {
                *ret_fault = PV2_NCA_S_FAULT_NDR;
                return 0;
        }
        *k = s->keys[--s->n];
        push_open_reply(o, null_handle, WIN_ERROR_SUCCESS);
        return o->err;
}

/* No subkey exists here: the handle and the request are checked, the answer is always no. */
static int open_key(struct rrp_stubs *s, struct ndr_pull *p, struct ndr_push *o,
                    uint32_t *ret_fault)
{
        static const uint8_t null_handle[NDR_HANDLE_SIZE];
        const uint8_t *name;
        size_t units;

        if (!pull_key(s, p, ret_fault))
                return 0;
        pull_unicode_string(p, &name, &units);
        ndr_pull_align(p, 4);
        (void) ndr_pull_u32(p);         /* dwOptions */
        (void) ndr_pull_u32(p);         /* samDesired */
        if (p->err || p->off != p->size) {
                *ret_fault = PV2_NCA_S_FAULT_NDR;
                return 0;
        }
        push_open_reply(o, null_handle, WIN_ERROR_FILE_NOT_FOUND);
        return o->err;
}

static int get_version(struct rrp_stubs *s, struct ndr_pull *p, struct ndr_push *o,
                       uint32_t *ret_fault)
{
        if (!pull_key(s, p, ret_fault))
                return 0;
        if (p->off != p->size) {
                *ret_fault = PV2_NCA_S_FAULT_NDR;
                return 0;
        }
        ndr_push_u32(o, RRP_VERSION);
        ndr_push_u32(o, WIN_ERROR_SUCCESS);
        return o->err;
}

/* What BaseRegQueryValue's request says, once checked against its IDL. */
struct query_args {
        const uint8_t *name;
        size_t units;
        bool has_type, has_data, has_cb, has_len;
        uint32_t cb, len;
};

/* Pulls and checks the request after the handle: 0, or the fault to send. */
static uint32_t pull_query_args(struct ndr_pull *p, struct query_args *a)
{
        uint32_t type, max = 0, actual = 0;

        pull_unicode_string(p, &a->name, &a->units);
        a->has_type = pull_opt_u32(p, &type);
        ndr_pull_align(p, 4);
        a->has_data = ndr_pull_u32(p) != 0;
        if (a->has_data) {
                max = ndr_pull_u32(p);
                uint32_t offset = ndr_pull_u32(p);
                actual = ndr_pull_u32(p);
                if (!p->err && (offset != 0 || actual > max))
                        return PV2_NCA_S_FAULT_INVALID_BOUND;
                if (!p->err && max > RRP_MAX_DATA)
                        return PV2_NCA_S_FAULT_INVALID_BOUND;
                (void) ndr_pull_bytes(p, actual);
        }
        a->has_cb = pull_opt_u32(p, &a->cb);
        a->has_len = pull_opt_u32(p, &a->len);
        if (p->err || p->off != p->size)
                return PV2_NCA_S_FAULT_NDR;
        /* size_is(lpcbData ? *lpcbData : 0), length_is(lpcbLen ? *lpcbLen : 0) */
        if (a->has_data && (max != (a->has_cb ? a->cb : 0) || actual != (a->has_len ? a->len : 0)))
                return PV2_NCA_S_FAULT_INVALID_BOUND;
        return 0;
}

/* The status of a value v for a caller with room for a->cb bytes, as RegQueryValueEx answers. */
static uint32_t query_status(const struct query_args *a, const struct rrp_value *v)
{
        if (v->len > RRP_MAX_DATA)
                return WIN_ERROR_NOT_ENOUGH_MEMORY;
        if (a->has_data && v->len > a->cb)
                return WIN_ERROR_MORE_DATA;
        return WIN_ERROR_SUCCESS;
}

static void push_query_reply(struct ndr_push *o, const struct query_args *a,
                             const struct rrp_value *v, uint32_t status)
{
        bool ok = status == WIN_ERROR_SUCCESS;
        /* ERROR_MORE_DATA says how much room the value needs, in lpcbData. */
        bool sized = ok || status == WIN_ERROR_MORE_DATA;
        uint32_t n = ok && a->has_data ? (uint32_t) v->len : 0;

        push_opt_u32(o, a->has_type, sized ? v->type : 0);
        ndr_push_align(o, 4);
        ndr_push_u32(o, a->has_data ? REFERENT : 0);
        if (a->has_data) {
                ndr_push_u32(o, a->cb);
                ndr_push_u32(o, 0);
                ndr_push_u32(o, n);
                ndr_push_bytes(o, v->data, n);
        }
        push_opt_u32(o, a->has_cb, sized ? (uint32_t) v->len : 0);
        push_opt_u32(o, a->has_len, n);
        ndr_push_align(o, 4);
        ndr_push_u32(o, status);
}

static int query_value(struct rrp_stubs *s, struct ndr_pull *p, struct ndr_push *o,
                       uint32_t *ret_fault)
{
        struct rrp_value v = { 0 };
        struct query_args a = { 0 };
        uint32_t status;

        struct rrp_key *k = pull_key(s, p, ret_fault);
        if (!k)
                return 0;
        *ret_fault = pull_query_args(p, &a);
        if (*ret_fault)
                return 0;
        if (a.has_data && !a.has_cb)
                status = WIN_ERROR_INVALID_PARAMETER;
        else {
                status = s->h->query_value(s->h->ctx, k->hive, a.name, a.units, &v);
                if (status == WIN_ERROR_SUCCESS)
                        status = query_status(&a, &v);
        }
        push_query_reply(o, &a, &v, status);
        if (s->h->release && v.data)
                s->h->release(s->h->ctx, &v);
        else
                free(v.data);
        return o->err;
}

int rrp_stubs_call(struct rrp_stubs *s, uint16_t opnum, const uint8_t *stub, size_t stub_len,
                   struct ndr_push *out, uint32_t *ret_fault)
{
        struct ndr_pull p;

        if (!s || (!stub && stub_len) || !out || !ret_fault)
                return -EINVAL;
        *ret_fault = 0;
        ndr_pull_init(&p, stub, stub_len);
        switch (opnum) {
        case OP_OPEN_HKCR: case OP_OPEN_HKCU: case OP_OPEN_HKLM: case OP_OPEN_HKPD:
        case OP_OPEN_HKU: case OP_OPEN_HKCC: case OP_OPEN_HKPT: case OP_OPEN_HKPN:
                return open_hive(s, &p, opnum, out, ret_fault);
        case OP_CLOSE_KEY:
                return close_key(s, &p, out, ret_fault);
        case OP_OPEN_KEY:
                return open_key(s, &p, out, ret_fault);
        case OP_QUERY_VALUE:
                return query_value(s, &p, out, ret_fault);
        case OP_GET_VERSION:
                return get_version(s, &p, out, ret_fault);
        default:
                *ret_fault = PV2_NCA_S_OP_RNG_ERROR;
                return 0;
        }
}
