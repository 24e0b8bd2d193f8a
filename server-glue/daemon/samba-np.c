/* SPDX-License-Identifier: MIT */
/*
 * smbd's named-pipe handshake and message framing (samba-np.h).
 *
 * The request is NDR as Samba's pidl writes it: a pointer is a 4-byte
 * referent id in its struct, its target follows the struct (depth first,
 * in the order of the pointers); a string is max count, offset, actual
 * count and bytes; a conformant array's count leads its struct; hypers
 * are 8-aligned from the start of the request, the rest to their size.
 * Only what authorisation needs is kept; the rest is walked and bounded.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "samba-np.h"

#define NP_MAX_STRING   4096u   /* bytes of one string, its NUL included */
#define NP_MAX_SUBAUTHS 15u     /* of a SID (MS-DTYP 2.4.2) */

/* A cursor over the request; err sticks, so a walk checks it once at the end. */
struct rd {
        const uint8_t *p;
        size_t size, off;
        int err;
};

static bool rd_take(struct rd *r, size_t align, size_t n, const uint8_t **ret)
{
        size_t at = r->off;

        if (r->err)
                return false;
        if (align > 1)
                at += (align - at % align) % align;
        if (at > r->size || n > r->size - at) {
                r->err = -EBADMSG;
                return false;
        }
        *ret = r->p + at;
        r->off = at + n;
        return true;
}

static uint32_t rd_u8(struct rd *r)
{
        const uint8_t *b;

        return rd_take(r, 1, 1, &b) ? b[0] : 0;
}

static uint32_t rd_u16(struct rd *r)
{
        const uint8_t *b;

        return rd_take(r, 2, 2, &b) ? (uint32_t) b[0] | (uint32_t) b[1] << 8 : 0;
}

static uint32_t rd_u32(struct rd *r)
{
        const uint8_t *b;

        if (!rd_take(r, 4, 4, &b))
                return 0;
        return (uint32_t) b[0] | (uint32_t) b[1] << 8 | (uint32_t) b[2] << 16 |
               (uint32_t) b[3] << 24;
}

/* align 8 for a hyper, 4 for an NTTIME (an udlong): the same 8 bytes. */
static uint64_t rd_u64(struct rd *r, size_t align)
{
        const uint8_t *b;
        uint64_t v = 0;

        if (!rd_take(r, align, 8, &b))
                return 0;
        for (int i = 7; i >= 0; i--)
                v = v << 8 | b[i];
        return v;
}

static void rd_skip(struct rd *r, size_t align, size_t n)
{
        const uint8_t *b;

        (void) rd_take(r, align, n, &b);
}

static void rd_fail(struct rd *r, int err)
{
        if (!r->err)
                r->err = err;
}

/* A unique pointer's referent id: whether its target follows. */
static bool rd_ptr(struct rd *r)
{
        return rd_u32(r) != 0;
}

/* A DATA_BLOB: a 4-byte length and the bytes, skipped. */
static void rd_blob(struct rd *r)
{
        rd_skip(r, 1, rd_u32(r));
}

/*
 * A [string] target: one NUL-terminated string with no NUL inside, duped
 * into *ret when ret is not NULL.
 */
static void rd_string(struct rd *r, char **ret)
{
        uint32_t max = rd_u32(r), offset = rd_u32(r), actual = rd_u32(r);
        const uint8_t *b;

        if (r->err)
                return;
        if (offset != 0 || actual == 0 || actual > max || actual > NP_MAX_STRING) {
                rd_fail(r, -EBADMSG);
                return;
        }
        if (!rd_take(r, 1, actual, &b))
                return;
        if (b[actual - 1] != 0 || memchr(b, 0, actual - 1)) {
                rd_fail(r, -EBADMSG);
                return;
        }
        if (ret && !(*ret = strdup((const char *) b)))
                rd_fail(r, -ENOMEM);
}

/* A string behind a pointer read before: its target, when there is one. */
static void rd_opt_string(struct rd *r, bool present, char **ret)
{
        if (present)
                rd_string(r, ret);
}

/* A dom_sid: revision, count, authority, count sub-authorities. */
static void rd_sid(struct rd *r)
{
        uint32_t n;

        rd_skip(r, 4, 0);
        rd_u8(r);
        n = rd_u8(r);
        if (n > NP_MAX_SUBAUTHS) {
                rd_fail(r, -EBADMSG);
                return;
        }
        rd_skip(r, 1, 6 + 4 * (size_t) n);
}

/* A conformant array's count, checked against the struct's own copy of it. */
static uint32_t rd_count(struct rd *r, uint32_t conformance, uint32_t count, size_t elem)
{
        if (conformance != count || count > (r->size - r->off) / elem)
                rd_fail(r, -EBADMSG);
        return r->err ? 0 : count;
}

/* security_token: the SIDs, privileges and rights, none of them kept. */
static void rd_security_token(struct rd *r)
{
        uint32_t conf = rd_u32(r), n = rd_count(r, conf, rd_u32(r), 8);

        for (uint32_t i = 0; i < n && !r->err; i++)
                rd_sid(r);
        rd_u64(r, 8);           /* privilege_mask */
        rd_u32(r);              /* rights_mask */
}

/* security_unix_token: uid, gid and the supplementary groups. */
static void rd_unix_token(struct rd *r, struct np_identity *id)
{
        uint32_t conf = rd_u32(r), n;

        id->uid = rd_u64(r, 8);
        id->gid = rd_u64(r, 8);
        n = rd_count(r, conf, rd_u32(r), 8);
        if (r->err)
                return;
        id->groups = calloc(n ? n : 1, sizeof(*id->groups));
        if (!id->groups) {
                rd_fail(r, -ENOMEM);
                return;
        }
        for (uint32_t i = 0; i < n; i++)
                id->groups[i] = rd_u64(r, 8);
        id->n_groups = n;
        id->have_unix = !r->err;
}

/* auth_user_info's string pointers, in their order on the wire. */
enum { UI_ACCOUNT, UI_UPN, UI_DOMAIN, UI_DNS_DOMAIN, UI_FULL_NAME, UI_LOGON_SCRIPT,
       UI_PROFILE, UI_HOME, UI_HOME_DRIVE, UI_LOGON_SERVER, UI_N };

/* auth_user_info: the account and its domain kept, the rest walked. */
static void rd_user_info(struct rd *r, struct np_identity *id)
{
        bool p[UI_N];

        for (int i = 0; i < UI_N; i++) {
                p[i] = rd_ptr(r);
                if (i == UI_UPN)
                        rd_u8(r);               /* user_principal_constructed */
        }
        for (int i = 0; i < 6; i++)
                rd_u64(r, 4);                   /* the logon times */
        rd_u16(r);                              /* logon_count */
        rd_u16(r);                              /* bad_password_count */
        rd_u32(r);                              /* acct_flags */
        rd_u8(r);                               /* authenticated */
        for (int i = 0; i < UI_N; i++)
                rd_opt_string(r, p[i], i == UI_ACCOUNT ? &id->account :
                                       i == UI_DOMAIN ? &id->domain : NULL);
}

/* auth_user_info_unix: the unix name kept. */
static void rd_user_info_unix(struct rd *r, struct np_identity *id)
{
        bool name = rd_ptr(r), sanitized = rd_ptr(r);

        rd_opt_string(r, name, &id->unix_name);
        rd_opt_string(r, sanitized, NULL);
}

/*
 * auth_session_info.  The torture and credentials pointers are never
 * sent (Samba's IDL says value(NULL)): one that is set is not Samba.
 */
static void rd_session_info(struct rd *r, struct np_identity *id)
{
        bool token = rd_ptr(r), unix_token = rd_ptr(r), info = rd_ptr(r),
             unix_info = rd_ptr(r), torture = rd_ptr(r);

        rd_blob(r);                     /* session_key: the SMB one, not ours */
        if (torture || rd_ptr(r))       /* credentials */ {
                rd_fail(r, -EBADMSG);
                return;
        }
        rd_skip(r, 4, 16);              /* unique_session_token, a GUID */
        rd_u32(r);                      /* ticket_type */
        if (token)
                rd_security_token(r);
        if (unix_token)
                rd_unix_token(r, id);
        if (info)
                rd_user_info(r, id);
        if (unix_info)
                rd_user_info_unix(r, id);
}

/* named_pipe_auth_req_info7, after its level. */
static void rd_info7(struct rd *r, struct np_identity *id)
{
        bool client_name, client_addr, server_name, server_addr, session;

        rd_u8(r);                       /* transport */
        client_name = rd_ptr(r);
        client_addr = rd_ptr(r);
        rd_u16(r);
        server_name = rd_ptr(r);
        server_addr = rd_ptr(r);
        rd_u16(r);
        session = rd_ptr(r);            /* auth_session_info_transport */
        rd_opt_string(r, client_name, NULL);
        rd_opt_string(r, client_addr, &id->client_addr);
        rd_opt_string(r, server_name, NULL);
        rd_opt_string(r, server_addr, NULL);
        /* No session, or none inside it: nobody to authorise (the caller checks). */
        if (!session)
                return;
        session = rd_ptr(r);
        rd_blob(r);                     /* exported_gssapi_credentials */
        if (session)
                rd_session_info(r, id);
}

int np_auth_req_size(const uint8_t head[4], size_t *ret_size)
{
        uint32_t n = (uint32_t) head[0] << 24 | (uint32_t) head[1] << 16 |
                     (uint32_t) head[2] << 8 | head[3];

        if (n < 12)
                return -EBADMSG;
        if (n > NP_AUTH_MAX_BYTES - 4)
                return -EMSGSIZE;
        *ret_size = (size_t) n + 4;
        return 0;
}

void np_identity_done(struct np_identity *id)
{
        free(id->account);
        free(id->domain);
        free(id->unix_name);
        free(id->client_addr);
        free(id->groups);
        *id = (struct np_identity){ 0 };
}

int np_auth_req_parse(const uint8_t *buf, size_t size, struct np_identity *ret,
                      uint32_t *ret_level)
{
        struct rd r = { .p = buf, .size = size };
        struct np_identity id = { 0 };
        const uint8_t *magic;
        size_t whole;
        uint32_t level;

        if (size < 16 || np_auth_req_size(buf, &whole) < 0 || whole != size)
                return -EBADMSG;
        rd_skip(&r, 1, 4);
        if (!rd_take(&r, 1, 4, &magic) || memcmp(magic, "NPAM", 4) != 0)
                return -EBADMSG;
        level = rd_u32(&r);
        *ret_level = level;
        if (level != NP_AUTH_LEVEL)
                return -EPROTONOSUPPORT;
        if (rd_u32(&r) != level)        /* the union's switch */
                return -EBADMSG;
        id.level = level;
        rd_info7(&r, &id);
        /* Nothing may follow, and an account must be named. */
        if (!r.err && (r.off != size || !id.account || !id.account[0]))
                r.err = -EBADMSG;
        if (r.err) {
                np_identity_done(&id);
                return r.err;
        }
        *ret = id;
        return 0;
}

static void put_u32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

void np_auth_rep_build(uint32_t level, uint32_t status, uint8_t out[NP_AUTH_REP_BYTES])
{
        /*
         * FILE_TYPE_MESSAGE_MODE_PIPE; the device state of a message pipe
         * read in message mode with 255 instances (Samba's own servers'
         * answer); then the allocation size, 8-aligned, and the status.
         */
        memset(out, 0, NP_AUTH_REP_BYTES);
        out[3] = NP_AUTH_REP_BYTES - 4;
        memcpy(out + 4, "NPAM", 4);
        put_u32(out + 8, level);
        put_u32(out + 12, level);
        out[16] = 0x02;
        out[18] = 0xff;
        out[19] = 0x05;
        put_u32(out + 24, 4096);
        put_u32(out + 32, status);
}

size_t np_unframe(struct np_unframe *u, uint8_t *buf, size_t n)
{
        size_t in = 0, out = 0;

        while (in < n) {
                if (u->left == 0) {
                        /* A length, maybe split across reads; an empty message is skipped. */
                        if (u->have == 0) {
                                u->low = buf[in++];
                                u->have = 1;
                                continue;
                        }
                        u->left = (uint32_t) u->low | (uint32_t) buf[in++] << 8;
                        u->have = 0;
                        continue;
                }
                size_t k = n - in < u->left ? n - in : u->left;

                memmove(buf + out, buf + in, k);
                in += k;
                out += k;
                u->left -= (uint32_t) k;
        }
        return out;
}

/* Copies n bytes out of the slices, moving past them; false when fewer are left. */
static bool iov_take(struct iovec **iov, size_t *n_iov, uint8_t *dst, size_t n)
{
        while (n > 0) {
                size_t k;

                if (*n_iov == 0)
                        return false;
                k = (*iov)->iov_len < n ? (*iov)->iov_len : n;
                memcpy(dst, (*iov)->iov_base, k);
                dst += k;
                n -= k;
                (*iov)->iov_base = (uint8_t *) (*iov)->iov_base + k;
                (*iov)->iov_len -= k;
                if ((*iov)->iov_len == 0) {
                        (*iov)++;
                        (*n_iov)--;
                }
        }
        return true;
}

int np_frame_next(struct iovec **iov, size_t *n_iov, uint8_t msg[NP_MSG_MAX])
{
        size_t len;

        while (*n_iov > 0 && (*iov)->iov_len == 0) {
                (*iov)++;
                (*n_iov)--;
        }
        if (*n_iov == 0)
                return 0;
        /* frag_length is bytes 8 and 9 of the common header (C706 12.6.3.1). */
        if (!iov_take(iov, n_iov, msg + 2, 10))
                return -EPROTO;
        len = (size_t) msg[10] | (size_t) msg[11] << 8;
        if (len < 16 || !iov_take(iov, n_iov, msg + 12, len - 10))
                return -EPROTO;
        msg[0] = (uint8_t) len;
        msg[1] = (uint8_t) (len >> 8);
        return (int) len + 2;
}
