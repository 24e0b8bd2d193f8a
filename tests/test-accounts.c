/* SPDX-License-Identifier: MIT */
/*
 * The accounts file (server-glue/accounts/): what acct_parse accepts
 * (comments, blank lines, flags, a last line without '\n') and what it
 * refuses, with the file and line of the cause; lookup that ignores ASCII
 * case and refuses disabled accounts; acct_load's refusal of a file
 * others may read; acct_reload's stamp, which replaces the accounts when
 * the file is replaced and keeps the old ones when the new file is bad;
 * acct_edit's changes, which keep every other line as it was.
 */
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

#include "accounts.h"
#include "acct-edit.h"

/* MS-NLMP 4.2.2.1.2: NTOWFv1("Password"). */
static const uint8_t password_hash[NTLM_HASH_SIZE] = {
        0xa4, 0xf4, 0x9c, 0x40, 0x65, 0x10, 0xbd, 0xca,
        0xb6, 0x82, 0x4e, 0xe7, 0xc3, 0x0f, 0xd8, 0x52,
};
#define PW_HEX "a4f49c406510bdcab6824ee7c30fd852"

static int parse(const char *text, struct acct_file **ret, struct acct_error *err)
{
        return acct_parse("accounts", text, strlen(text), ret, err);
}

static void test_parse_good(void **state)
{
        static const char text[] =
                "# perflibd's accounts\n"
                "\n"
                "alice:" PW_HEX ":\n"
                "Bob:A4F49C406510BDCAB6824EE7C30FD852:disabled\n"
                "carol@EXAMPLE:00000000000000000000000000000000:";
        struct acct_file *f = NULL;
        struct acct_error err;

        (void) state;
        assert_int_equal(parse(text, &f, &err), 0);
        assert_int_equal(f->n_entries, 3);
        assert_string_equal(f->entries[0].user, "alice");
        assert_int_equal(f->entries[0].line, 3);
        assert_memory_equal(f->entries[0].nt_hash, password_hash, NTLM_HASH_SIZE);
        assert_memory_equal(f->entries[1].nt_hash, password_hash, NTLM_HASH_SIZE);
        assert_int_equal(f->entries[1].flags, ACCT_DISABLED);
        assert_string_equal(f->entries[2].user, "carol@EXAMPLE");
        assert_int_equal(f->entries[2].line, 5);
        acct_file_free(f);
}

static void test_parse_errors(void **state)
{
        static const struct {
                const char *text, *msg;
        } bad[] = {
                { "alice\n", "accounts:1: no ':' after the user name" },
                { "#\nalice:" PW_HEX "\n", "accounts:2: no ':' after the NT hash" },
                { ":" PW_HEX ":\n", "accounts:1: invalid user name" },
                { " alice:" PW_HEX ":\n", "accounts:1: invalid user name" },
                { "al\tice:" PW_HEX ":\n", "accounts:1: invalid user name" },
                { "alice:" PW_HEX "0:\n", "accounts:1: the NT hash is not 32 hex digits" },
                { "alice:a4f49c406510bdcab6824ee7c30fd85g:\n",
                  "accounts:1: the NT hash is not 32 hex digits" },
                { "alice:" PW_HEX ":disabled,\n", "accounts:1: unknown flags" },
                { "alice:" PW_HEX ":readonly\n", "accounts:1: unknown flags" },
                { "alice:" PW_HEX ":\r\n", "accounts:1: NUL or carriage return" },
                { "\n\nalice:" PW_HEX ":\nbob:" PW_HEX ":\nALICE:" PW_HEX ":\n",
                  "accounts:5: user 'ALICE' already on line 3" },
        };
        struct acct_file *f = NULL;
        struct acct_error err;
        char longline[ACCT_LINE_MAX + 40];

        (void) state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                memset(&err, 0, sizeof(err));
                assert_int_equal(parse(bad[i].text, &f, &err), -EBADMSG);
                assert_string_equal(err.msg, bad[i].msg);
                assert_null(f);
        }
        memset(longline, 'a', sizeof(longline) - 1);
        longline[sizeof(longline) - 1] = '\0';
        assert_int_equal(parse(longline, &f, &err), -EBADMSG);
        assert_non_null(strstr(err.msg, "accounts:1: line longer than"));
        assert_int_equal(acct_parse("accounts", "a\0b:" PW_HEX ":\n", 37, &f, &err), -EBADMSG);
        assert_string_equal(err.msg, "accounts:1: NUL or carriage return");
}

static void test_user_valid(void **state)
{
        char name[ACCT_USER_MAX + 2];

        (void) state;
        assert_true(acct_user_valid("alice"));
        assert_true(acct_user_valid("DOMAIN user"));
        assert_false(acct_user_valid(""));
        assert_false(acct_user_valid("a:b"));
        assert_false(acct_user_valid("a\nb"));
        assert_false(acct_user_valid("a\x7f"));
        assert_false(acct_user_valid("#a"));
        assert_false(acct_user_valid("a "));
        memset(name, 'u', sizeof(name) - 1);
        name[ACCT_USER_MAX] = '\0';
        assert_true(acct_user_valid(name));
        name[ACCT_USER_MAX] = 'u';
        name[ACCT_USER_MAX + 1] = '\0';
        assert_false(acct_user_valid(name));
}

static void test_lookup(void **state)
{
        struct acct_file *f = NULL;
        uint8_t hash[NTLM_HASH_SIZE] = { 0 };

        (void) state;
        assert_int_equal(parse("Alice:" PW_HEX ":\nbob:" PW_HEX ":disabled\n"
                               "\xc3\x89ve:" PW_HEX ":\n", &f, NULL), 0);
        assert_int_equal(acct_lookup(f, "aLiCe", hash), 0);
        assert_memory_equal(hash, password_hash, NTLM_HASH_SIZE);
        assert_int_equal(acct_lookup(f, "bob", hash), -EACCES);
        assert_int_equal(acct_lookup(f, "alic", hash), -ENOENT);
        assert_int_equal(acct_lookup(f, "alice ", hash), -ENOENT);
        /* Non-ASCII bytes compare exactly ("É" vs "é"). */
        assert_int_equal(acct_lookup(f, "\xc3\x89ve", hash), 0);
        assert_int_equal(acct_lookup(f, "\xc3\xa9ve", hash), -ENOENT);
        acct_file_free(f);
}

/* A temporary directory and the accounts file's path in it. */
struct dir {
        char path[64];
        char file[96];
};

static void dir_make(struct dir *d)
{
        snprintf(d->path, sizeof(d->path), "%s", "/tmp/test-accounts.XXXXXX");
        assert_non_null(mkdtemp(d->path));
        snprintf(d->file, sizeof(d->file), "%s/accounts", d->path);
}

static void dir_remove(struct dir *d)
{
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
        assert_int_equal(system(cmd), 0);
}

static void put_file(const char *path, const char *text, mode_t mode)
{
        char tmp[128];
        FILE *f;

        /* Replaced, as perflib-passwd does, so the inode changes. */
        snprintf(tmp, sizeof(tmp), "%s.new", path);
        f = fopen(tmp, "w");
        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(chmod(tmp, mode), 0);
        assert_int_equal(rename(tmp, path), 0);
}

static void test_load_mode(void **state)
{
        struct acct_file *f = NULL;
        struct acct_error err;
        struct dir d;

        (void) state;
        dir_make(&d);
        assert_int_equal(acct_load(d.file, &f, &err), -ENOENT);
        put_file(d.file, "alice:" PW_HEX ":\n", 0640);
        assert_int_equal(acct_load(d.file, &f, &err), -EPERM);
        assert_non_null(strstr(err.msg, "mode 0640 lets others read"));
        assert_null(f);
        put_file(d.file, "alice:" PW_HEX ":\nbad\n", 0600);
        assert_int_equal(acct_load(d.file, &f, &err), -EBADMSG);
        assert_non_null(strstr(err.msg, "/accounts:2: no ':'"));
        put_file(d.file, "alice:" PW_HEX ":\n", 0600);
        assert_int_equal(acct_load(d.file, &f, &err), 0);
        assert_non_null(acct_find(f, "ALICE"));
        acct_file_free(f);
        dir_remove(&d);
}

static void test_reload(void **state)
{
        struct acct_file *f = NULL, *first;
        struct acct_error err;
        struct dir d;

        (void) state;
        dir_make(&d);
        assert_int_equal(acct_reload(d.file, &f, &err), -ENOENT);
        assert_null(f);
        put_file(d.file, "alice:" PW_HEX ":\n", 0600);
        assert_int_equal(acct_reload(d.file, &f, &err), 1);
        first = f;
        assert_int_equal(acct_reload(d.file, &f, &err), 0);
        assert_ptr_equal(f, first);
        /* A bad new version leaves the old accounts in force. */
        put_file(d.file, "alice:" PW_HEX "\n", 0600);
        assert_int_equal(acct_reload(d.file, &f, &err), -EBADMSG);
        assert_ptr_equal(f, first);
        assert_non_null(acct_find(f, "alice"));
        put_file(d.file, "bob:" PW_HEX ":\n", 0600);
        assert_int_equal(acct_reload(d.file, &f, &err), 1);
        assert_null(acct_find(f, "alice"));
        assert_non_null(acct_find(f, "bob"));
        acct_file_free(f);
        dir_remove(&d);
}

static char *slurp(const char *path)
{
        static char buf[4096];
        FILE *f = fopen(path, "r");
        size_t n;

        assert_non_null(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

static void test_edit(void **state)
{
        static const uint8_t zero[NTLM_HASH_SIZE];
        struct acct_error err;
        struct stat st;
        struct dir d;

        (void) state;
        dir_make(&d);
        assert_int_equal(acct_edit(d.file, "alice", password_hash, &err), 0);
        assert_string_equal(slurp(d.file), "alice:" PW_HEX ":\n");
        assert_int_equal(stat(d.file, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        put_file(d.file, "# keep me\nAlice:" PW_HEX ":disabled\n\nbob:" PW_HEX ":", 0600);
        assert_int_equal(acct_edit(d.file, "ALICE", zero, &err), 0);
        assert_string_equal(slurp(d.file), "# keep me\nAlice:00000000000000000000000000000000:"
                            "disabled\n\nbob:" PW_HEX ":");
        assert_int_equal(acct_edit(d.file, "carol", password_hash, &err), 0);
        assert_string_equal(slurp(d.file), "# keep me\nAlice:00000000000000000000000000000000:"
                            "disabled\n\nbob:" PW_HEX ":\ncarol:" PW_HEX ":\n");
        assert_int_equal(acct_edit(d.file, "alice", NULL, &err), 0);
        assert_int_equal(acct_edit(d.file, "alice", NULL, &err), -ENOENT);
        assert_non_null(strstr(err.msg, "no account 'alice'"));
        assert_string_equal(slurp(d.file), "# keep me\n\nbob:" PW_HEX ":\ncarol:" PW_HEX ":\n");
        assert_int_equal(acct_edit(d.file, "a:b", password_hash, &err), -EINVAL);
        /* A file the format refuses is left as it is. */
        put_file(d.file, "broken\n", 0600);
        assert_int_equal(acct_edit(d.file, "bob", password_hash, &err), -EBADMSG);
        assert_string_equal(slurp(d.file), "broken\n");
        dir_remove(&d);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_good),
                cmocka_unit_test(test_parse_errors),
                cmocka_unit_test(test_user_valid),
                cmocka_unit_test(test_lookup),
                cmocka_unit_test(test_load_mode),
                cmocka_unit_test(test_reload),
                cmocka_unit_test(test_edit),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
