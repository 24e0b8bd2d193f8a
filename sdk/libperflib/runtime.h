/* SPDX-License-Identifier: MIT */
/*
 * runtime.c: where providers put their sockets and readers look for them.
 * Both sides need it, so it is apart from the reader's API (reader.h, which
 * includes it).
 */
#ifndef PL_RUNTIME_H
#define PL_RUNTIME_H

#include <stdbool.h>
#include <sys/stat.h>

/*
 * Exported under libperflib's PERFLIB_PRIVATE version node (libperflib.sym):
 * for perflibd, the tools and the tests, not API.
 */
#define PL_PRIVATE __attribute__((visibility("default")))

/* The subdirectory of a server's runtime directory that holds other users' own. */
#define PL_RUNTIME_USERS "users"

/*
 * Where this process's providers put their sockets: $PERFLIB_RUNTIME_DIR,
 * else /run/perflib when it exists and is writable or /run is writable,
 * else $XDG_RUNTIME_DIR/perflib, else /tmp/perflib-$UID.  Created (mode 0755)
 * when missing.  When $PERFLIB_RUNTIME_DIR or /run/perflib is a server's
 * directory we may not write, our own directory in its users/ (made when
 * missing) instead.  *ret is a newly allocated string owned by the caller.
 */
PL_PRIVATE int pl_runtime_dir(char **ret);

/* The same choice for a server, which never takes a user's directory. */
PL_PRIVATE int pl_runtime_server_dir(char **ret);

/*
 * Makes dir's users/ (mode 1733), where users who may not write dir make
 * their own directories.  dir must be the caller's: -EPERM when users/ is
 * someone else's.
 */
PL_PRIVATE int pl_runtime_make_users(const char *dir);

/* Whether a user's directory (lstat) is one only its owner can write. */
bool pl_runtime_user_dir_ok(const struct stat *st);

#endif /* PL_RUNTIME_H */
