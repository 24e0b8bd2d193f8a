/* SPDX-License-Identifier: MIT */
/*
 * The runtime directory, where providers put their collect-service sockets
 * and readers look for them: chosen from the environment, created when
 * missing.
 */
#include <errno.h>
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

static int try_dir(const char *path, char **ret)
{
        int r = ensure_dir(path);
        if (r < 0)
                return r;
        char *s = strdup(path);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* /run/perflib only when it is ours to use: writable, or /run lets us create it. */
static int try_system_dir(char **ret)
{
        if (access("/run/perflib", W_OK | X_OK) == 0 ||
            (access("/run/perflib", F_OK) < 0 && access("/run", W_OK | X_OK) == 0))
                return try_dir("/run/perflib", ret);
        return -EACCES;
}

int pl_runtime_dir(char **ret)
{
        char buf[4096];
        const char *e;

        if (!ret)
                return -EINVAL;
        e = getenv("PERFLIB_RUNTIME_DIR");
        if (e && *e)
                return try_dir(e, ret);
        if (try_system_dir(ret) == 0)
                return 0;
        e = getenv("XDG_RUNTIME_DIR");
        if (e && *e && (size_t) snprintf(buf, sizeof(buf), "%s/perflib", e) < sizeof(buf) &&
            try_dir(buf, ret) == 0)
                return 0;
        snprintf(buf, sizeof(buf), "/tmp/perflib-%u", (unsigned) getuid());
        return try_dir(buf, ret);
}
