/* SPDX-License-Identifier: MIT */
/*
 * Discovery: the provider sockets of a runtime directory, each probed; the
 * live ones reported, the dead ones' removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "reader.h"
#include "svc.h"

static bool socket_name(const struct dirent *de)
{
        size_t len = strlen(de->d_name);
        size_t pre = strlen(PL_SVC_SOCKET_PREFIX), suf = strlen(PL_SVC_SOCKET_SUFFIX);

        if (de->d_type != DT_UNKNOWN && de->d_type != DT_SOCK)
                return false;
        return len > pre + suf && strncmp(de->d_name, PL_SVC_SOCKET_PREFIX, pre) == 0 &&
               strcmp(de->d_name + len - suf, PL_SVC_SOCKET_SUFFIX) == 0;
}

/* 0: someone listens; -ECONNREFUSED: nobody does; other -errno: cannot tell. */
static int probe(const char *path)
{
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_un sa;
        int dfd, k;

        if (fd < 0)
                return -errno;
        k = pl_sockaddr(path, &sa, &dfd);
        if (k == 0)
                k = connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ? -errno : 0;
        /* A full backlog means a live listener that is busy. */
        if (k == -EAGAIN)
                k = 0;
        if (dfd >= 0)
                close(dfd);
        close(fd);
        return k;
}

/*
 * Removes a dead provider's socket, unless a new provider has meanwhile
 * replaced it under the same name (the file is no longer the one probed).
 */
static bool reclaim(int dfd, const char *name, const struct stat *before)
{
        struct stat now;

        if (fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
            now.st_ino != before->st_ino || now.st_dev != before->st_dev)
                return false;
        return unlinkat(dfd, name, 0) == 0;
}

/* owner: the uid every socket must belong to, or -1 for any. */
static int scan_entry(const char *dir, DIR *d, const struct dirent *de, uid_t owner,
                      int (*cb)(const char *, void *), void *userdata, unsigned *reclaimed)
{
        struct stat st;
        char *path;
        int k;

        if (!socket_name(de))
                return 0;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode))
                return 0;
        /* In a user's directory, only what its owner made: nothing else costs a connect. */
        if (owner != (uid_t) -1 && st.st_uid != owner)
                return 0;
        if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
                return -ENOMEM;
        k = probe(path);
        if (k == -ECONNREFUSED)
                *reclaimed += reclaim(dirfd(d), de->d_name, &st);
        /*
         * Short of descriptors or memory, the probe cannot tell: the socket
         * is reported, so that the caller's own open meets the shortage and
         * can retry, rather than never hearing of a live provider.
         */
        if (k == -EMFILE || k == -ENFILE || k == -ENOMEM || k == -ENOBUFS)
                k = 0;
        k = k == 0 ? cb(path, userdata) : 0;
        free(path);
        return k;
}

static int scan_dir(const char *dir, uid_t owner, int (*cb)(const char *, void *),
                    void *userdata, unsigned *reclaimed)
{
        struct dirent *de;
        int k = 0;
        DIR *d = opendir(dir);

        if (!d)
                return -errno;
        while (k == 0 && (de = readdir(d)))
                k = scan_entry(dir, d, de, owner, cb, userdata, reclaimed);
        closedir(d);
        return k;
}

/* Users' directories read per scan, in all and per user: a bound on what users can make us do. */
#define MAX_USER_DIRS           1024
#define MAX_DIRS_PER_USER       4

struct user_count {
        uid_t uid;
        unsigned n;
};

/* Whether owner may have one more directory read, counting it. */
static bool count_user_dir(struct user_count *seen, size_t *n_seen, uid_t owner)
{
        for (size_t i = 0; i < *n_seen; i++)
                if (seen[i].uid == owner)
                        return ++seen[i].n <= MAX_DIRS_PER_USER;
        seen[(*n_seen)++] = (struct user_count){ owner, 1 };
        return true;
}

/* The directories of dir/users that only their owners can write, each with its owner's sockets. */
static int scan_users(const char *dir, int (*cb)(const char *, void *), void *userdata,
                      unsigned *reclaimed)
{
        struct user_count *seen = calloc(MAX_USER_DIRS, sizeof(*seen));
        size_t n_seen = 0;
        struct dirent *de;
        char *users = NULL, *sub;
        DIR *d = NULL;
        int k = 0;

        if (!seen || asprintf(&users, "%s/" PL_RUNTIME_USERS, dir) < 0) {
                k = -ENOMEM;
                goto out;
        }
        d = opendir(users);
        while (d && k == 0 && n_seen < MAX_USER_DIRS && (de = readdir(d))) {
                struct stat st;

                if (de->d_name[0] == '.' ||
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !pl_runtime_user_dir_ok(&st) || !count_user_dir(seen, &n_seen, st.st_uid))
                        continue;
                if (asprintf(&sub, "%s/%s", users, de->d_name) < 0) {
                        k = -ENOMEM;
                        break;
                }
                k = scan_dir(sub, st.st_uid, cb, userdata, reclaimed);
                /* A directory gone meanwhile is no error. */
                if (k == -ENOENT || k == -ENOTDIR || k == -EACCES)
                        k = 0;
                free(sub);
        }
out:
        if (d)
                closedir(d);
        free(users);
        free(seen);
        return k;
}

int pl_scan(const char *dir, int (*cb)(const char *socket_path, void *userdata),
            void *userdata, unsigned *ret_reclaimed)
{
        unsigned reclaimed = 0;
        int k;

        if (!dir || !cb)
                return -EINVAL;
        k = scan_dir(dir, (uid_t) -1, cb, userdata, &reclaimed);
        if (k == 0)
                k = scan_users(dir, cb, userdata, &reclaimed);
        if (ret_reclaimed)
                *ret_reclaimed = reclaimed;
        return k;
}

static void stamp_add(struct pl_scan_stamp *s, const struct stat *st)
{
        uint64_t t = (uint64_t) st->st_mtim.tv_sec * 1000000000u + (uint64_t) st->st_mtim.tv_nsec;

        s->sum = (s->sum ^ t ^ (uint64_t) st->st_ino) * 1099511628211u;
        if (st->st_mtim.tv_sec > s->newest.tv_sec ||
            (st->st_mtim.tv_sec == s->newest.tv_sec && st->st_mtim.tv_nsec > s->newest.tv_nsec))
                s->newest = st->st_mtim;
}

/* The users' directories of users (its fd, taken), into s as pl_scan would read them. */
static void stamp_users(int ufd, struct pl_scan_stamp *s)
{
        struct user_count *seen = calloc(MAX_USER_DIRS, sizeof(*seen));
        DIR *d = seen ? fdopendir(ufd) : NULL;
        size_t n_seen = 0;
        struct dirent *de;
        struct stat st;

        if (!d)
                close(ufd);
        while (d && n_seen < MAX_USER_DIRS && (de = readdir(d)))
                if (de->d_name[0] != '.' &&
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    pl_runtime_user_dir_ok(&st) && count_user_dir(seen, &n_seen, st.st_uid))
                        stamp_add(s, &st);
        if (d)
                closedir(d);
        free(seen);
}

int pl_scan_stamp(const char *dir, struct pl_scan_stamp *ret)
{
        struct pl_scan_stamp s = { .sum = 14695981039346656037u };
        struct stat st;
        char *users;

        if (!dir || !ret)
                return -EINVAL;
        if (stat(dir, &st) < 0)
                return -errno;
        stamp_add(&s, &st);
        if (asprintf(&users, "%s/" PL_RUNTIME_USERS, dir) < 0)
                return -ENOMEM;
        /*
         * Called for every request: with no user's directory in users/ (a
         * link count of 2 says so; btrfs, which does not count, says 1) one
         * lstat is the whole cost.
         */
        if (lstat(users, &st) == 0 && S_ISDIR(st.st_mode)) {
                stamp_add(&s, &st);
                if (st.st_nlink != 2) {
                        int ufd = open(users, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                        if (ufd >= 0)
                                stamp_users(ufd, &s);
                }
        }
        free(users);
        *ret = s;
        return 0;
}
