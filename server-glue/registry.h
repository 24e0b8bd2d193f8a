/* SPDX-License-Identifier: MIT */
/*
 * registry.h: the registry directory of installed manifests, shared by
 * lodctr, unlodctr and perflibd.  Its on-disk format is documented in
 * lodctr(8).  Functions return 0 or -errno and write ret_ parameters only
 * on success.
 */
#ifndef PERFLIBD_REGISTRY_H
#define PERFLIBD_REGISTRY_H

#include <stddef.h>

#include "perflib.h"

/*
 * The registry directory: $PERFLIB_REGISTRY_DIR, else the built-in default
 * (PERFLIB_REGISTRY_DIR_DEFAULT).  *ret is malloc'd, owned by the caller.
 */
int reg_default_dir(char **ret);

/* One installed provider, as perflibd serves it. */
struct reg_entry {
        char *file;                     /* the installed manifest's path in the registry */
        char *app_dir;                  /* applicationIdentityDirectory given to lodctr, or NULL */
        /* The provider's description as ctrpp would generate it: deep copy, owned. */
        struct ctrpp_provider_desc *desc;
};

/*
 * Reads every installed manifest of dir.  A file that no longer parses is
 * skipped with a message to log (through warn, which may be NULL) and does
 * not fail the load.  A missing directory is an empty registry.  The array
 * and everything in it are owned by the caller (reg_entries_free).
 */
int reg_load(const char *dir, void (*warn)(const char *msg, void *userdata), void *userdata,
             struct reg_entry **ret, size_t *ret_n);
/* Accepts NULL. */
void reg_entries_free(struct reg_entry *e, size_t n);

#endif /* PERFLIBD_REGISTRY_H */
