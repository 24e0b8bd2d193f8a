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

static int scan_entry(const char *dir, DIR *d, const struct dirent *de,
                      int (*cb)(const char *, void *), void *userdata, unsigned *reclaimed)
{
        struct stat st;
        char *path;
        int k;

        if (!socket_name(de))
                return 0;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode))
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

int pl_scan(const char *dir, int (*cb)(const char *socket_path, void *userdata),
            void *userdata, unsigned *ret_reclaimed)
{
        unsigned reclaimed = 0;
        struct dirent *de;
        int k = 0;

        if (!dir || !cb)
                return -EINVAL;
        DIR *d = opendir(dir);
        if (!d)
                return -errno;
        while (k == 0 && (de = readdir(d)))
                k = scan_entry(dir, d, de, cb, userdata, &reclaimed);
        closedir(d);
        if (ret_reclaimed)
                *ret_reclaimed = reclaimed;
        return k;
}

