/* SPDX-License-Identifier: MIT */
/*
 * runtime.c: where providers put their sockets and readers look for them.
 * Both sides need it, so it is apart from the reader's API (reader.h, which
 * includes it).
 */
#ifndef PL_RUNTIME_H
#define PL_RUNTIME_H

/*
 * Exported under libperflib's PERFLIB_PRIVATE version node (libperflib.sym):
 * for perflibd, the tools and the tests, not API.
 */
#define PL_PRIVATE __attribute__((visibility("default")))

/*
 * The runtime directory: $PERFLIB_RUNTIME_DIR, else /run/perflib when it
 * exists and is writable or /run is writable, else $XDG_RUNTIME_DIR/perflib,
 * else /tmp/perflib-$UID.  Created (mode 0755) when missing.  *ret is a
 * newly allocated string owned by the caller.
 */
PL_PRIVATE int pl_runtime_dir(char **ret);

#endif /* PL_RUNTIME_H */
