/* SPDX-License-Identifier: MIT */
/*
 * reg-dir.h: what registry.c (the reader) and reg-admin.c (the writer
 * behind lodctr and unlodctr) share about the registry directory, beyond
 * the names registry.h offers everyone.  Implemented by reg-dir.c, which
 * parses no manifest.  The format itself is documented in lodctr(8).
 */
#ifndef PERFLIBD_REG_DIR_H
#define PERFLIBD_REG_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "perflib.h"

/* DIR/{guid}.man: the manifest; DIR/{guid}.info: its sidecar. */
#define REG_MAN_SUFFIX ".man"
#define REG_INFO_SUFFIX ".info"
/* Lock file (flock) and temporary files: hidden, so never taken for entries. */
#define REG_LOCK_NAME ".lock"
#define REG_TEMP_PREFIX ".lodctr."

/* The sidecar's keys (key=value lines; '#' starts a comment line). */
#define REG_KEY_SOURCE "manifest"
#define REG_KEY_APP_DIR "applicationIdentityDirectory"
/* lodctr --owner: the uid the provider's countersets belong to (decimal). */
#define REG_KEY_OWNER "owner"

/* Larger files are not manifests anyone wrote by hand: refused, never read. */
#define REG_MANIFEST_MAX (16u << 20)
#define REG_INFO_MAX (64u << 10)

/*
 * Reads a whole regular file of at most max bytes (-EFBIG beyond) and adds
 * a NUL after it.  With nofollow, a symbolic link is refused (-ELOOP).
 * *ret is owned by the caller; *ret_size does not count the NUL.
 */
int reg_read_file(const char *path, size_t max, bool nofollow, char **ret, size_t *ret_size);

/* dir/name, owned by the caller. */
int reg_path(const char *dir, const char *name, char **ret);

/*
 * DIR/{guid}<suffix> for g, owned by the caller: where lodctr puts a
 * provider's files.
 */
int reg_guid_path(const char *dir, const GUID *g, const char *suffix, char **ret);

/* The last component of a path; borrows from it. */
const char *reg_base_name(const char *path);

/*
 * The sidecar's values (each NULL when absent), owned by the caller, and
 * the owner it names ((uid_t) -1 when none; ret_owner may be NULL).  A
 * missing sidecar gives two NULLs; one that is not key=value lines, or
 * whose owner is not a uid, is -EBADMSG.
 */
int reg_info_read(const char *path, char **ret_source, char **ret_app_dir, uid_t *ret_owner);

#endif /* PERFLIBD_REG_DIR_H */
