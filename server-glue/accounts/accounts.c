/* SPDX-License-Identifier: MIT */
/*
 * accounts.c: reading the accounts file (format in accounts.h).  The
 * file is hostile input: every line is checked whole, and anything the
 * format does not allow fails the load with the file and line, rather
 * than being skipped, so a typo never silently drops or grants a logon.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accounts.h"

int acct_fail(struct acct_error *err, int r, const char *fmt, ...)
{
        va_list ap;

        if (err) {
                va_start(ap, fmt);
                vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
                va_end(ap);
        }
        return r;
}

static bool is_control(unsigned char c)
{
        return c < 0x20 || c == 0x7f;
}

static bool user_valid(const char *user, size_t len)
{
        if (len == 0 || len > ACCT_USER_MAX || user[0] == '#' || user[0] == ' ' ||
            user[len - 1] == ' ')
                return false;
        for (size_t i = 0; i < len; i++)
                if (user[i] == ':' || is_control((unsigned char) user[i]))
                        return false;
        return true;
}

bool acct_user_valid(const char *user)
{
        return user && user_valid(user, strnlen(user, ACCT_USER_MAX + 1));
}

static int hex_digit(char c)
{
        static const char digits[] = "0123456789abcdef";
        const char *p = c ? strchr(digits, tolower((unsigned char) c)) : NULL;

        return p ? (int) (p - digits) : -1;
}

static bool parse_hash(const char *s, size_t len, uint8_t ret[NTLM_HASH_SIZE])
{
        uint8_t h[NTLM_HASH_SIZE];

        if (len != 2 * NTLM_HASH_SIZE)
                return false;
        for (size_t i = 0; i < NTLM_HASH_SIZE; i++) {
                int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);

                if (hi < 0 || lo < 0)
                        return false;
                h[i] = (uint8_t) (hi << 4 | lo);
        }
        memcpy(ret, h, sizeof(h));
        return true;
}

/* FLAGS: comma-separated names; an unknown one may be a restriction. */
static bool parse_flags(const char *s, size_t len, unsigned *ret)
{
        unsigned flags = 0;
        size_t i = 0;

        while (i < len) {
                const char *comma = memchr(s + i, ',', len - i);
                size_t n = comma ? (size_t) (comma - (s + i)) : len - i;

                if (n == strlen("disabled") && memcmp(s + i, "disabled", n) == 0)
                        flags |= ACCT_DISABLED;
                else
                        return false;
                i += n + (comma ? 1 : 0);
                if (comma && i == len)
                        return false;
        }
        *ret = flags;
        return true;
}

/* One account line, S (LEN bytes, no '\n'), into *e. */
static int parse_line(const char *name, unsigned line, const char *s, size_t len,
                      struct acct_entry *e, struct acct_error *err)
{
        const char *c1 = memchr(s, ':', len), *c2;
        size_t ulen;

        if (!c1)
                return acct_fail(err, -EBADMSG, "%s:%u: no ':' after the user name", name, line);
        ulen = (size_t) (c1 - s);
        if (!user_valid(s, ulen))
                return acct_fail(err, -EBADMSG, "%s:%u: invalid user name", name, line);
        c2 = memchr(c1 + 1, ':', len - ulen - 1);
        if (!c2)
                return acct_fail(err, -EBADMSG, "%s:%u: no ':' after the NT hash", name, line);
        if (!parse_hash(c1 + 1, (size_t) (c2 - c1 - 1), e->nt_hash))
                return acct_fail(err, -EBADMSG, "%s:%u: the NT hash is not 32 hex digits",
                               name, line);
        if (!parse_flags(c2 + 1, (size_t) (s + len - c2 - 1), &e->flags))
                return acct_fail(err, -EBADMSG, "%s:%u: unknown flags", name, line);
        memcpy(e->user, s, ulen);
        e->user[ulen] = '\0';
        e->line = line;
        return 0;
}

/* strcasecmp follows the locale; account names fold in ASCII only. */
bool acct_name_equal(const char *a, const char *b)
{
        for (;; a++, b++) {
                unsigned char x = (unsigned char) *a, y = (unsigned char) *b;

                if (x >= 'A' && x <= 'Z')
                        x = (unsigned char) (x - 'A' + 'a');
                if (y >= 'A' && y <= 'Z')
                        y = (unsigned char) (y - 'A' + 'a');
                if (x != y)
                        return false;
                if (!x)
                        return true;
        }
}

const struct acct_entry *acct_find(const struct acct_file *file, const char *user)
{
        /* A handful of accounts: a scan costs less than keeping an index. */
        for (size_t i = 0; file && user && i < file->n_entries; i++)
                if (acct_name_equal(file->entries[i].user, user))
                        return &file->entries[i];
        return NULL;
}

/* Checks one line of f->text and, when it is an account, appends it. */
static int add_line(struct acct_file *f, const char *name, unsigned line, size_t start,
                    size_t end, struct acct_error *err)
{
        const char *s = f->text + start;
        size_t len = end - start;
        struct acct_entry e = { .start = start, .end = end };
        const struct acct_entry *dup;
        int r;

        if (len > ACCT_LINE_MAX)
                return acct_fail(err, -EBADMSG, "%s:%u: line longer than %d bytes", name, line,
                               ACCT_LINE_MAX);
        if (memchr(s, '\0', len) || memchr(s, '\r', len))
                return acct_fail(err, -EBADMSG, "%s:%u: NUL or carriage return", name, line);
        if (len == 0 || s[0] == '#')
                return 0;
        r = parse_line(name, line, s, len, &e, err);
        if (r < 0)
                return r;
        dup = acct_find(f, e.user);
        if (dup)
                return acct_fail(err, -EBADMSG, "%s:%u: user '%s' already on line %u", name,
                               line, e.user, dup->line);
        f->entries[f->n_entries++] = e;
        return 0;
}

int acct_parse(const char *name, const char *text, size_t len, struct acct_file **ret_file,
               struct acct_error *ret_err)
{
        struct acct_file *f = calloc(1, sizeof(*f));
        size_t lines = 1, start = 0;
        unsigned line = 1;
        int r = -ENOMEM;

        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++)
                lines += text[i] == '\n';
        f->text = malloc(len + 1);
        f->entries = calloc(lines, sizeof(*f->entries));
        if (!f->text || !f->entries)
                goto fail;
        memcpy(f->text, text, len);
        f->text[len] = '\0';
        f->len = len;
        while (start < len) {
                const char *nl = memchr(f->text + start, '\n', len - start);
                size_t end = nl ? (size_t) (nl - f->text) : len;

                r = add_line(f, name, line++, start, end, ret_err);
                if (r < 0)
                        goto fail;
                start = end + 1;
        }
        *ret_file = f;
        return 0;
fail:
        if (r == -ENOMEM)
                acct_fail(ret_err, r, "%s: out of memory", name);
        acct_file_free(f);
        return r;
}

static void stamp_of(const struct stat *st, struct acct_stamp *ret)
{
        *ret = (struct acct_stamp) {
                .dev = st->st_dev, .ino = st->st_ino, .size = st->st_size,
                .mtime = st->st_mtim, .ctime = st->st_ctim,
        };
}

static bool stamp_equal(const struct acct_stamp *a, const struct acct_stamp *b)
{
        return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
               a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
               a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* The whole of FD (a regular file checked by the caller) into a buffer. */
static int read_all(int fd, size_t size, char **ret_buf, size_t *ret_len)
{
        char *buf = malloc(size + 1);
        size_t len = 0;

        if (!buf)
                return -ENOMEM;
        /* One byte more than stat said, to notice a file that grew. */
        while (len <= size) {
                ssize_t n = read(fd, buf + len, size + 1 - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = -errno;

                        free(buf);
                        return r;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        if (len > size) {
                free(buf);
                return -EAGAIN;
        }
        *ret_buf = buf;
        *ret_len = len;
        return 0;
}

static int load_fd(const char *path, int fd, struct acct_file **ret_file, struct acct_error *err)
{
        struct acct_file *f;
        struct stat st;
        size_t len = 0;
        char *buf = NULL;
        int r;

        if (fstat(fd, &st) < 0)
                return acct_fail(err, -errno, "%s: %s", path, strerror(errno));
        if (!S_ISREG(st.st_mode))
                return acct_fail(err, -EINVAL, "%s: not a regular file", path);
        if (st.st_mode & 077)
                return acct_fail(err, -EPERM, "%s: mode %04o lets others read the NT hashes "
                               "(chmod 600 it)", path, (unsigned) (st.st_mode & 07777));
        if (st.st_size > ACCT_FILE_MAX)
                return acct_fail(err, -EFBIG, "%s: larger than %d bytes", path, ACCT_FILE_MAX);
        r = read_all(fd, (size_t) st.st_size, &buf, &len);
        if (r < 0)
                return acct_fail(err, r, "%s: %s", path,
                               r == -EAGAIN ? "changed while read" : strerror(-r));
        r = acct_parse(path, buf, len, &f, err);
        explicit_bzero(buf, len);
        free(buf);
        if (r < 0)
                return r;
        stamp_of(&st, &f->stamp);
        *ret_file = f;
        return 0;
}

int acct_load(const char *path, struct acct_file **ret_file, struct acct_error *ret_err)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        int r;

        if (fd < 0)
                return acct_fail(ret_err, -errno, "%s: %s", path, strerror(errno));
        r = load_fd(path, fd, ret_file, ret_err);
        close(fd);
        return r;
}

int acct_reload(const char *path, struct acct_file **file, struct acct_error *ret_err)
{
        struct acct_file *f;
        struct acct_stamp now;
        struct stat st;
        int r;

        if (stat(path, &st) < 0)
                return acct_fail(ret_err, -errno, "%s: %s", path, strerror(errno));
        stamp_of(&st, &now);
        if (*file && stamp_equal(&now, &(*file)->stamp))
                return 0;
        r = acct_load(path, &f, ret_err);
        if (r < 0)
                return r;
        acct_file_free(*file);
        *file = f;
        return 1;
}

int acct_lookup(const struct acct_file *file, const char *user,
                uint8_t ret_hash[NTLM_HASH_SIZE])
{
        const struct acct_entry *e = acct_find(file, user);

        if (!e)
                return -ENOENT;
        if (e->flags & ACCT_DISABLED)
                return -EACCES;
        memcpy(ret_hash, e->nt_hash, NTLM_HASH_SIZE);
        return 0;
}

void acct_file_free(struct acct_file *file)
{
        if (!file)
                return;
        if (file->text)
                explicit_bzero(file->text, file->len);
        if (file->entries)
                explicit_bzero(file->entries, file->n_entries * sizeof(*file->entries));
        free(file->text);
        free(file->entries);
        free(file);
}
