/* SPDX-License-Identifier: MIT */
/*
 * smbd's named-pipe handshake and framing (server-glue/daemon/samba-np.h),
 * without smbd: the request Debian's Samba 4.17.12 sent for a real SMB
 * session (captured once; its SMB session key zeroed) gives the identity
 * Samba's own NDR printer showed; every truncation, every byte changed,
 * counts and strings made hostile, and other levels are refused without a
 * crash (ASan and UBSan watch); the reply is the one Samba's NDR parser
 * takes whole; messages are unframed whatever the chunking, and PDUs
 * framed one a message; and the fuzz target runs on the real request.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "np-relay.h"
#include "samba-np.h"

/* The session of the unix user pltest (uid and gid 1001), from 127.0.0.1. */
static const uint8_t req417[] = {
        0x00, 0x00, 0x02, 0xe7, 0x4e, 0x50, 0x41, 0x4d, 0x07, 0x00, 0x00, 0x00,
        0x07, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
        0x04, 0x00, 0x02, 0x00, 0xe6, 0x97, 0x00, 0x00, 0x08, 0x00, 0x02, 0x00,
        0x0c, 0x00, 0x02, 0x00, 0x37, 0xae, 0x00, 0x00, 0x10, 0x00, 0x02, 0x00,
        0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
        0x76, 0x6d, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x0a, 0x00, 0x00, 0x00, 0x31, 0x32, 0x37, 0x2e, 0x30, 0x2e, 0x30, 0x2e,
        0x31, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x03, 0x00, 0x00, 0x00, 0x76, 0x6d, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x31, 0x32, 0x37, 0x2e,
        0x30, 0x2e, 0x30, 0x2e, 0x31, 0x00, 0x00, 0x00, 0x14, 0x00, 0x02, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x18, 0x00, 0x02, 0x00, 0x1c, 0x00, 0x02, 0x00,
        0x20, 0x00, 0x02, 0x00, 0x24, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0xe7, 0x24, 0x1c, 0xcf, 0x68, 0x50, 0x2d, 0x4c, 0x91, 0x7b, 0x70, 0x53,
        0x7b, 0xa3, 0xae, 0xf2, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00,
        0x09, 0x00, 0x00, 0x00, 0x01, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x15, 0x00, 0x00, 0x00, 0x93, 0x24, 0x09, 0x6e, 0x9d, 0xf2, 0xd0, 0x44,
        0x76, 0x87, 0x27, 0xa5, 0xe8, 0x03, 0x00, 0x00, 0x01, 0x05, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x05, 0x15, 0x00, 0x00, 0x00, 0x93, 0x24, 0x09, 0x6e,
        0x9d, 0xf2, 0xd0, 0x44, 0x76, 0x87, 0x27, 0xa5, 0x01, 0x02, 0x00, 0x00,
        0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x16, 0x02, 0x00, 0x00, 0x00,
        0xe9, 0x03, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x02, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x0b, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x16,
        0x01, 0x00, 0x00, 0x00, 0xe9, 0x03, 0x00, 0x00, 0x01, 0x04, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x16, 0x33, 0x41, 0x4d, 0x53, 0x00, 0x03, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x16, 0x24, 0x85, 0xa9, 0x79, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xe9, 0x03, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0xe9, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe9, 0x03, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x28, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x30, 0x00, 0x02, 0x00, 0x34, 0x00, 0x02, 0x00, 0x38, 0x00, 0x02, 0x00,
        0x3c, 0x00, 0x02, 0x00, 0x40, 0x00, 0x02, 0x00, 0x44, 0x00, 0x02, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
        0x00, 0x93, 0x7d, 0xd6, 0x5c, 0x7d, 0xdd, 0x01, 0x00, 0x93, 0x7d, 0xd6,
        0x5c, 0x7d, 0xdd, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
        0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
        0x70, 0x6c, 0x74, 0x65, 0x73, 0x74, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x50, 0x4c, 0x54, 0x45,
        0x53, 0x54, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00,
        0x5c, 0x5c, 0x50, 0x4c, 0x54, 0x45, 0x53, 0x54, 0x5c, 0x70, 0x6c, 0x74,
        0x65, 0x73, 0x74, 0x5c, 0x70, 0x72, 0x6f, 0x66, 0x69, 0x6c, 0x65, 0x00,
        0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
        0x5c, 0x5c, 0x50, 0x4c, 0x54, 0x45, 0x53, 0x54, 0x5c, 0x70, 0x6c, 0x74,
        0x65, 0x73, 0x74, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x50, 0x4c, 0x54, 0x45,
        0x53, 0x54, 0x00, 0x00, 0x48, 0x00, 0x02, 0x00, 0x4c, 0x00, 0x02, 0x00,
        0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
        0x70, 0x6c, 0x74, 0x65, 0x73, 0x74, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x70, 0x6c, 0x74, 0x65,
        0x73, 0x74, 0x00,
};

/* Where fields of req417 lie, for the hostile variants. */
#define OFF_LEVEL       8u
#define OFF_SIDS_CONF   0xc8u
#define OFF_SIDS_COUNT  0xccu
#define OFF_ACCOUNT_LEN 0x218u  /* its actual count; the bytes at 0x21c */
#define OFF_GROUPS_CONF 0x184u

static uint8_t *copy(size_t *size)
{
        uint8_t *b = malloc(sizeof(req417));

        assert_non_null(b);
        memcpy(b, req417, sizeof(req417));
        *size = sizeof(req417);
        return b;
}

static void put_be32(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t) (v >> 24);
        p[1] = (uint8_t) (v >> 16);
        p[2] = (uint8_t) (v >> 8);
        p[3] = (uint8_t) v;
}

static void put_le32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

static int parse(const uint8_t *b, size_t n, struct np_identity *id)
{
        uint32_t level = 0;

        return np_auth_req_parse(b, n, id, &level);
}

static void real_request(void **state)
{
        struct np_identity id;
        uint32_t level = 0;
        size_t size;

        assert_int_equal(np_auth_req_size(req417, &size), 0);
        assert_int_equal(size, sizeof(req417));
        assert_int_equal(np_auth_req_parse(req417, sizeof(req417), &id, &level), 0);
        assert_int_equal(level, NP_AUTH_LEVEL);
        assert_string_equal(id.account, "pltest");
        assert_string_equal(id.domain, "PLTEST");
        assert_string_equal(id.unix_name, "pltest");
        assert_string_equal(id.client_addr, "127.0.0.1");
        assert_true(id.have_unix);
        assert_int_equal(id.uid, 1001);
        assert_int_equal(id.gid, 1001);
        assert_int_equal(id.n_groups, 1);
        assert_int_equal(id.groups[0], 1001);
        np_identity_done(&id);
}

/* Cut anywhere, with the length left as it was or made to match: refused. */
static void every_truncation(void **state)
{
        struct np_identity id;
        size_t size;
        uint8_t *b = copy(&size);

        for (size_t n = 0; n < size; n++) {
                assert_int_equal(parse(b, n, &id), -EBADMSG);
                if (n >= 16) {
                        put_be32(b, (uint32_t) n - 4);
                        assert_int_equal(parse(b, n, &id), -EBADMSG);
                        put_be32(b, (uint32_t) size - 4);
                }
        }
        free(b);
}

/*
 * Every byte after the length changed three ways: refused, or parsed
 * into an identity that names an account.  What it must never do is read
 * outside the request or leak (ASan).
 */
static void every_byte_changed(void **state)
{
        static const uint8_t flips[] = { 0x01, 0x80, 0xff };
        size_t size, ok = 0;
        uint8_t *b = copy(&size);

        for (size_t i = 4; i < size; i++)
                for (size_t f = 0; f < sizeof(flips); f++) {
                        struct np_identity id;
                        int r;

                        b[i] ^= flips[f];
                        r = parse(b, size, &id);
                        assert_true(r == 0 || r == -EBADMSG || r == -EPROTONOSUPPORT);
                        if (r == 0) {
                                assert_non_null(id.account);
                                np_identity_done(&id);
                                ok++;
                        }
                        b[i] ^= flips[f];
                }
        /* The skipped fields (names, times, flags) change freely. */
        assert_true(ok > 0);
        free(b);
}

static void hostile_fields(void **state)
{
        struct np_identity id;
        size_t size;
        uint8_t *b = copy(&size);

        put_le32(b + OFF_SIDS_CONF, 0xffffffffu);
        put_le32(b + OFF_SIDS_COUNT, 0xffffffffu);
        assert_int_equal(parse(b, size, &id), -EBADMSG);
        memcpy(b, req417, size);
        put_le32(b + OFF_SIDS_COUNT, 8);        /* its conformance says 9 */
        assert_int_equal(parse(b, size, &id), -EBADMSG);
        memcpy(b, req417, size);
        put_le32(b + OFF_GROUPS_CONF, 0x10000000u);
        assert_int_equal(parse(b, size, &id), -EBADMSG);
        memcpy(b, req417, size);
        b[OFF_ACCOUNT_LEN + 4 + 6] = 'X';       /* "pltest" without its NUL */
        assert_int_equal(parse(b, size, &id), -EBADMSG);
        memcpy(b, req417, size);
        b[OFF_ACCOUNT_LEN + 4 + 2] = 0;         /* a NUL inside */
        assert_int_equal(parse(b, size, &id), -EBADMSG);
        memcpy(b, req417, size);
        put_le32(b + OFF_ACCOUNT_LEN, 0x7fffffffu);
        assert_int_equal(parse(b, size, &id), -EBADMSG);
        memcpy(b, req417, size);
        memcpy(b + 4, "NPAX", 4);
        assert_int_equal(parse(b, size, &id), -EBADMSG);
        free(b);
}

static void trailing_and_size(void **state)
{
        uint8_t head[4], *b = malloc(sizeof(req417) + 1);
        struct np_identity id;
        size_t size;

        assert_non_null(b);
        memcpy(b, req417, sizeof(req417));
        b[sizeof(req417)] = 0;
        put_be32(b, sizeof(req417) + 1 - 4);
        assert_int_equal(parse(b, sizeof(req417) + 1, &id), -EBADMSG);
        free(b);
        put_be32(head, NP_AUTH_MAX_BYTES);
        assert_int_equal(np_auth_req_size(head, &size), -EMSGSIZE);
        put_be32(head, 0xffffffffu);
        assert_int_equal(np_auth_req_size(head, &size), -EMSGSIZE);
        put_be32(head, 3);
        assert_int_equal(np_auth_req_size(head, &size), -EBADMSG);
}

/* Another level is told apart from garbage, so that perflibd can say which. */
static void other_level(void **state)
{
        struct np_identity id;
        uint32_t level = 0;
        size_t size;
        uint8_t *b = copy(&size);

        put_le32(b + OFF_LEVEL, 5);
        assert_int_equal(np_auth_req_parse(b, size, &id, &level), -EPROTONOSUPPORT);
        assert_int_equal(level, 5);
        free(b);
}

/* The reply, as Samba 4.17.12's ndr_pull_named_pipe_auth_rep takes it whole. */
static void reply(void **state)
{
        static const uint8_t want[NP_AUTH_REP_BYTES] = {
                0x00, 0x00, 0x00, 0x20, 'N', 'P', 'A', 'M', 7, 0, 0, 0, 7, 0, 0, 0,
                0x02, 0x00, 0xff, 0x05, 0, 0, 0, 0, 0x00, 0x10, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0,
        };
        uint8_t out[NP_AUTH_REP_BYTES];

        np_auth_rep_build(7, 0, out);
        assert_memory_equal(out, want, sizeof(want));
}

/* Three messages, one empty, cut at every point into two reads. */
static void unframe(void **state)
{
        static const uint8_t in[] = { 3, 0, 'a', 'b', 'c', 0, 0, 2, 0, 'd', 'e' };

        for (size_t cut = 0; cut <= sizeof(in); cut++) {
                struct np_unframe u = { 0 };
                uint8_t a[sizeof(in)], b[sizeof(in)], got[sizeof(in)];
                size_t n, m;

                memcpy(a, in, cut);
                memcpy(b, in + cut, sizeof(in) - cut);
                n = np_unframe(&u, a, cut);
                m = np_unframe(&u, b, sizeof(in) - cut);
                assert_int_equal(n + m, 5);
                memcpy(got, a, n);
                memcpy(got + n, b, m);
                assert_memory_equal(got, "abcde", 5);
                assert_int_equal(u.left, 0);
                assert_int_equal(u.have, 0);
        }
}

static void pdu(uint8_t *p, size_t len, uint8_t fill)
{
        memset(p, fill, len);
        p[8] = (uint8_t) len;
        p[9] = (uint8_t) (len >> 8);
}

/* Two PDUs over slices cut at odd places: one message each, then nothing. */
static void frame(void **state)
{
        static uint8_t msg[NP_MSG_MAX];
        uint8_t bytes[20 + 300];
        struct iovec slices[] = {
                { bytes, 5 }, { bytes + 5, 0 }, { bytes + 5, 30 }, { bytes + 35, 285 },
        };
        struct iovec *iov = slices;
        size_t n_iov = 4;

        pdu(bytes, 20, 0xaa);
        pdu(bytes + 20, 300, 0xbb);
        assert_int_equal(np_frame_next(&iov, &n_iov, msg), 22);
        assert_int_equal(msg[0], 20);
        assert_int_equal(msg[1], 0);
        assert_memory_equal(msg + 2, bytes, 20);
        assert_int_equal(np_frame_next(&iov, &n_iov, msg), 302);
        assert_int_equal(msg[0], 300 & 0xff);
        assert_int_equal(msg[1], 300 >> 8);
        assert_memory_equal(msg + 2, bytes + 20, 300);
        assert_int_equal(np_frame_next(&iov, &n_iov, msg), 0);
}

static void frame_broken(void **state)
{
        static uint8_t msg[NP_MSG_MAX];
        uint8_t bytes[40];
        struct iovec one = { bytes, sizeof(bytes) }, *iov = &one;
        size_t n_iov = 1;

        pdu(bytes, sizeof(bytes), 0);
        bytes[8] = sizeof(bytes) + 1;           /* longer than what is there */
        assert_int_equal(np_frame_next(&iov, &n_iov, msg), -EPROTO);
        bytes[8] = 12;                          /* shorter than a header */
        one = (struct iovec){ bytes, sizeof(bytes) };
        iov = &one;
        n_iov = 1;
        assert_int_equal(np_frame_next(&iov, &n_iov, msg), -EPROTO);
        one = (struct iovec){ bytes, 9 };       /* not even the length */
        iov = &one;
        n_iov = 1;
        assert_int_equal(np_frame_next(&iov, &n_iov, msg), -EPROTO);
}

/* The fuzz target (fuzz-np.c) on the real request and every prefix of it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_target(void **state)
{
        for (size_t n = 0; n <= sizeof(req417); n++)
                assert_int_equal(LLVMFuzzerTestOneInput(req417, n), 0);
}

/*
 * --samba-winreg's choice: a bind whose first context is MS-RRP's (as
 * impacket sends it), not PerflibV2's, nor any other PDU, nor a short one.
 */
static void rrp_bind_told_apart(void **state)
{
        uint8_t bind[72] = {
                5, 0, 11, 3, 0x10, 0, 0, 0, 72, 0, 0, 0, 1, 0, 0, 0,
                0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0,
                0x01, 0xd0, 0x8c, 0x33, 0x44, 0x22, 0xf1, 0x31,
                0xaa, 0xaa, 0x90, 0x00, 0x38, 0x00, 0x10, 0x03, 1, 0, 0, 0,
        };

        (void) state;
        assert_true(np_is_rrp_bind(bind, sizeof(bind)));
        assert_false(np_is_rrp_bind(bind, 51));
        bind[2] = 14;                   /* an alter_context */
        assert_false(np_is_rrp_bind(bind, sizeof(bind)));
        bind[2] = 11;
        bind[24] = 0;                   /* no context at all */
        assert_false(np_is_rrp_bind(bind, sizeof(bind)));
        bind[24] = 1;
        bind[32] = 0xc5;                /* PerflibV2's da5a86c5-... */
        assert_false(np_is_rrp_bind(bind, sizeof(bind)));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(real_request),
                cmocka_unit_test(every_truncation),
                cmocka_unit_test(every_byte_changed),
                cmocka_unit_test(hostile_fields),
                cmocka_unit_test(trailing_and_size),
                cmocka_unit_test(other_level),
                cmocka_unit_test(reply),
                cmocka_unit_test(unframe),
                cmocka_unit_test(frame),
                cmocka_unit_test(frame_broken),
                cmocka_unit_test(fuzz_target),
                cmocka_unit_test(rrp_bind_told_apart),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
