/* SPDX-License-Identifier: MIT */
/*
 * Kerberos as a DCE/RPC security mechanism (sdk/librpc/dcerpc-krb5.h):
 * initiator and acceptor in one process, through the throwaway MIT KDC
 * that test-krb5.sh starts (tests/krb5-kdc.sh) and describes in the
 * environment.  Skipped (77) when run without it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dcerpc.h"
#include "dcerpc-auth.h"
#include "dcerpc-krb5.h"
#include "dcerpc-sec.h"

static const char *service, *wrong_keytab;

struct tok {
        uint8_t *b;
        size_t n;
};

static void tok_free(struct tok *t)
{
        free(t->b);
        *t = (struct tok){ 0 };
}

static int step(struct dcerpc_sec *s, const struct tok *in, struct tok *out)
{
        *out = (struct tok){ 0 };
        return s->ops->step(s->ctx, in ? in->b : NULL, in ? in->n : 0, &out->b, &out->n);
}

/* Both sides, and the three legs of DCE style with the counts dcerpc-krb5.h promises. */
static void establish(struct dcerpc_sec *ini, struct dcerpc_sec *acc)
{
        struct tok req, rep, rep2, none;

        assert_int_equal(dcerpc_sec_krb5_initiator(service, ini), 0);
        assert_int_equal(dcerpc_sec_krb5_acceptor(NULL, acc), 0);
        assert_string_equal(ini->ops->name, "Kerberos");
        assert_int_equal(step(ini, NULL, &req), DCERPC_SEC_CONTINUE);          /* AP-REQ */
        assert_true(req.n > 0);
        assert_null(acc->ops->peer(acc->ctx));
        assert_null(acc->ops->mech_ctx(acc->ctx));
        assert_int_equal(step(acc, &req, &rep), DCERPC_SEC_CONTINUE);          /* AP-REP */
        assert_true(rep.n > 0);
        assert_null(acc->ops->peer(acc->ctx));
        assert_int_equal(step(ini, &rep, &rep2), DCERPC_SEC_DONE);             /* AP-REP */
        assert_true(rep2.n > 0);
        assert_int_equal(step(acc, &rep2, &none), DCERPC_SEC_DONE);
        assert_null(none.b);
        assert_int_equal(none.n, 0);
        assert_non_null(ini->ops->mech_ctx(ini->ctx));
        assert_non_null(acc->ops->mech_ctx(acc->ctx));
        tok_free(&req);
        tok_free(&rep);
        tok_free(&rep2);
}

static void established(void **state)
{
        (void)state;
        struct dcerpc_sec ini, acc;
        struct tok t;
        char want[128];

        establish(&ini, &acc);
        /* Of our own realm (the service principal's): the bare name, as Windows'. */
        snprintf(want, sizeof(want), "%s", getenv("KRB5_TEST_USER"));
        assert_string_equal(want, "user");
        assert_string_equal(acc.ops->peer(acc.ctx), want);
        assert_null(ini.ops->peer(ini.ctx));
        /* AES only: "new" SPNEGO, whose mechListMIC is a must. */
        assert_int_equal(acc.ops->mic_required(acc.ctx), 1);
        assert_int_equal(ini.ops->mic_required(ini.ctx), 1);
        /* Nothing after DONE. */
        assert_int_equal(step(&acc, NULL, &t), -EPROTO);
        assert_int_equal(step(&ini, NULL, &t), -EPROTO);
        dcerpc_sec_free(&ini);
        dcerpc_sec_free(&acc);
        dcerpc_sec_free(NULL);
}

/* An acceptor never starts, and refuses what is no AP-REQ; an initiator starts once. */
static void out_of_turn(void **state)
{
        (void)state;
        struct dcerpc_sec ini, acc;
        struct tok t, junk = { (uint8_t *)"\x60\x03\x06\x01\x00", 5 };

        assert_int_equal(dcerpc_sec_krb5_acceptor(NULL, &acc), 0);
        assert_int_equal(step(&acc, NULL, &t), -EPROTO);
        dcerpc_sec_free(&acc);
        assert_int_equal(dcerpc_sec_krb5_acceptor(NULL, &acc), 0);
        int r = step(&acc, &junk, &t);
        assert_true(r == -EBADMSG || r == -EACCES);
        dcerpc_sec_free(&acc);
        assert_int_equal(dcerpc_sec_krb5_initiator(service, &ini), 0);
        assert_int_equal(step(&ini, &junk, &t), -EPROTO);
        dcerpc_sec_free(&ini);
        assert_int_equal(dcerpc_sec_krb5_initiator("", &ini), -EINVAL);
}

/* ---- protected PDUs ---- */

static struct dcerpc_auth auth_of(struct dcerpc_sec *s, uint8_t level, bool header_sign)
{
        return (struct dcerpc_auth){
                .mech = level == DCERPC_AUTH_LEVEL_PRIVACY ? s->ops->mech
                                                           : &dcerpc_krb5_integrity_mech,
                .ctx = s->ops->mech_ctx(s->ctx),
                .auth_type = DCERPC_AUTH_TYPE_KRB5,
                .auth_level = level,
                .context_id = 7,
                .header_sign = header_sign,
        };
}

/* The stubs sent: every call's first bytes of these, no two neighbours alike. */
static uint8_t stub[5000];

static void call(const struct dcerpc_auth *tx, uint8_t ptype, size_t size, struct tok *ret)
{
        assert_true(size <= sizeof(stub));
        *ret = (struct tok){ 0 };
        assert_int_equal(dcerpc_auth_append_call(tx, &ret->b, &ret->n, ptype, 9, 0, 3, stub, size,
                                                 DCERPC_MIN_FRAG), 0);
}

/*
 * A call of the first size bytes of stub from tx to rx, fragment by fragment: the
 * stub sealed in transit at PKT_PRIVACY, plain at PKT_INTEGRITY, and
 * verified, and the same, on the other side.
 */
static void round_trip(const struct dcerpc_auth *tx, const struct dcerpc_auth *rx, uint8_t ptype,
                       size_t size)
{
        struct tok out;
        size_t got = 0;

        call(tx, ptype, size, &out);
        for (size_t off = 0; off < out.n;) {
                struct dcerpc_auth_view v;
                uint8_t *f = out.b + off;
                size_t n = f[8] | f[9] << 8;

                assert_true(off + n <= out.n);
                assert_int_equal(dcerpc_auth_parse(f, n, &v), 0);
                assert_int_equal(v.auth_len, tx->mech->sig_size(tx->ctx));
                /*
                 * Sealed bytes equal plain ones by chance (one byte in 256), so
                 * only a stub of 8 bytes or more tells sealed from plain.
                 */
                if (v.stub_len >= 8)
                        assert_int_equal(memcmp(f + v.stub_off, stub + got, v.stub_len) == 0,
                                         tx->auth_level == DCERPC_AUTH_LEVEL_INTEGRITY);
                assert_int_equal(dcerpc_auth_verify(rx, f, n, &v), 0);
                if (v.stub_len)
                        assert_memory_equal(f + v.stub_off, stub + got, v.stub_len);
                got += v.stub_len;
                off += n;
        }
        assert_int_equal(got, size);
        free(out.b);
}

/* Requests one way, responses the other, at both levels, with and without header signing. */
static void protected_calls(void **state)
{
        (void)state;
        static const size_t sizes[] = { 0, 1, 17, 5000 };

        for (uint8_t level = DCERPC_AUTH_LEVEL_INTEGRITY; level <= DCERPC_AUTH_LEVEL_PRIVACY;
             level++) {
                for (int hs = 0; hs < 2; hs++) {
                        struct dcerpc_sec ini, acc;

                        establish(&ini, &acc);
                        struct dcerpc_auth cli = auth_of(&ini, level, hs);
                        struct dcerpc_auth srv = auth_of(&acc, level, hs);
                        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                                round_trip(&cli, &srv, DCERPC_REQUEST, sizes[i]);
                                round_trip(&srv, &cli, DCERPC_RESPONSE, sizes[i]);
                        }
                        dcerpc_sec_free(&ini);
                        dcerpc_sec_free(&acc);
                }
        }
}

/*
 * RFC 4121 with AES in DCE style, as Windows sends it: a wrap token of 76
 * bytes (header, confounder, a block of pad, encrypted header copy,
 * checksum), a MIC of 28 (header, checksum).
 */
static void signature_sizes(void **state)
{
        (void)state;
        struct dcerpc_sec ini, acc;

        establish(&ini, &acc);
        struct dcerpc_auth priv = auth_of(&ini, DCERPC_AUTH_LEVEL_PRIVACY, true);
        struct dcerpc_auth integ = auth_of(&acc, DCERPC_AUTH_LEVEL_INTEGRITY, true);
        size_t wrap = priv.mech->sig_size(priv.ctx), mic = integ.mech->sig_size(integ.ctx);
        assert_int_equal(wrap, 16 + 16 + 16 + 16 + 12);
        assert_int_equal(mic, 16 + 12);         /* aes256-cts-hmac-sha1-96, the keytab's first */
        dcerpc_sec_free(&ini);
        dcerpc_sec_free(&acc);
}

static int verify_copy(const struct dcerpc_auth *rx, const struct tok *f)
{
        struct dcerpc_auth_view v;
        uint8_t *c = malloc(f->n);

        assert_non_null(c);
        memcpy(c, f->b, f->n);
        int r = dcerpc_auth_verify(rx, c, f->n, &v);
        free(c);
        return r;
}

/*
 * A flipped stub byte is refused and leaves the receiver where it was; a
 * flipped call_id only with header signing; the intact PDU passes once,
 * and its replay is refused.
 */
static void tamper_and_replay(uint8_t level, bool header_sign, bool to_server)
{
        struct dcerpc_sec ini, acc;
        struct dcerpc_auth_view v;
        struct tok f;

        establish(&ini, &acc);
        struct dcerpc_auth cli = auth_of(&ini, level, header_sign);
        struct dcerpc_auth srv = auth_of(&acc, level, header_sign);
        const struct dcerpc_auth *tx = to_server ? &cli : &srv, *rx = to_server ? &srv : &cli;
        call(tx, to_server ? DCERPC_REQUEST : DCERPC_RESPONSE, 40, &f);
        assert_int_equal(dcerpc_auth_parse(f.b, f.n, &v), 0);

        f.b[v.stub_off + 3] ^= 0x01;
        assert_int_equal(verify_copy(rx, &f), -EKEYREJECTED);
        f.b[v.stub_off + 3] ^= 0x01;
        f.b[v.auth_off + v.auth_len - 1] ^= 0x80;
        assert_int_equal(verify_copy(rx, &f), -EKEYREJECTED);
        f.b[v.auth_off + v.auth_len - 1] ^= 0x80;
        f.b[12] ^= 0x01;
        assert_int_equal(verify_copy(rx, &f), header_sign ? -EKEYREJECTED : 0);
        f.b[12] ^= 0x01;
        if (header_sign)
                assert_int_equal(verify_copy(rx, &f), 0);
        assert_int_equal(verify_copy(rx, &f), -EKEYREJECTED);
        free(f.b);
        dcerpc_sec_free(&ini);
        dcerpc_sec_free(&acc);
}

static void tampered_and_replayed(void **state)
{
        (void)state;
        for (int hs = 0; hs < 2; hs++)
                for (int to_server = 0; to_server < 2; to_server++) {
                        tamper_and_replay(DCERPC_AUTH_LEVEL_PRIVACY, hs, to_server);
                        tamper_and_replay(DCERPC_AUTH_LEVEL_INTEGRITY, hs, to_server);
                }
}

/* The second PDU before the first: refused. */
static void reordered(void **state)
{
        (void)state;
        struct dcerpc_sec ini, acc;
        struct tok a, b;

        establish(&ini, &acc);
        struct dcerpc_auth cli = auth_of(&ini, DCERPC_AUTH_LEVEL_PRIVACY, true);
        struct dcerpc_auth srv = auth_of(&acc, DCERPC_AUTH_LEVEL_PRIVACY, true);
        call(&cli, DCERPC_REQUEST, 40, &a);
        call(&cli, DCERPC_REQUEST, 40, &b);
        assert_int_equal(verify_copy(&srv, &b), -EKEYREJECTED);
        free(a.b);
        free(b.b);
        dcerpc_sec_free(&ini);
        dcerpc_sec_free(&acc);
}

/* ---- credentials refused, and missing ---- */

/* A keytab with the service's principal and kvno but another key. */
static void wrong_keytab_refused(void **state)
{
        (void)state;
        struct dcerpc_sec ini, acc;
        struct tok req, rep = { 0 };

        assert_int_equal(dcerpc_sec_krb5_initiator(service, &ini), 0);
        assert_int_equal(dcerpc_sec_krb5_acceptor(wrong_keytab, &acc), 0);
        assert_int_equal(step(&ini, NULL, &req), DCERPC_SEC_CONTINUE);
        assert_int_equal(step(&acc, &req, &rep), -EACCES);
        assert_null(rep.b);
        assert_null(acc.ops->peer(acc.ctx));
        /* And the context is dead. */
        assert_int_equal(step(&acc, &req, &rep), -EPROTO);
        tok_free(&req);
        dcerpc_sec_free(&ini);
        dcerpc_sec_free(&acc);
}

static void no_credentials(void **state)
{
        (void)state;
        struct dcerpc_sec s = { 0 };
        char *cc = strdup(getenv("KRB5CCNAME"));

        assert_non_null(cc);
        assert_int_equal(dcerpc_sec_krb5_acceptor("FILE:/nonexistent/perflib.keytab", &s), -ENOKEY);
        assert_null(s.ops);
        setenv("KRB5CCNAME", "FILE:/nonexistent/perflib.ccache", 1);
        assert_int_equal(dcerpc_sec_krb5_initiator(service, &s), -ENOKEY);
        assert_null(s.ops);
        setenv("KRB5CCNAME", cc, 1);
        free(cc);
}

/* ---- SPNEGO's mechListMIC ---- */

static void mech_list_mic(void **state)
{
        (void)state;
        static const uint8_t list[] = { 0x30, 0x0b, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7,
                                        0x12, 0x01, 0x02, 0x02 };
        struct dcerpc_sec ini, acc;
        struct tok mic, back;

        assert_int_equal(dcerpc_sec_krb5_initiator(service, &ini), 0);
        assert_int_equal(ini.ops->get_mic(ini.ctx, list, sizeof(list), &mic.b, &mic.n), -EPROTO);
        dcerpc_sec_free(&ini);

        establish(&ini, &acc);
        assert_int_equal(ini.ops->get_mic(ini.ctx, list, sizeof(list), &mic.b, &mic.n), 0);
        assert_int_equal(acc.ops->verify_mic(acc.ctx, list, sizeof(list) - 1, mic.b, mic.n),
                         -EKEYREJECTED);
        assert_int_equal(acc.ops->verify_mic(acc.ctx, list, sizeof(list), mic.b, mic.n), 0);
        assert_int_equal(acc.ops->verify_mic(acc.ctx, list, sizeof(list), mic.b, mic.n),
                         -EKEYREJECTED);                                /* replayed */
        assert_int_equal(acc.ops->get_mic(acc.ctx, list, sizeof(list), &back.b, &back.n), 0);
        assert_int_equal(ini.ops->verify_mic(ini.ctx, list, sizeof(list), back.b, back.n), 0);
        /* The MICs took a sequence number each way: PDUs still pass after them. */
        struct dcerpc_auth cli = auth_of(&ini, DCERPC_AUTH_LEVEL_PRIVACY, true);
        struct dcerpc_auth srv = auth_of(&acc, DCERPC_AUTH_LEVEL_PRIVACY, true);
        round_trip(&cli, &srv, DCERPC_REQUEST, 100);
        round_trip(&srv, &cli, DCERPC_RESPONSE, 100);
        tok_free(&mic);
        tok_free(&back);
        dcerpc_sec_free(&ini);
        dcerpc_sec_free(&acc);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(established),
                cmocka_unit_test(out_of_turn),
                cmocka_unit_test(protected_calls),
                cmocka_unit_test(signature_sizes),
                cmocka_unit_test(tampered_and_replayed),
                cmocka_unit_test(reordered),
                cmocka_unit_test(wrong_keytab_refused),
                cmocka_unit_test(no_credentials),
                cmocka_unit_test(mech_list_mic),
        };

        for (size_t i = 0; i < sizeof(stub); i++)
                stub[i] = (uint8_t)(i * 7 + i / 251);
        service = getenv("KRB5_TEST_SERVICE");
        wrong_keytab = getenv("KRB5_TEST_WRONG_KEYTAB");
        if (!service || !wrong_keytab || !getenv("KRB5CCNAME")) {
                printf("test-krb5: SKIP: no test realm (run it through test-krb5.sh)\n");
                return 77;
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
