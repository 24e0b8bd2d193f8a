/* SPDX-License-Identifier: MIT */
/*
 * SPNEGO's tokens (sdk/librpc/spnego.h) against tokens impacket built (a
 * peer nobody here wrote; DER is canonical, so ours must be the same bytes),
 * MS-SPNG's NegTokenInit2, and hostile input: every truncation, BER forms
 * DER forbids, lengths that lie, and every single-byte mutation of the
 * good tokens (under the sanitizers, any read past a buffer fails the test).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "spnego.h"

/* impacket 0.10's SPNEGO_NegTokenInit: NTLMSSP and MS KRB5, and a NEGOTIATE as mechToken. */
static const uint8_t impacket_init[] = {
        0x60, 0x3b, 0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02, 0xa0, 0x31, 0x30, 0x2f,
        0xa0, 0x19, 0x30, 0x17, 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02,
        0x02, 0x0a, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02, 0xa2,
        0x12, 0x04, 0x10, 0x4e, 0x54, 0x4c, 0x4d, 0x53, 0x53, 0x50, 0x00, 0x01, 0x00, 0x00,
        0x00, 0x05, 0x02, 0x88, 0xa0,
};
static const uint8_t negotiate[] = {
        0x4e, 0x54, 0x4c, 0x4d, 0x53, 0x53, 0x50, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05, 0x02, 0x88, 0xa0,
};

/* impacket's SPNEGO_NegTokenResp: accept-incomplete, NTLMSSP, a CHALLENGE's first bytes. */
static const uint8_t impacket_resp[] = {
        0xa1, 0x25, 0x30, 0x23, 0xa0, 0x03, 0x0a, 0x01, 0x01, 0xa1, 0x0c, 0x06, 0x0a, 0x2b,
        0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a, 0xa2, 0x0e, 0x04, 0x0c, 0x4e,
        0x54, 0x4c, 0x4d, 0x53, 0x53, 0x50, 0x00, 0x02, 0x00, 0x00, 0x00,
};

/* MS-SPNG's NegTokenInit2, as a server's first token: NTLM, negHints, then [4] mechListMIC. */
static const uint8_t init2[] = {
        0xa0, 0x2c, 0x30, 0x2a, 0xa0, 0x0e, 0x30, 0x0c, 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04,
        0x01, 0x82, 0x37, 0x02, 0x02, 0x0a, 0xa3, 0x0e, 0x30, 0x0c, 0xa0, 0x0a, 0x1b, 0x08,
        0x69, 0x67, 0x6e, 0x6f, 0x72, 0x65, 0x20, 0x6d, 0xa4, 0x08, 0x04, 0x06, 0x4d, 0x49,
        0x43, 0x21, 0x21, 0x21,
};

static const enum spnego_mech ntlm_krb[] = { SPNEGO_MECH_NTLM, SPNEGO_MECH_MS_KRB5 };

static void impacket_tokens(void **state)
{
        struct spnego_init init;
        struct spnego_resp resp;

        (void) state;
        assert_int_equal(spnego_parse_init(impacket_init, sizeof(impacket_init), &init), 0);
        assert_int_equal(init.n_mechs, 2);
        assert_int_equal(init.mechs[0], SPNEGO_MECH_NTLM);
        assert_int_equal(init.mechs[1], SPNEGO_MECH_MS_KRB5);
        assert_int_equal(init.mech_token_len, sizeof(negotiate));
        assert_memory_equal(init.mech_token, negotiate, sizeof(negotiate));
        assert_null(init.mic);
        /* The MechTypeList, whole: from its SEQUENCE tag to its end. */
        assert_ptr_equal(init.mech_list, impacket_init + 16);
        assert_int_equal(init.mech_list_len, 25);

        assert_int_equal(spnego_parse_resp(impacket_resp, sizeof(impacket_resp), &resp), 0);
        assert_int_equal(resp.state, SPNEGO_ACCEPT_INCOMPLETE);
        assert_true(resp.has_mech);
        assert_int_equal(resp.mech, SPNEGO_MECH_NTLM);
        assert_int_equal(resp.token_len, 12);
        assert_memory_equal(resp.token, "NTLMSSP\0\2\0\0\0", 12);
        assert_null(resp.mic);
}

/* DER is canonical: what we write is byte for byte what impacket wrote. */
static void writes_the_same(void **state)
{
        const struct spnego_resp r = {
                .state = SPNEGO_ACCEPT_INCOMPLETE, .has_mech = 1, .mech = SPNEGO_MECH_NTLM,
                .token = (const uint8_t *) "NTLMSSP\0\2\0\0\0", .token_len = 12,
        };
        uint8_t *out = NULL, *list = NULL;
        size_t len = 0, list_len = 0;
        struct spnego_init init;

        (void) state;
        assert_int_equal(spnego_build_init(ntlm_krb, 2, negotiate, sizeof(negotiate), &out, &len), 0);
        assert_int_equal(len, sizeof(impacket_init));
        assert_memory_equal(out, impacket_init, len);
        free(out);
        assert_int_equal(spnego_build_resp(&r, &out, &len), 0);
        assert_int_equal(len, sizeof(impacket_resp));
        assert_memory_equal(out, impacket_resp, len);
        free(out);
        assert_int_equal(spnego_build_mech_list(ntlm_krb, 2, &list, &list_len), 0);
        assert_int_equal(spnego_parse_init(impacket_init, sizeof(impacket_init), &init), 0);
        assert_int_equal(list_len, init.mech_list_len);
        assert_memory_equal(list, init.mech_list, list_len);
        free(list);
        /* Only what is there is written: a bare accept-completed. */
        assert_int_equal(spnego_build_resp(&(struct spnego_resp) { .state = SPNEGO_ACCEPT_COMPLETED },
                                           &out, &len), 0);
        assert_int_equal(len, 9);
        assert_memory_equal(out, "\xa1\x07\x30\x05\xa0\x03\x0a\x01\x00", 9);
        free(out);
        /* A long token: long-form lengths, and back. */
        {
                uint8_t *big = calloc(1, 70000);
                struct spnego_resp back;

                assert_non_null(big);
                assert_int_equal(spnego_build_resp(&(struct spnego_resp) {
                        .state = SPNEGO_STATE_ABSENT, .token = big, .token_len = 70000 }, &out, &len), 0);
                assert_int_equal(spnego_parse_resp(out, len, &back), 0);
                assert_int_equal(back.state, SPNEGO_STATE_ABSENT);
                assert_false(back.has_mech);
                assert_int_equal(back.token_len, 70000);
                free(out);
                free(big);
        }
        assert_int_equal(spnego_build_init(NULL, 0, NULL, 0, &out, &len), -EINVAL);
        assert_int_equal(spnego_build_init((enum spnego_mech[]) { SPNEGO_MECH_OTHER }, 1, NULL, 0,
                                           &out, &len), -EINVAL);
}

static void neg_token_init2(void **state)
{
        struct spnego_init init;

        (void) state;
        assert_int_equal(spnego_parse_init(init2, sizeof(init2), &init), 0);
        assert_int_equal(init.n_mechs, 1);
        assert_int_equal(init.mechs[0], SPNEGO_MECH_NTLM);
        assert_null(init.mech_token);
        assert_int_equal(init.mic_len, 6);
        assert_memory_equal(init.mic, "MIC!!!", 6);
}

static void refused(void **state)
{
        static const struct { const uint8_t *p; size_t len; int r; } bad[] = {
                /* BER's indefinite length. */
                { (const uint8_t *) "\xa1\x80\x30\x03\xa0\x01\x00\x00\x00", 9, -EBADMSG },
                /* A long form for a short length. */
                { (const uint8_t *) "\xa1\x81\x07\x30\x05\xa0\x03\x0a\x01\x00", 10, -EBADMSG },
                /* A length past the end, a trailing byte. */
                { (const uint8_t *) "\xa1\x08\x30\x05\xa0\x03\x0a\x01\x00", 9, -EBADMSG },
                { (const uint8_t *) "\xa1\x07\x30\x05\xa0\x03\x0a\x01\x00\x00", 10, -EBADMSG },
                /* negState out of range, or two bytes long. */
                { (const uint8_t *) "\xa1\x07\x30\x05\xa0\x03\x0a\x01\x04", 9, -EBADMSG },
                { (const uint8_t *) "\xa1\x08\x30\x06\xa0\x04\x0a\x02\x00\x01", 10, -EBADMSG },
                /* An init where a resp is wanted, a high tag number. */
                { init2, sizeof(init2), -EBADMSG },
                { (const uint8_t *) "\xbf\x01\x00", 3, -EBADMSG },
                { (const uint8_t *) "", 0, -EBADMSG },
        };
        /* Kerberos's own framing: another mechanism's OID in [APPLICATION 0]. */
        static const uint8_t krb_framed[] = {
                0x60, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02, 0x01, 0x00,
        };
        /* An empty MechTypeList. */
        static const uint8_t empty_list[] = { 0xa0, 0x06, 0x30, 0x04, 0xa0, 0x02, 0x30, 0x00 };
        struct spnego_resp resp = { .token_len = 42 };
        struct spnego_init init = { .n_mechs = 42 };

        (void) state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(spnego_parse_resp(bad[i].p, bad[i].len, &resp), bad[i].r);
        assert_int_equal(resp.token_len, 42);
        assert_int_equal(spnego_parse_init(krb_framed, sizeof(krb_framed), &init), -ENOTSUP);
        assert_int_equal(spnego_parse_init(empty_list, sizeof(empty_list), &init), -EBADMSG);
        assert_int_equal(spnego_parse_init(impacket_resp, sizeof(impacket_resp), &init), -EBADMSG);
        assert_int_equal(init.n_mechs, 42);
        assert_int_equal(spnego_parse_init(NULL, 0, &init), -EINVAL);
        assert_int_equal(spnego_parse_resp(impacket_resp, sizeof(impacket_resp), NULL), -EINVAL);
}

/* Every truncation, and every byte set to each of a few values: refused or read, never past the end. */
static void hostile(void **state)
{
        const struct { const uint8_t *p; size_t len; } good[] = {
                { impacket_init, sizeof(impacket_init) }, { impacket_resp, sizeof(impacket_resp) },
                { init2, sizeof(init2) },
        };
        static const uint8_t values[] = { 0x00, 0x01, 0x7f, 0x80, 0x81, 0x84, 0xff };

        (void) state;
        for (size_t g = 0; g < sizeof(good) / sizeof(good[0]); g++) {
                for (size_t cut = 0; cut < good[g].len; cut++) {
                        uint8_t *p = malloc(cut ? cut : 1);
                        struct spnego_init init;
                        struct spnego_resp resp;

                        assert_non_null(p);
                        memcpy(p, good[g].p, cut);
                        assert_true(spnego_parse_init(p, cut, &init) < 0);
                        assert_true(spnego_parse_resp(p, cut, &resp) < 0);
                        free(p);
                }
                for (size_t at = 0; at < good[g].len; at++)
                        for (size_t v = 0; v < sizeof(values); v++) {
                                uint8_t *p = malloc(good[g].len);
                                struct spnego_init init;
                                struct spnego_resp resp;

                                assert_non_null(p);
                                memcpy(p, good[g].p, good[g].len);
                                p[at] = values[v];
                                (void) spnego_parse_init(p, good[g].len, &init);
                                (void) spnego_parse_resp(p, good[g].len, &resp);
                                free(p);
                        }
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(impacket_tokens),
                cmocka_unit_test(writes_the_same),
                cmocka_unit_test(neg_token_init2),
                cmocka_unit_test(refused),
                cmocka_unit_test(hostile),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
