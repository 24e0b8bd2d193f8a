/* SPDX-License-Identifier: MIT */
/*
 * registry.h: the registry directory of installed manifests, shared by
 * lodctr, unlodctr and perflibd.  Its on-disk format is documented in
 * lodctr(8).  Functions return 0 or -errno and write ret_ parameters only
 * on success.  registry.c loads the entries; reg-dir.c owns the names and
 * files (reg_default_dir, reg_guid_*, reg_list); reg-desc.c the
 * descriptions.
 *
 * In short: DIR/{guid}.man is a byte copy of the manifest that installed
 * the provider {guid} (lower case, braces), DIR/{guid}.info its key=value
 * sidecar, written before and removed after the .man.  A provider appears
 * when its .man is renamed into place (IN_MOVED_TO) and disappears when it
 * is unlinked (IN_DELETE); names starting with '.' are lodctr's lock and
 * temporary files and are never entries.
 */
#ifndef PERFLIBD_REGISTRY_H
#define PERFLIBD_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perflib.h"

/*
 * The registry directory: $PERFLIB_REGISTRY_DIR, else the built-in default
 * (PERFLIB_REGISTRY_DIR_DEFAULT).  *ret is malloc'd, owned by the caller.
 */
int reg_default_dir(char **ret);

/* A file as reg_load found it: reg_reload reuses what is unchanged. */
struct reg_stamp {
        uint64_t dev, ino, size;
        int64_t mtime_ns, ctime_ns;
        uint32_t uid;                   /* its owner (a chown changes ctime too) */
};

/* One installed provider, as perflibd serves it. */
struct reg_entry {
        char *file;                     /* the installed manifest's path in the registry */
        char *app_dir;                  /* applicationIdentityDirectory given to lodctr, or NULL */
        /* The provider's description as ctrpp would generate it: deep copy, owned. */
        struct ctrpp_provider_desc *desc;
        /* Added after the first version of this header: */
        char *source;                   /* the manifest lodctr was given (absolute), or NULL */
        struct reg_stamp man_stamp;     /* of file when read */
        struct reg_stamp info_stamp;    /* of its sidecar; all zero when it had none */
        /*
         * Who may publish its countersets besides root: the user lodctr
         * named with --owner, else the one who installed it (the owner of
         * file).
         */
        uid_t owner;
};

/*
 * Reads every installed manifest of dir.  A file that no longer parses is
 * skipped with a message to log (through warn, which may be NULL) and does
 * not fail the load.  A missing directory is an empty registry.  The array
 * and everything in it are owned by the caller (reg_entries_free).
 *
 * Entries come in the order of their file names.  A file whose name is not
 * its provider's GUID, or that would list a counterset GUID an earlier
 * entry already lists, is skipped with a warning too, so that the result
 * never holds one GUID twice.
 */
int reg_load(const char *dir, void (*warn)(const char *msg, void *userdata), void *userdata,
             struct reg_entry **ret, size_t *ret_n);
/* Accepts NULL. */
void reg_entries_free(struct reg_entry *e, size_t n);

/*
 * reg_load for a registry loaded before (prev, n_prev: what reg_load or
 * reg_reload returned): an entry whose manifest and sidecar are unchanged
 * (same inode, size, mtime and ctime; lodctr always renames new files in)
 * is moved into the result instead of being parsed again, so a reload after
 * one lodctr or unlodctr parses one manifest at most.  On success prev and
 * its entries are consumed (moved or freed); on failure they are left as
 * they were, still the caller's.
 */
int reg_reload(const char *dir, struct reg_entry *prev, size_t n_prev,
               void (*warn)(const char *msg, void *userdata), void *userdata,
               struct reg_entry **ret, size_t *ret_n);

/* ---- names in the registry directory ---- */

/* "{0123abcd-...}": 38 characters and a NUL. */
#define REG_GUID_TEXT_MAX 39
/* The registry's spelling of a GUID: lower case, with braces. */
void reg_guid_format(const GUID *g, char buf[REG_GUID_TEXT_MAX]);
/* "{guid}" or "guid", any case; false when malformed. */
bool reg_guid_parse(const char *text, GUID *ret);

/* One installed provider's file, found by its name alone (nothing is parsed). */
struct reg_file {
        GUID guid;
        char *name;                     /* "{guid}.man", relative to the directory, owned */
};

/*
 * The files that install a provider, sorted by name.  A missing directory
 * has none.  The array is owned by the caller (reg_files_free).
 */
int reg_list(const char *dir, struct reg_file **ret, size_t *ret_n);
/* Accepts NULL. */
void reg_files_free(struct reg_file *f, size_t n);

/* The deep copy reg_load makes; accepts NULL (for whoever builds one with reg-desc.c). */
void reg_desc_free(struct ctrpp_provider_desc *desc);

#endif /* PERFLIBD_REGISTRY_H */
