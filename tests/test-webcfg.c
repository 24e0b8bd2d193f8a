/* SPDX-License-Identifier: MIT */
/*
 * exporter/webcfg.c: the web-config.yml files it accepts (TLS only, users
 * only, both, empty), every refusal with its file and line, TLS paths
 * resolved against the config's directory, and webcfg_check's bcrypt: the
 * right password, a wrong one, an unknown user, and a cached success that
 * does not let a wrong password through.  Hashes are made here at cost 4.
 */
#include <crypt.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "webcfg.h"

#define CERT "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
#define KEY "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"

static char tmpdir[] = "/tmp/test-webcfg.XXXXXX";
static char alice_hash[128], bob_hash[128];

static void write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");

        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

/* A bcrypt hash of password at cost 4, so that the tests stay fast. */
static void make_hash(const char *password, char *out, size_t size)
{
        char salt[CRYPT_GENSALT_OUTPUT_SIZE];
        struct crypt_data *cd = calloc(1, sizeof(*cd));
        const char *h;

        assert_non_null(cd);
        assert_non_null(crypt_gensalt_rn("$2b$", 4, NULL, 0, salt, sizeof(salt)));
        h = crypt_rn(password, salt, cd, (int) sizeof(*cd));
        assert_non_null(h);
        assert_int_equal(strncmp(h, "$2b$04$", 7), 0);
        snprintf(out, size, "%s", h);
        free(cd);
}

static int setup(void **state)
{
        (void) state;
        if (!mkdtemp(tmpdir) || chdir(tmpdir) < 0 || mkdir("sub", 0700) < 0 ||
            mkfifo("fifo", 0600) < 0)
                return -1;
        write_file("cert.pem", CERT);
        write_file("key.pem", KEY);
        write_file("sub/c.pem", CERT);
        write_file("sub/k.pem", KEY);
        make_hash("alice-secret", alice_hash, sizeof(alice_hash));
        make_hash("bob-secret", bob_hash, sizeof(bob_hash));
        return 0;
}

static int teardown(void **state)
{
        static const char *const files[] = {
                "cert.pem", "key.pem", "sub/c.pem", "sub/k.pem", "sub/web.yml", "web.yml", "fifo",
        };
        size_t i;

        (void) state;
        for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
                unlink(files[i]);
        rmdir("sub");
        return rmdir(tmpdir);
}

static int load(const char *text, struct webcfg **ret, char *why, size_t size)
{
        write_file("web.yml", text);
        why[0] = '\0';
        return webcfg_load("web.yml", ret, why, size);
}

static void test_empty(void **state)
{
        static const char *const texts[] = { "", "# nothing\n", "{}\n", "---\n",
                                             "tls_server_config:\nbasic_auth_users: {}\n" };
        char why[256];
        size_t i;

        (void) state;
        for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
                struct webcfg *c = NULL;

                assert_int_equal(load(texts[i], &c, why, sizeof(why)), 0);
                assert_null(c->cert_file);
                assert_null(c->cert_pem);
                assert_int_equal(c->n_users, 0);
                assert_int_equal(c->min_version, WEBCFG_TLS12);
                assert_false(webcfg_check(c, "alice", "alice-secret"));
                webcfg_free(c);
        }
}

static void test_tls_only(void **state)
{
        struct webcfg *c = NULL;
        char why[256];

        (void) state;
        assert_int_equal(load("tls_server_config:\n"
                              "  cert_file: cert.pem\n"
                              "  key_file: key.pem\n"
                              "  min_version: TLS13\n"
                              "  client_auth_type: NoClientCert\n", &c, why, sizeof(why)), 0);
        assert_string_equal(c->cert_file, "cert.pem");
        assert_string_equal(c->cert_pem, CERT);
        assert_string_equal(c->key_pem, KEY);
        assert_int_equal(c->min_version, WEBCFG_TLS13);
        assert_int_equal(c->n_users, 0);
        webcfg_free(c);
}

static void test_relative_paths(void **state)
{
        struct webcfg *c = NULL;
        char why[512], path[256];

        (void) state;
        write_file("sub/web.yml", "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n");
        assert_int_equal(webcfg_load("sub/web.yml", &c, why, sizeof(why)), 0);
        assert_string_equal(c->cert_file, "sub/c.pem");
        assert_string_equal(c->key_file, "sub/k.pem");
        assert_string_equal(c->cert_pem, CERT);
        webcfg_free(c);

        /* An absolute path stays as it is. */
        snprintf(path, sizeof(path), "%s/sub/web.yml", tmpdir);
        write_file("sub/web.yml", "tls_server_config:\n  cert_file: c.pem\n"
                   "  key_file: /nonexistent/k.pem\n");
        assert_int_equal(webcfg_load(path, &c, why, sizeof(why)), -ENOENT);
        snprintf(path, sizeof(path), "%s/sub/web.yml:3: cannot read key_file "
                 "'/nonexistent/k.pem': No such file or directory", tmpdir);
        assert_string_equal(why, path);
}

static void test_users(void **state)
{
        struct webcfg *c = NULL;
        char text[512], why[256], y[128], a[128];

        (void) state;
        snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n  bob: '%s'\n",
                 alice_hash, bob_hash);
        assert_int_equal(load(text, &c, why, sizeof(why)), 0);
        assert_null(c->cert_file);
        assert_int_equal(c->n_users, 2);
        assert_string_equal(c->users[0].name, "alice");
        assert_string_equal(c->users[1].hash, bob_hash);

        assert_true(webcfg_check(c, "alice", "alice-secret"));
        assert_true(webcfg_check(c, "bob", "bob-secret"));
        assert_false(webcfg_check(c, "alice", "bob-secret"));
        assert_false(webcfg_check(c, "bob", "alice-secret"));
        assert_false(webcfg_check(c, "alice", ""));
        assert_false(webcfg_check(c, "carol", "alice-secret"));
        assert_false(webcfg_check(c, "Alice", "alice-secret"));
        assert_false(webcfg_check(c, NULL, "alice-secret"));
        webcfg_free(c);

        /* htpasswd writes $2y$, older tools $2a$: the same bcrypt here. */
        snprintf(y, sizeof(y), "%s", alice_hash);
        snprintf(a, sizeof(a), "%s", bob_hash);
        y[2] = 'y';
        a[2] = 'a';
        snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n  bob: %s\n", y, a);
        assert_int_equal(load(text, &c, why, sizeof(why)), 0);
        assert_int_equal(strncmp(c->users[0].hash, "$2y$04$", 7), 0);
        assert_int_equal(strncmp(c->users[1].hash, "$2a$04$", 7), 0);
        assert_true(webcfg_check(c, "alice", "alice-secret"));
        assert_true(webcfg_check(c, "bob", "bob-secret"));
        assert_false(webcfg_check(c, "bob", "alice-secret"));
        webcfg_free(c);
}

/* A cached success must be for that password: a wrong one after the right
 * one, a prefix of it, or the right one for another user stays refused. */
static void test_cache(void **state)
{
        struct webcfg *c = NULL;
        char text[512], why[256], user[32], *big;
        size_t len;
        int i;

        (void) state;
        snprintf(text, sizeof(text), "tls_server_config:\n  cert_file: cert.pem\n"
                 "  key_file: key.pem\nbasic_auth_users:\n  alice: %s\n  bob: %s\n",
                 alice_hash, alice_hash);
        assert_int_equal(load(text, &c, why, sizeof(why)), 0);
        assert_non_null(c->cert_pem);
        for (i = 0; i < 3; i++) {
                assert_true(webcfg_check(c, "alice", "alice-secret"));
                assert_false(webcfg_check(c, "alice", "alice-secreT"));
                assert_false(webcfg_check(c, "alice", "alice-secre"));
                assert_false(webcfg_check(c, "alice", "alice-secret "));
                assert_false(webcfg_check(c, "carol", "alice-secret"));
        }
        /* bob has the same hash; its own check fills its own entry. */
        assert_true(webcfg_check(c, "bob", "alice-secret"));
        assert_false(webcfg_check(c, "bob", "bob-secret"));
        webcfg_free(c);

        /* More users than cache slots: evicted entries never answer wrongly. */
        big = malloc(80 * 80);
        assert_non_null(big);
        len = (size_t) sprintf(big, "basic_auth_users:\n");
        for (i = 0; i < 70; i++)
                len += (size_t) sprintf(big + len, "  u%d: %s\n", i, alice_hash);
        assert_int_equal(load(big, &c, why, sizeof(why)), 0);
        free(big);
        for (i = 0; i < 140; i++) {
                snprintf(user, sizeof(user), "u%d", i % 70);
                assert_true(webcfg_check(c, user, "alice-secret"));
                assert_false(webcfg_check(c, user, "bob-secret"));
        }
        webcfg_free(c);
}

/* 72 bytes is bcrypt's limit: a longer password is refused, not truncated. */
static void test_long_password(void **state)
{
        char hash[128], text[512], pw[80], why[256];
        struct webcfg *c = NULL;

        (void) state;
        memset(pw, 'x', 72);
        pw[72] = '\0';
        make_hash(pw, hash, sizeof(hash));
        snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n", hash);
        assert_int_equal(load(text, &c, why, sizeof(why)), 0);
        assert_true(webcfg_check(c, "alice", pw));
        strcat(pw, "y");
        assert_false(webcfg_check(c, "alice", pw));
        webcfg_free(c);
}

static void test_refusals(void **state)
{
        static const struct {
                const char *text, *why;
        } bad[] = {
                { "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
                  "  client_ca_file: ca.pem\n",
                  "web.yml:4: 'client_ca_file' in tls_server_config is not supported" },
                { "tls_server_config:\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
                  "web.yml:2: 'cipher_suites' in tls_server_config is not supported" },
                { "tls_server_config:\n  curve_preferences: [X25519]\n",
                  "web.yml:2: 'curve_preferences' in tls_server_config is not supported" },
                { "\ntls_server_config:\n  max_version: TLS13\n",
                  "web.yml:3: 'max_version' in tls_server_config is not supported" },
                { "tls_server_config:\n  prefer_server_cipher_suites: true\n",
                  "web.yml:2: 'prefer_server_cipher_suites' in tls_server_config is not "
                  "supported" },
                { "tls_server_config:\n  client_allowed_sans: [a]\n",
                  "web.yml:2: 'client_allowed_sans' in tls_server_config is not supported" },
                { "tls_server_config:\n  cert: |\n    x\n",
                  "web.yml:2: 'cert' in tls_server_config is not supported" },
                { "tls_server_config:\n  client_auth_type: RequireAndVerifyClientCert\n",
                  "web.yml:2: client_auth_type RequireAndVerifyClientCert is not supported "
                  "(NoClientCert only)" },
                { "tls_server_config:\n  client_auth_type: Maybe\n",
                  "web.yml:2: unknown client_auth_type 'Maybe'" },
                { "tls_server_config:\n  min_version: TLS11\n",
                  "web.yml:2: min_version TLS11 is not supported (TLS12 or TLS13)" },
                { "tls_server_config:\n  min_version: SSL3\n",
                  "web.yml:2: min_version is not TLS10, TLS11, TLS12 or TLS13" },
                { "tls_server_config:\n  x: 1\n",
                  "web.yml:2: unknown key 'x' in tls_server_config" },
                { "http_server_config:\n  http2: false\n",
                  "web.yml:2: 'http2' in http_server_config is not supported" },
                { "http_server_config:\n  headers:\n    X-Frame-Options: deny\n",
                  "web.yml:2: 'headers' in http_server_config is not supported" },
                { "http_server_config:\n  y: 1\n",
                  "web.yml:2: unknown key 'y' in http_server_config" },
                { "# c\nrate_limit:\n  burst: 20\n", "web.yml:2: 'rate_limit' is not supported" },
                { "basic_auth_user:\n", "web.yml:1: unknown key 'basic_auth_user' at the top level" },
                { "tls_server_config:\n  cert_file: cert.pem\n",
                  "web.yml:2: cert_file without key_file in tls_server_config" },
                { "tls_server_config:\n  min_version: TLS12\n  key_file: key.pem\n",
                  "web.yml:3: key_file without cert_file in tls_server_config" },
                { "tls_server_config:\n  cert_file: missing.pem\n  key_file: key.pem\n",
                  "web.yml:2: cannot read cert_file 'missing.pem': No such file or directory" },
                { "tls_server_config:\n  cert_file: cert.pem\n  key_file: sub\n",
                  "web.yml:3: cannot read key_file 'sub': not a regular file" },
                /* A FIFO is refused at once, not waited on. */
                { "tls_server_config:\n  cert_file: fifo\n  key_file: key.pem\n",
                  "web.yml:2: cannot read cert_file 'fifo': not a regular file" },
                { "tls_server_config:\n  cert_file: [a]\n",
                  "web.yml:2: cert_file is not a string" },
                { "tls_server_config:\n  cert_file: cert.pem\n  cert_file: cert.pem\n",
                  "web.yml:3: duplicate key 'cert_file' in tls_server_config, first on line 2" },
                { "basic_auth_users:\n  alice: plain\n",
                  "web.yml:2: the hash of user 'alice' is not bcrypt ($2a$, $2b$ or $2y$)" },
                { "basic_auth_users:\n  alice: $1$abc$0123456789012345678901\n",
                  "web.yml:2: the hash of user 'alice' is not bcrypt ($2a$, $2b$ or $2y$)" },
                { "basic_auth_users:\n  alice:\n",
                  "web.yml:2: the hash of user 'alice' is not bcrypt ($2a$, $2b$ or $2y$)" },
                { "basic_auth_users:\n  'a:b': x\n", "web.yml:2: invalid user name 'a:b'" },
                { "basic_auth_users: [alice]\n", "web.yml:1: basic_auth_users is not a mapping" },
                { "- a\n", "web.yml:1: the top level is not a mapping" },
                { "tls_server_config: {\n", "web.yml:2: did not find expected node content" },
                { "a: b\n c: d\n", "web.yml:2: mapping values are not allowed in this context" },
                { "tls_server_config: {}\n---\nx: 1\n", "web.yml:3: more than one YAML document" },
        };
        char why[256];
        size_t i;

        (void) state;
        for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct webcfg *c = NULL;

                assert_true(load(bad[i].text, &c, why, sizeof(why)) < 0);
                assert_null(c);
                if (strcmp(why, bad[i].why) != 0)
                        fail_msg("case %zu: got \"%s\"\nwant \"%s\"", i, why, bad[i].why);
        }
}

/* Duplicate users and the bounds: size and user count. */
static void test_bounds(void **state)
{
        struct webcfg *c = NULL;
        char why[256], *text;
        size_t n, len, i;
        FILE *f;

        (void) state;
        text = malloc(1100 * 80);
        assert_non_null(text);
        snprintf(text, 1100 * 80, "basic_auth_users:\n  alice: %s\n  bob: %s\n  alice: %s\n",
                 alice_hash, bob_hash, bob_hash);
        assert_int_equal(load(text, &c, why, sizeof(why)), -EINVAL);
        assert_string_equal(why, "web.yml:4: duplicate key 'alice' in basic_auth_users, "
                            "first on line 2");

        len = (size_t) sprintf(text, "basic_auth_users:\n");
        for (i = 0; i < 1025; i++)
                len += (size_t) sprintf(text + len, "  u%zu: %s\n", i, alice_hash);
        assert_int_equal(load(text, &c, why, sizeof(why)), -E2BIG);
        assert_string_equal(why, "web.yml:1: more than 1024 users in basic_auth_users");
        free(text);

        f = fopen("web.yml", "w");
        assert_non_null(f);
        for (n = 0; n <= 1024 * 1024; n += 16)
                fputs("# padding line\n\n", f);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(webcfg_load("web.yml", &c, why, sizeof(why)), -EFBIG);
        assert_string_equal(why, "web.yml: cannot read: larger than 1 MiB");
        assert_int_equal(webcfg_load("none.yml", &c, why, sizeof(why)), -ENOENT);
        assert_string_equal(why, "none.yml: cannot read: No such file or directory");
        assert_null(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_empty),
                cmocka_unit_test(test_tls_only),
                cmocka_unit_test(test_relative_paths),
                cmocka_unit_test(test_users),
                cmocka_unit_test(test_cache),
                cmocka_unit_test(test_long_password),
                cmocka_unit_test(test_refusals),
                cmocka_unit_test(test_bounds),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
