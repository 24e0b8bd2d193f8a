/* SPDX-License-Identifier: MIT */
/*
 * NTLM (sdk/librpc/ntlm.h) against the test vectors of MS-NLMP section 4.2
 * (user "User", domain "Domain", password "Password"), and what it
 * refuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <cmocka.h>

#include "dcerpc-ntlm.h"
#include "dcerpc.h"
#include "ntlm.h"

/* MS-NLMP 4.2.2.1.2 (and 4.2.4.1.1): NTOWFv1("Password"). */
static const uint8_t password_hash[NTLM_HASH_SIZE] = {
        0xa4, 0xf4, 0x9c, 0x40, 0x65, 0x10, 0xbd, 0xca,
        0xb6, 0x82, 0x4e, 0xe7, 0xc3, 0x0f, 0xd8, 0x52,
};

static void nt_hash(void **state)
{
        uint8_t h[NTLM_HASH_SIZE], e[NTLM_HASH_SIZE];
        char long_password[NTLM_PASSWORD_MAX + 2];

        (void) state;
        assert_int_equal(ntlm_nt_hash("Password", h), 0);
        assert_memory_equal(h, password_hash, sizeof(h));
        /* The empty password's: MD4 of nothing. */
        assert_int_equal(ntlm_nt_hash("", e), 0);
        assert_memory_equal(e, "\x31\xd6\xcf\xe0\xd1\x6a\xe9\x31\xb7\x3c\x59\xd7\xe0\xc0\x89\xc0",
                            sizeof(e));
        /* Not UTF-8, too long, no place to put it: refused, nothing written. */
        memcpy(e, h, sizeof(e));
        assert_int_equal(ntlm_nt_hash("\xff", e), -EINVAL);
        memset(long_password, 'a', sizeof(long_password) - 1);
        long_password[sizeof(long_password) - 1] = '\0';
        assert_int_equal(ntlm_nt_hash(long_password, e), -EINVAL);
        assert_memory_equal(e, h, sizeof(e));
        assert_int_equal(ntlm_nt_hash(NULL, e), -EINVAL);
        assert_int_equal(ntlm_nt_hash("x", NULL), -EINVAL);
}

/* MS-NLMP 4.2.4: user "User", domain "Domain", random session key 0x55s. */
static const uint8_t server_challenge[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
static const uint8_t exported_key[16] = {
        0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55,
        0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55,
};
/* 4.2.4.1.3's "temp": time 0, client challenge 0xaas, the server's AV pairs. */
static const uint8_t temp[] = {
        0x01, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0, 0, 0, 0,
        0x02, 0x00, 0x0c, 0x00, 'D', 0, 'o', 0, 'm', 0, 'a', 0, 'i', 0, 'n', 0,
        0x01, 0x00, 0x0c, 0x00, 'S', 0, 'e', 0, 'r', 0, 'v', 0, 'e', 0, 'r', 0,
        0, 0, 0, 0, 0, 0, 0, 0,
};
static const uint8_t plaintext[18] = {
        'P', 0, 'l', 0, 'a', 0, 'i', 0, 'n', 0, 't', 0, 'e', 0, 'x', 0, 't', 0,
};

static void v2_vectors(void **state)
{
        static const uint8_t ntowfv2[16] = {
                0x0c, 0x86, 0x8a, 0x40, 0x3b, 0xfd, 0x7a, 0x93,
                0xa3, 0x00, 0x1e, 0xf2, 0x2e, 0xf0, 0x2e, 0x3f,
        };
        static const uint8_t proof[16] = {
                0x68, 0xcd, 0x0a, 0xb8, 0x51, 0xe5, 0x1c, 0x96,
                0xaa, 0xbc, 0x92, 0x7b, 0xeb, 0xef, 0x6a, 0x1c,
        };
        static const uint8_t base_key[16] = {
                0x8d, 0xe4, 0x0c, 0xca, 0xdb, 0xc1, 0x4a, 0x82,
                0xf1, 0x5c, 0xb0, 0xad, 0x0d, 0xe9, 0x5c, 0xa3,
        };
        static const uint8_t encrypted_key[16] = {
                0xc5, 0xda, 0xd2, 0x54, 0x4f, 0xc9, 0x79, 0x90,
                0x94, 0xce, 0x1c, 0xe9, 0x0b, 0xc9, 0xd0, 0x3e,
        };
        uint8_t k[16], p[16], b[16], x[16];

        (void) state;
        assert_int_equal(ntlm_ntowfv2(password_hash, "User", "Domain", k), 0);
        assert_memory_equal(k, ntowfv2, 16);
        /* Upper(user): the case the client typed does not matter. */
        assert_int_equal(ntlm_ntowfv2(password_hash, "user", "Domain", k), 0);
        assert_memory_equal(k, ntowfv2, 16);
        ntlm_v2_proof(k, server_challenge, temp, sizeof(temp), p, b);
        assert_memory_equal(p, proof, 16);
        assert_memory_equal(b, base_key, 16);
        ntlm_key_exchange(b, exported_key, x);
        assert_memory_equal(x, encrypted_key, 16);
        ntlm_key_exchange(b, encrypted_key, x);
        assert_memory_equal(x, exported_key, 16);
        assert_int_equal(ntlm_ntowfv2(password_hash, "\xff", "Domain", k), -EINVAL);
}

/* 4.2.4.4: the client seals "Plaintext" (UTF-16LE) with sequence number 0. */
static void seal_vectors(void **state)
{
        static const uint8_t sign_key[16] = {
                0x47, 0x88, 0xdc, 0x86, 0x1b, 0x47, 0x82, 0xf3,
                0x5d, 0x43, 0xfd, 0x98, 0xfe, 0x1a, 0x2d, 0x39,
        };
        static const uint8_t seal_key[16] = {
                0x59, 0xf6, 0x00, 0x97, 0x3c, 0xc4, 0x96, 0x0a,
                0x25, 0x48, 0x0a, 0x7c, 0x19, 0x6e, 0x4c, 0x58,
        };
        static const uint8_t sealed[18] = {
                0x54, 0xe5, 0x01, 0x65, 0xbf, 0x19, 0x36, 0xdc, 0x99,
                0x60, 0x20, 0xc1, 0x81, 0x1b, 0x0f, 0x06, 0xfb, 0x5f,
        };
        static const uint8_t signature[16] = {
                0x01, 0x00, 0x00, 0x00, 0x7f, 0xb3, 0x8e, 0xc5,
                0xc5, 0x5d, 0x49, 0x76, 0x00, 0x00, 0x00, 0x00,
        };
        struct ntlm_session *client, *server;
        uint8_t sk[16], ek[16], data[18], sig[16];

        (void) state;
        ntlm_direction_keys(exported_key, true, sk, ek);
        assert_memory_equal(sk, sign_key, 16);
        assert_memory_equal(ek, seal_key, 16);
        ntlm_direction_keys(exported_key, false, sk, ek);
        assert_memory_not_equal(sk, sign_key, 16);
        assert_memory_not_equal(ek, seal_key, 16);

        assert_int_equal(ntlm_session_new(exported_key, true, &client), 0);
        assert_int_equal(ntlm_session_new(exported_key, false, &server), 0);
        memcpy(data, plaintext, sizeof(data));
        assert_int_equal(ntlm_seal(client, data, sizeof(data), sig), 0);
        assert_memory_equal(data, sealed, sizeof(data));
        assert_memory_equal(sig, signature, sizeof(sig));
        assert_int_equal(ntlm_unseal(server, data, sizeof(data), sig, sizeof(sig)), 0);
        assert_memory_equal(data, plaintext, sizeof(data));
        ntlm_session_free(client);
        ntlm_session_free(server);
        ntlm_session_free(NULL);
}

/* The accounts: "User" with "Password"; anyone else unknown. */
static int lookup(void *userdata, const char *user, const char *domain,
                  uint8_t ret_hash[NTLM_HASH_SIZE])
{
        int *calls = userdata;

        (void) domain;
        (*calls)++;
        if (strcmp(user, "User") != 0)
                return -ENOENT;
        memcpy(ret_hash, password_hash, NTLM_HASH_SIZE);
        return 0;
}

struct pair {
        struct ntlm_client *client;
        struct ntlm_server *server;
        int lookups;
        uint8_t *auth;
        size_t auth_len;
};

/* NEGOTIATE and CHALLENGE; leaves the AUTHENTICATE in p->auth. */
static void start(struct pair *p, const char *user, const char *password)
{
        uint8_t hash[NTLM_HASH_SIZE], *neg, *chal;
        size_t neg_len, chal_len;

        memset(p, 0, sizeof(*p));
        assert_int_equal(ntlm_nt_hash(password, hash), 0);
        assert_int_equal(ntlm_client_new(user, "Domain", hash, &p->client), 0);
        assert_int_equal(ntlm_server_new("Server", lookup, &p->lookups, &p->server), 0);
        assert_int_equal(ntlm_client_step(p->client, NULL, 0, &neg, &neg_len), 0);
        assert_int_equal(ntlm_server_step(p->server, neg, neg_len, &chal, &chal_len), 0);
        assert_int_equal(ntlm_client_step(p->client, chal, chal_len, &p->auth, &p->auth_len), 0);
        free(neg);
        free(chal);
}

static int finish(struct pair *p)
{
        uint8_t *out = (uint8_t *) "untouched";
        size_t out_len = 42;
        int r = ntlm_server_step(p->server, p->auth, p->auth_len, &out, &out_len);

        if (r == 0) {
                assert_null(out);
                assert_int_equal(out_len, 0);
        }
        return r;
}

static void stop(struct pair *p)
{
        free(p->auth);
        ntlm_client_free(p->client);
        ntlm_server_free(p->server);
}

static void round_trip(void **state)
{
        struct ntlm_session *cs, *ss;
        uint8_t pdu[64], copy[64], sig[NTLM_SIG_SIZE];
        struct pair p;

        (void) state;
        start(&p, "User", "Password");
        assert_null(ntlm_server_session(p.server));
        assert_null(ntlm_server_user(p.server));
        assert_int_equal(finish(&p), 0);
        assert_string_equal(ntlm_server_user(p.server), "User");
        cs = ntlm_client_session(p.client);
        ss = ntlm_server_session(p.server);
        assert_non_null(cs);
        assert_non_null(ss);

        /* Both ways, twice each: the sequence numbers and RC4 streams go on. */
        for (int i = 0; i < 2; i++) {
                memcpy(pdu, plaintext, sizeof(plaintext));
                assert_int_equal(ntlm_seal(cs, pdu, sizeof(plaintext), sig), 0);
                assert_memory_not_equal(pdu, plaintext, sizeof(plaintext));
                assert_int_equal(sig[12], i);
                assert_int_equal(ntlm_unseal(ss, pdu, sizeof(plaintext), sig, sizeof(sig)), 0);
                assert_memory_equal(pdu, plaintext, sizeof(plaintext));
                assert_int_equal(ntlm_seal(ss, pdu, sizeof(plaintext), sig), 0);
                assert_int_equal(ntlm_unseal(cs, pdu, sizeof(plaintext), sig, sizeof(sig)), 0);
                assert_memory_equal(pdu, plaintext, sizeof(plaintext));
        }
        /* Integrity only: the data travels as it is. */
        assert_int_equal(ntlm_sign(cs, plaintext, sizeof(plaintext), sig), 0);
        assert_int_equal(ntlm_verify(ss, plaintext, sizeof(plaintext), sig, sizeof(sig)), 0);

        /* Header signing: all 64 bytes signed, bytes 16..47 sealed. */
        for (size_t i = 0; i < sizeof(pdu); i++)
                pdu[i] = (uint8_t) i;
        memcpy(copy, pdu, sizeof(pdu));
        assert_int_equal(ntlm_seal_pdu(ss, pdu, sizeof(pdu), pdu + 16, 32, sig), 0);
        assert_memory_equal(pdu, copy, 16);
        assert_memory_equal(pdu + 48, copy + 48, 16);
        assert_memory_not_equal(pdu + 16, copy + 16, 32);
        assert_int_equal(ntlm_unseal_pdu(cs, pdu, sizeof(pdu), pdu + 16, 32, sig, sizeof(sig)), 0);
        assert_memory_equal(pdu, copy, sizeof(pdu));
        stop(&p);
}

static void refused_credentials(void **state)
{
        struct pair p;

        (void) state;
        start(&p, "User", "wrong");
        assert_int_equal(finish(&p), -EACCES);
        assert_int_equal(p.lookups, 1);
        assert_null(ntlm_server_session(p.server));
        assert_null(ntlm_server_user(p.server));
        /* The context is over: a second try is not a second chance. */
        assert_int_equal(finish(&p), -EBADMSG);
        stop(&p);

        start(&p, "Nobody", "Password");
        assert_int_equal(finish(&p), -EACCES);
        stop(&p);

        /* The user's name is matched as given: only NTOWFv2 folds case. */
        start(&p, "user", "Password");
        assert_int_equal(finish(&p), -EACCES);
        stop(&p);
}

/*
 * A judge other than the hash lookup (Samba's winbind): "Samba" with
 * "Winbind" is known there, checked as winbind checks NTLMv2, and gives the
 * session base key; anyone else is unknown.
 */
static int verify_calls;
static int verify(void *userdata, const char *user, const char *domain,
                  const uint8_t challenge[8], const uint8_t *nt, size_t nt_len,
                  uint8_t ret_base[16])
{
        uint8_t hash[NTLM_HASH_SIZE], key[16], proof[16], base[16];

        (void) userdata;
        verify_calls++;
        if (strcmp(user, "Samba") != 0)
                return -ENOENT;
        assert_true(nt_len > 16);
        assert_int_equal(ntlm_nt_hash("Winbind", hash), 0);
        assert_int_equal(ntlm_ntowfv2(hash, user, domain, key), 0);
        ntlm_v2_proof(key, challenge, nt + 16, nt_len - 16, proof, base);
        if (memcmp(proof, nt, 16) != 0)
                return -EACCES;
        memcpy(ret_base, base, 16);
        return 0;
}

static void verified_elsewhere(void **state)
{
        static const struct { const char *user, *password; int want, verified; } cases[] = {
                { "Samba", "Winbind", 0, 1 },
                { "Samba", "wrong", -EACCES, 1 },
                { "Nobody", "Winbind", -EACCES, 1 },
                { "User", "Password", 0, 0 },   /* the lookup's own: never asked */
        };
        uint8_t data[sizeof(plaintext)], sig[NTLM_SIG_SIZE];
        struct pair p;

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                verify_calls = 0;
                start(&p, cases[i].user, cases[i].password);
                ntlm_server_set_verify(p.server, verify, NULL);
                assert_int_equal(finish(&p), cases[i].want);
                assert_int_equal(verify_calls, cases[i].verified);
                if (cases[i].want == 0) {
                        assert_string_equal(ntlm_server_user(p.server), cases[i].user);
                        /* The keys agree: what the client seals, the server opens. */
                        memcpy(data, plaintext, sizeof(data));
                        assert_int_equal(ntlm_seal(ntlm_client_session(p.client), data,
                                                   sizeof(data), sig), 0);
                        assert_int_equal(ntlm_unseal(ntlm_server_session(p.server), data,
                                                     sizeof(data), sig, sizeof(sig)), 0);
                        assert_memory_equal(data, plaintext, sizeof(data));
                } else
                        assert_null(ntlm_server_session(p.server));
                stop(&p);
        }
}

/* One session pair, established. */
static void established(struct pair *p)
{
        start(p, "User", "Password");
        assert_int_equal(finish(p), 0);
}

static void tampered_messages(void **state)
{
        uint8_t a[18], b[18], sig_a[16], sig_b[16];
        struct ntlm_session *cs, *ss;
        struct pair p;

        (void) state;
        /* A flipped byte in a sealed message; then the session is closed. */
        established(&p);
        cs = ntlm_client_session(p.client);
        ss = ntlm_server_session(p.server);
        memcpy(a, plaintext, sizeof(a));
        assert_int_equal(ntlm_seal(cs, a, sizeof(a), sig_a), 0);
        a[5] ^= 1;
        assert_int_equal(ntlm_unseal(ss, a, sizeof(a), sig_a, sizeof(sig_a)), -EBADMSG);
        memcpy(b, plaintext, sizeof(b));
        assert_int_equal(ntlm_seal(cs, b, sizeof(b), sig_b), 0);
        assert_int_equal(ntlm_unseal(ss, b, sizeof(b), sig_b, sizeof(sig_b)), -EBADMSG);
        stop(&p);

        /* A replayed message: right once, refused the second time. */
        established(&p);
        cs = ntlm_client_session(p.client);
        ss = ntlm_server_session(p.server);
        memcpy(a, plaintext, sizeof(a));
        assert_int_equal(ntlm_seal(cs, a, sizeof(a), sig_a), 0);
        memcpy(b, a, sizeof(b));
        assert_int_equal(ntlm_unseal(ss, a, sizeof(a), sig_a, sizeof(sig_a)), 0);
        assert_int_equal(ntlm_unseal(ss, b, sizeof(b), sig_a, sizeof(sig_a)), -EBADMSG);
        stop(&p);

        /* A truncated signature, and a signed message altered. */
        established(&p);
        cs = ntlm_client_session(p.client);
        ss = ntlm_server_session(p.server);
        memcpy(a, plaintext, sizeof(a));
        assert_int_equal(ntlm_seal(cs, a, sizeof(a), sig_a), 0);
        assert_int_equal(ntlm_unseal(ss, a, sizeof(a), sig_a, 15), -EBADMSG);
        stop(&p);
        established(&p);
        cs = ntlm_client_session(p.client);
        ss = ntlm_server_session(p.server);
        assert_int_equal(ntlm_sign(ss, plaintext, sizeof(plaintext), sig_a), 0);
        memcpy(a, plaintext, sizeof(a));
        a[17] ^= 0x80;
        assert_int_equal(ntlm_verify(cs, a, sizeof(a), sig_a, sizeof(sig_a)), -EBADMSG);
        stop(&p);
}

/* A fresh server fed one NEGOTIATE. */
static int negotiate(const uint8_t *msg, size_t len)
{
        struct ntlm_server *s;
        uint8_t *out = NULL;
        size_t out_len;
        int calls = 0, r;

        assert_int_equal(ntlm_server_new("Server", lookup, &calls, &s), 0);
        r = ntlm_server_step(s, msg, len, &out, &out_len);
        assert_true(r < 0 || out_len >= 56);
        free(out);
        ntlm_server_free(s);
        return r;
}

static void malformed_negotiate(void **state)
{
        /* impacket's 32 bytes at packet privacy: KEY_EXCH, 128, ESS, SEAL, SIGN... */
        uint8_t m[32] = { 'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 1, 0, 0, 0,
                          0xb7, 0x82, 0x08, 0xe2 };

        (void) state;
        assert_int_equal(negotiate(m, sizeof(m)), 0);
        /* Only the signature, type and flags: older clients' form. */
        assert_int_equal(negotiate(m, 16), 0);
        assert_int_equal(negotiate(m, 15), -EBADMSG);
        assert_int_equal(negotiate(NULL, 0), -EBADMSG);
        m[8] = 3;
        assert_int_equal(negotiate(m, sizeof(m)), -EBADMSG);
        m[8] = 1;
        m[0] = 'n';
        assert_int_equal(negotiate(m, sizeof(m)), -EBADMSG);
        m[0] = 'N';
        /* No key exchange; then LM and NTLMv1 only (no extended session security). */
        m[15] = 0xa2;
        assert_int_equal(negotiate(m, sizeof(m)), -EPROTO);
        m[15] = 0xe2;
        m[14] = 0x00;
        assert_int_equal(negotiate(m, sizeof(m)), -EPROTO);
}

/* Sets the field at `at` of the AUTHENTICATE (length and offset). */
static void set_field(struct pair *p, size_t at, uint16_t len, uint32_t off)
{
        p->auth[at] = len & 0xff, p->auth[at + 1] = len >> 8;
        p->auth[at + 2] = len & 0xff, p->auth[at + 3] = len >> 8;
        for (int i = 0; i < 4; i++)
                p->auth[at + 4 + i] = (off >> (8 * i)) & 0xff;
}

static uint32_t field_offset(const struct pair *p, size_t at)
{
        return p->auth[at + 4] | p->auth[at + 5] << 8 | (uint32_t) p->auth[at + 6] << 16;
}

static void malformed_authenticate(void **state)
{
        struct pair p;
        size_t len;

        (void) state;
        /* Lengths past the end, offsets into the header: at user (36). */
        start(&p, "User", "Password");
        set_field(&p, 36, 0xffff, field_offset(&p, 36));
        assert_int_equal(finish(&p), -EBADMSG);
        stop(&p);
        start(&p, "User", "Password");
        set_field(&p, 36, 8, 0xfffffffc);
        assert_int_equal(finish(&p), -EBADMSG);
        stop(&p);
        start(&p, "User", "Password");
        set_field(&p, 36, 8, 8);
        assert_int_equal(finish(&p), -EBADMSG);
        stop(&p);
        /* Into the MIC (72..87) the client announced. */
        start(&p, "User", "Password");
        set_field(&p, 28, 8, 72);
        assert_int_equal(finish(&p), -EBADMSG);
        stop(&p);
        /* An NTLMv1 response (24 bytes) is refused as bad credentials. */
        start(&p, "User", "Password");
        set_field(&p, 20, 24, field_offset(&p, 20));
        assert_int_equal(finish(&p), -EACCES);
        assert_int_equal(p.lookups, 0);
        stop(&p);

        /* Every truncation, every flipped bit of every byte: refused, no crash. */
        start(&p, "User", "Password");
        len = p.auth_len;
        stop(&p);
        for (size_t n = 0; n < len; n++) {
                start(&p, "User", "Password");
                p.auth_len = n;
                assert_true(finish(&p) < 0);
                stop(&p);
        }
        for (size_t i = 0; i < len; i++) {
                start(&p, "User", "Password");
                p.auth[i] ^= (uint8_t) (1u << (i % 8));
                assert_true(finish(&p) < 0);
                stop(&p);
        }
}

static void client_refuses(void **state)
{
        uint8_t hash[NTLM_HASH_SIZE], *neg, *chal, *out;
        struct ntlm_server *s;
        struct ntlm_client *c;
        size_t neg_len, chal_len, out_len;
        int calls = 0;

        (void) state;
        assert_int_equal(ntlm_nt_hash("Password", hash), 0);
        assert_int_equal(ntlm_client_new("", "Domain", hash, &c), -EINVAL);
        assert_int_equal(ntlm_server_new("Server", lookup, &calls, &s), 0);
        assert_int_equal(ntlm_client_new("User", "Domain", hash, &c), 0);
        /* A CHALLENGE before our NEGOTIATE. */
        assert_int_equal(ntlm_client_step(c, "NTLMSSP", 8, &out, &out_len), -EBADMSG);
        ntlm_client_free(c);
        assert_int_equal(ntlm_client_new("User", "Domain", hash, &c), 0);
        assert_int_equal(ntlm_client_step(c, NULL, 0, &neg, &neg_len), 0);
        assert_int_equal(ntlm_server_step(s, neg, neg_len, &chal, &chal_len), 0);
        /* A server that would not exchange keys: flags at 20, KEY_EXCH 0x40000000. */
        chal[23] &= (uint8_t) ~0x40;
        assert_int_equal(ntlm_client_step(c, chal, chal_len, &out, &out_len), -EPROTO);
        assert_null(ntlm_client_session(c));
        ntlm_client_free(c);
        /* Truncated: the target info runs past the end. */
        chal[23] |= 0x40;
        assert_int_equal(ntlm_client_new("User", "Domain", hash, &c), 0);
        assert_int_equal(ntlm_client_step(c, NULL, 0, &out, &out_len), 0);
        free(out);
        assert_int_equal(ntlm_client_step(c, chal, chal_len - 1, &out, &out_len), -EBADMSG);
        ntlm_client_free(c);
        ntlm_client_free(NULL);
        ntlm_server_free(s);
        ntlm_server_free(NULL);
        free(neg);
        free(chal);
}

/*
 * NTLM under DCE/RPC (dcerpc-ntlm.h): a multi-fragment request sealed by
 * the client's session through dcerpc-auth.c and verified by the server's,
 * at both levels and with or without header signing; then one flipped
 * byte is refused, and the session refuses what follows.
 */
static void dcerpc_fragments(void **state)
{
        static const uint8_t levels[] = { DCERPC_AUTH_LEVEL_INTEGRITY, DCERPC_AUTH_LEVEL_PRIVACY };

        (void) state;
        for (size_t l = 0; l < 2; l++)
                for (int hs = 0; hs < 2; hs++) {
                        struct pair p;
                        uint8_t stub[3000], *out = NULL;
                        size_t out_len = 0, got = 0;
                        struct dcerpc_auth_view v;

                        for (size_t i = 0; i < sizeof(stub); i++)
                                stub[i] = (uint8_t) (i * 7 + 1);
                        start(&p, "User", "Password");
                        assert_int_equal(finish(&p), 0);
                        struct dcerpc_auth cli = { &dcerpc_ntlm_mech, ntlm_client_session(p.client),
                                                   DCERPC_AUTH_TYPE_NTLM, levels[l], 1, hs };
                        struct dcerpc_auth srv = { &dcerpc_ntlm_mech, ntlm_server_session(p.server),
                                                   DCERPC_AUTH_TYPE_NTLM, levels[l], 1, hs };

                        assert_int_equal(dcerpc_auth_append_call(&cli, &out, &out_len,
                                                                 DCERPC_REQUEST, 7, 0, 2, stub,
                                                                 sizeof(stub), DCERPC_MIN_FRAG), 0);
                        for (size_t off = 0; off < out_len; ) {
                                size_t n = out[off + 8] | out[off + 9] << 8;

                                assert_int_equal(dcerpc_auth_verify(&srv, out + off, n, &v), 0);
                                assert_memory_equal(out + off + v.stub_off, stub + got, v.stub_len);
                                got += v.stub_len;
                                off += n;
                        }
                        assert_int_equal(got, sizeof(stub));
                        free(out);
                        /* A flipped byte of the next request's stub: refused, and all after it. */
                        out = NULL;
                        out_len = 0;
                        assert_int_equal(dcerpc_auth_append_call(&cli, &out, &out_len,
                                                                 DCERPC_REQUEST, 8, 0, 2, stub, 100,
                                                                 DCERPC_MIN_FRAG), 0);
                        out[30] ^= 0x01;
                        assert_int_equal(dcerpc_auth_verify(&srv, out, out_len, &v), -EKEYREJECTED);
                        out[30] ^= 0x01;
                        assert_true(dcerpc_auth_verify(&srv, out, out_len, &v) < 0);
                        free(out);
                        stop(&p);
                }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(dcerpc_fragments),
                cmocka_unit_test(nt_hash),
                cmocka_unit_test(v2_vectors),
                cmocka_unit_test(seal_vectors),
                cmocka_unit_test(round_trip),
                cmocka_unit_test(refused_credentials),
                cmocka_unit_test(verified_elsewhere),
                cmocka_unit_test(tampered_messages),
                cmocka_unit_test(malformed_negotiate),
                cmocka_unit_test(malformed_authenticate),
                cmocka_unit_test(client_refuses),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
