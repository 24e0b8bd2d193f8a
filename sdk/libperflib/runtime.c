/* SPDX-License-Identifier: MIT */
/*
 * The runtime directory, where providers put their collect-service sockets
 * and readers look for them: chosen from the environment, created when
 * missing.
 *
 * A server's directory belongs to the server (root or its own user, mode
 * 0755): nobody else may create or replace a file where its files, or
 * another user's, are read from.  Other users publish in a directory of
 * their own below it, users/<uid> (mode 0755, theirs), which they create in
 * users/ (mode 1733: anyone may add an entry, nobody may list it or remove
 * another's).  The server reads a user's directory only while it is a real
 * directory that only its owner can write, and a socket in it only when the
 * owner made it and listens on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"

static int ensure_dir(const char *path)
{
        struct stat st;

        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return -errno;
        if (stat(path, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        return access(path, W_OK | X_OK) < 0 ? -errno : 0;
}

static int dup_path(const char *path, char **ret)
{
        char *s = strdup(path);

        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static int try_dir(const char *path, char **ret)
{
        int r = ensure_dir(path);

        return r < 0 ? r : dup_path(path, ret);
}

bool pl_runtime_user_dir_ok(const struct stat *st)
{
        return S_ISDIR(st->st_mode) && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/* users/ of base, when it is the shared place for other users' directories. */
static bool users_usable(const char *base)
{
        char path[4096];
        struct stat st;

        if ((size_t) snprintf(path, sizeof(path), "%s/" PL_RUNTIME_USERS, base) >= sizeof(path))
                return false;
        return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) &&
               access(path, W_OK | X_OK) == 0;
}

/* path made (or found) as a directory only we can write; else -EEXIST. */
static int own_dir(const char *path)
{
        struct stat st;

        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return -errno;
        if (lstat(path, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
                return -EEXIST;
        if (!pl_runtime_user_dir_ok(&st) && chmod(path, 0755) < 0)
                return -errno;
        return 0;
}

/*
 * Our directory in base/users: users/<uid>, or, when someone else took that
 * name first, a fresh users/<uid>-XXXXXX (the server goes by the owner,
 * never by the name).
 */
static int try_user_dir(const char *base, char **ret)
{
        char path[4096];
        unsigned uid = (unsigned) geteuid();
        int r;

        if (!users_usable(base))
                return -EACCES;
        if ((size_t) snprintf(path, sizeof(path), "%s/" PL_RUNTIME_USERS "/%u", base, uid) >=
            sizeof(path))
                return -ENAMETOOLONG;
        r = own_dir(path);
        if (r == -EEXIST) {
                snprintf(path, sizeof(path), "%s/" PL_RUNTIME_USERS "/%u-XXXXXX", base, uid);
                r = mkdtemp(path) ? own_dir(path) : -errno;
        }
        return r < 0 ? r : dup_path(path, ret);
}

/* base itself when we may write there, else our directory in its users/. */
static int try_base(const char *base, bool user_dirs, char **ret)
{
        int r = try_dir(base, ret);

        if (r == -EACCES && user_dirs && try_user_dir(base, ret) == 0)
                return 0;
        return r;
}

/* /run/perflib only when it is ours to use: writable, or /run lets us create it. */
static int try_system_dir(bool user_dirs, char **ret)
{
        if (access("/run/perflib", W_OK | X_OK) == 0 ||
            (access("/run/perflib", F_OK) < 0 && access("/run", W_OK | X_OK) == 0))
                return try_dir("/run/perflib", ret);
        return user_dirs ? try_user_dir("/run/perflib", ret) : -EACCES;
}

static int runtime_dir(bool user_dirs, char **ret)
{
        char buf[4096];
        const char *e;

        if (!ret)
                return -EINVAL;
        e = getenv("PERFLIB_RUNTIME_DIR");
        if (e && *e)
                return try_base(e, user_dirs, ret);
        if (try_system_dir(user_dirs, ret) == 0)
                return 0;
        e = getenv("XDG_RUNTIME_DIR");
        if (e && *e && (size_t) snprintf(buf, sizeof(buf), "%s/perflib", e) < sizeof(buf) &&
            try_dir(buf, ret) == 0)
                return 0;
        snprintf(buf, sizeof(buf), "/tmp/perflib-%u", (unsigned) getuid());
        return try_dir(buf, ret);
}

int pl_runtime_dir(char **ret)
{
        return runtime_dir(true, ret);
}

int pl_runtime_server_dir(char **ret)
{
        return runtime_dir(false, ret);
}

int pl_runtime_make_users(const char *dir)
{
        struct stat st;
        int dfd, r = 0;

        if (!dir)
                return -EINVAL;
        dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        if (mkdirat(dfd, PL_RUNTIME_USERS, 0700) < 0 && errno != EEXIST)
                r = -errno;
        else if (fstatat(dfd, PL_RUNTIME_USERS, &st, AT_SYMLINK_NOFOLLOW) < 0)
                r = -errno;
        else if (!S_ISDIR(st.st_mode))
                r = -ENOTDIR;
        else if (st.st_uid != geteuid())
                r = -EPERM;
        else if (fchmodat(dfd, PL_RUNTIME_USERS, 01733, 0) < 0)
                r = -errno;
        close(dfd);
        return r;
}
