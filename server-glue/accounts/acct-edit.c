/* SPDX-License-Identifier: MIT */
/*
 * acct-edit.c: perflib-passwd's changes to the accounts file, under a
 * lock, by a whole-file rename (see acct-edit.h).
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "acct-edit.h"

/* PATH with SUFFIX appended, or NULL; the caller's to free. */
static char *suffixed(const char *path, const char *suffix)
{
        size_t n = strlen(path) + strlen(suffix) + 1;
        char *s = malloc(n);

        if (s)
                snprintf(s, n, "%s%s", path, suffix);
        return s;
}

/* The lock's descriptor, held until closed. */
static int lock_file(const char *path, int *ret_fd, struct acct_error *err)
{
        char *name = suffixed(path, ".lock");
        int fd, r;

        if (!name)
                return acct_fail(err, -ENOMEM, "%s: out of memory", path);
        fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
        r = fd < 0 ? -errno : 0;
        while (fd >= 0 && flock(fd, LOCK_EX) < 0 && r == 0)
                if (errno != EINTR)
                        r = -errno;
        if (r < 0) {
                acct_fail(err, r, "%s: %s", name, strerror(-r));
                if (fd >= 0)
                        close(fd);
        } else {
                *ret_fd = fd;
        }
        free(name);
        return r;
}

static void put_entry(FILE *out, const char *user, const uint8_t *hash, unsigned flags)
{
        fprintf(out, "%s:", user);
        for (size_t i = 0; i < NTLM_HASH_SIZE; i++)
                fprintf(out, "%02x", hash[i]);
        fprintf(out, ":%s\n", flags & ACCT_DISABLED ? "disabled" : "");
}

/* The new file's text: OLD (may be NULL) with USER set or deleted. */
static void write_text(FILE *out, const struct acct_file *old, const struct acct_entry *e,
                       const char *user, const uint8_t *hash)
{
        size_t rest = 0;

        if (old && e) {
                fwrite(old->text, 1, e->start, out);
                if (hash)
                        put_entry(out, e->user, hash, e->flags);
                rest = e->end < old->len ? e->end + 1 : old->len;
        }
        if (old)
                fwrite(old->text + rest, 1, old->len - rest, out);
        if (!e && hash) {
                if (old && old->len && old->text[old->len - 1] != '\n')
                        fputc('\n', out);
                put_entry(out, user, hash, 0);
        }
}

/*
 * Writes the new file next to PATH and renames it over PATH.  Keeps the
 * old file's owner when root runs this (the server's user, most likely).
 */
static int replace_file(const char *path, const struct acct_file *old,
                        const struct acct_entry *e, const char *user, const uint8_t *hash,
                        struct acct_error *err)
{
        char *tmp = suffixed(path, ".XXXXXX"), *dir = NULL;
        struct stat st;
        FILE *out = NULL;
        bool made = false;
        int fd = -1, r;

        if (!tmp)
                return acct_fail(err, -ENOMEM, "%s: out of memory", path);
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                r = acct_fail(err, -errno, "%s: %s", tmp, strerror(errno));
                goto fail;
        }
        made = true;
        if (fchmod(fd, 0600) < 0 || (old && geteuid() == 0 && stat(path, &st) == 0 &&
                                     fchown(fd, st.st_uid, st.st_gid) < 0))
                goto fail_errno;
        out = fdopen(fd, "w");
        if (!out)
                goto fail_errno;
        fd = -1;
        write_text(out, old, e, user, hash);
        if (fflush(out) != 0 || fsync(fileno(out)) < 0)
                goto fail_errno;
        r = fclose(out);
        out = NULL;
        if (r != 0 || rename(tmp, path) < 0)
                goto fail_errno;
        free(tmp);
        tmp = NULL;
        /* The rename is done and visible; this makes it survive a crash. */
        dir = suffixed(path, "");
        fd = dir ? open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (fd >= 0)
                fsync(fd);
        r = 0;
        goto done;
fail_errno:
        r = acct_fail(err, -errno, "%s: %s", tmp, strerror(errno));
fail:
        if (out)
                fclose(out);
        if (made)
                unlink(tmp);
done:
        if (fd >= 0)
                close(fd);
        free(tmp);
        free(dir);
        return r;
}

int acct_edit(const char *path, const char *user, const uint8_t *hash,
              struct acct_error *ret_err)
{
        struct acct_file *old = NULL;
        const struct acct_entry *e;
        int lock = -1, r;

        if (!acct_user_valid(user))
                return acct_fail(ret_err, -EINVAL, "invalid user name");
        r = lock_file(path, &lock, ret_err);
        if (r < 0)
                return r;
        r = acct_load(path, &old, ret_err);
        if (r == -ENOENT) {
                old = NULL;
                r = 0;
        }
        if (r < 0)
                goto done;
        e = acct_find(old, user);
        if (!e && !hash)
                r = acct_fail(ret_err, -ENOENT, "%s: no account '%s'", path, user);
        else
                r = replace_file(path, old, e, user, hash, ret_err);
done:
        acct_file_free(old);
        close(lock);
        return r;
}
