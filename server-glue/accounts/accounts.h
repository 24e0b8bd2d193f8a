/* SPDX-License-Identifier: MIT */
/*
 * accounts.h: the remote accounts file, read by perflibd and edited by
 * perflib-passwd (its format is documented in perflib-passwd(8)).
 *
 * One account a line, "USER:NTHASH:FLAGS" after smbpasswd: USER the
 * account name, NTHASH its NT hash as 32 hex digits, FLAGS a
 * comma-separated list (empty, or "disabled").  Blank lines and lines
 * starting with '#' are comments.
 *
 * Why NT hashes and nothing better: NTLMv2's proofs are HMAC-MD5 keyed
 * with NTOWFv2, which is computed from the NT hash and the user and
 * domain names the client sends at logon.  So the server must hold the
 * NT hash itself (or the password): a salted or slow hash of the password
 * cannot produce the key, and nothing weaker than the NT hash lets the
 * server compute the proofs.  The NT hash is not reversible to the
 * password, but it is unsalted and it is the password's equivalent for
 * NTLM: whoever reads it can log on as the account.  The file must then be
 * read by no one but the server's user: perflib-passwd writes it mode
 * 0600, and acct_load refuses a file that its group or others may read.
 *
 * Account names compare case-insensitively, as Windows compares them, in
 * ASCII only: bytes outside ASCII compare exactly (Windows would fold
 * non-ASCII letters as well; names that need it are rare on Linux hosts).
 *
 * Functions return 0 or -errno and write ret_ parameters only on success.
 */
#ifndef PL_ACCOUNTS_H
#define PL_ACCOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ntlm.h"

/* Longest account name, in bytes (Windows' UPNs stop short of this). */
#define ACCT_USER_MAX 104
/* Longest line, and largest file, acct_load reads. */
#define ACCT_LINE_MAX 512
#define ACCT_FILE_MAX (1024 * 1024)

/* Account flags. */
#define ACCT_DISABLED 0x1u      /* kept, but refused at logon */

/* Why a load failed: "FILE:LINE: cause", or "FILE: cause". */
#define ACCT_ERROR_MAX 512
struct acct_error {
        char msg[ACCT_ERROR_MAX];
};

/* Fills ERR (when not NULL) from FMT; returns R, a -errno. */
int acct_fail(struct acct_error *err, int r, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* What identifies one version of the file: changes when it is replaced. */
struct acct_stamp {
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
        struct timespec ctime;
};

struct acct_entry {
        char user[ACCT_USER_MAX + 1];
        uint8_t nt_hash[NTLM_HASH_SIZE];
        unsigned flags;
        unsigned line;                  /* 1-based, in the file */
        size_t start, end;              /* the line's bytes, '\n' excluded */
};

struct acct_file {
        char *text;                     /* the file as read, owned */
        size_t len;
        struct acct_entry *entries;     /* in file order, owned */
        size_t n_entries;
        struct acct_stamp stamp;        /* of what was read */
};

/*
 * Whether USER may name an account: 1 to ACCT_USER_MAX bytes, no ':',
 * no control characters, no leading '#' or blank, no trailing blank.
 */
bool acct_user_valid(const char *user);
/* Whether two names are one account: ASCII letters fold, as lookups fold them. */
bool acct_name_equal(const char *a, const char *b);

/*
 * Parses TEXT (LEN bytes, copied) as an accounts file; NAME is only for
 * error messages.  On -EBADMSG, ret_err (if not NULL) says where and why.
 * On success *ret_file is the caller's, for acct_file_free.
 */
int acct_parse(const char *name, const char *text, size_t len, struct acct_file **ret_file,
               struct acct_error *ret_err);

/*
 * Reads and parses the file at PATH, and records its stamp.  Refuses one
 * that is not a regular file, larger than ACCT_FILE_MAX (-EFBIG) or that
 * its group or others may read (-EPERM).  ret_err, if not NULL, says why
 * for every failure.  On success *ret_file is the caller's.
 */
int acct_load(const char *path, struct acct_file **ret_file, struct acct_error *ret_err);

/*
 * perflibd's reread: when the file at PATH is no longer the one *file was
 * read from, loads it and replaces *file (freeing the old one).  Returns 0
 * when unchanged, 1 when replaced, -errno (and *file untouched, ret_err
 * filled) when the new version cannot be loaded: the old accounts stay in
 * force until a good file replaces them.
 */
int acct_reload(const char *path, struct acct_file **file, struct acct_error *ret_err);

/* The entry for USER (case-insensitive in ASCII), or NULL. */
const struct acct_entry *acct_find(const struct acct_file *file, const char *user);

/*
 * The NT hash of USER, for a logon.  -ENOENT for no such account,
 * -EACCES for a disabled one.
 */
int acct_lookup(const struct acct_file *file, const char *user,
                uint8_t ret_hash[NTLM_HASH_SIZE]);

void acct_file_free(struct acct_file *file);

#endif /* PL_ACCOUNTS_H */
