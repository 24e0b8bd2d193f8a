/* SPDX-License-Identifier: MIT */
/*
 * reg-admin.h: changing the registry directory, for lodctr and unlodctr.
 *
 * Every change runs under an exclusive flock(2) on DIR/.lock, so concurrent
 * runs are serialised, and lands by rename(2) of complete, fsync'd files, so
 * a reader never sees half a file and a failure leaves the registry as it
 * was.  These functions report every problem on stderr, prefixed with the
 * program's name, and return 0 or -errno.
 */
#ifndef PERFLIBD_REG_ADMIN_H
#define PERFLIBD_REG_ADMIN_H

#include <stdbool.h>
#include <stdio.h>

#include "registry.h"

/* Exit statuses, as lodctr(8) and unlodctr(8) document them. */
#define REGADM_EXIT_OK 0
#define REGADM_EXIT_FAIL 1      /* bad input, not found, already installed, system error */
#define REGADM_EXIT_USAGE 2

struct regadm {
        const char *prog;               /* "lodctr" or "unlodctr", for messages */
        const char *registry_dir;       /* --registry-dir, borrowed from argv; NULL: default */
        bool takes_owner;               /* the program accepts --owner (lodctr) */
        const char *owner;              /* --owner USER, borrowed from argv; NULL: the caller */
        void (*usage)(FILE *f);         /* the program's --help text */
        char *dir;                      /* the directory in use (regadm_lock), owned */
        int lock_fd;                    /* -1 when not locked */
};

/* What lodctr and unlodctr make of their own arguments: 0, or -EINVAL (reported). */
struct regadm_arg_handlers {
        /* "/M:file": letter 'M' (upper case), value "file" (borrowed from argv). */
        int (*take_switch)(struct regadm *a, const char *arg, char letter, const char *value,
                           void *userdata);
        /* Any other argument that is not an option. */
        int (*take_other)(struct regadm *a, const char *arg, void *userdata);
};

/*
 * Walks the command line.  The options both programs take are handled here
 * (--registry-dir DIR or =DIR, --help, -h, /?, --version, and --owner USER
 * or =USER when a->takes_owner), as are unknown
 * "--options"; the rest goes to h.  0: go on; 1: help or version printed,
 * exit 0; -EINVAL: usage error, reported.
 */
int regadm_parse_args(struct regadm *a, int argc, char **argv,
                      const struct regadm_arg_handlers *h, void *userdata);

/*
 * Whether arg is a Windows-style switch: '/' or '-', one letter, then ':'
 * or nothing ("/M:file", "-m:file", "/Q").  An absolute path is not.
 * *ret_value points after the ':' (or at the NUL).
 */
bool regadm_switch(const char *arg, char *ret_letter, const char **ret_value);

/* Prints a usage error and "Try 'PROG --help' ..."; returns -EINVAL. */
int regadm_usage_error(const struct regadm *a, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* The exit status for what an operation returned. */
int regadm_exit_status(int r);

/*
 * Takes the registry lock, creating the directory (0755, with its parents)
 * when create is set.  Without create, a missing directory is an empty
 * registry: 0, and nothing is locked because nothing can change.  Also
 * removes what an interrupted run left (temporary files, sidecars without
 * their manifest).
 */
int regadm_lock(struct regadm *a, bool create);
/* Releases the lock and frees what regadm_lock made; accepts an unlocked a. */
void regadm_unlock(struct regadm *a);

/*
 * lodctr /M:manifest [app_dir]: validates the manifest (diagnostics on
 * stderr as ctrpp prints them), refuses any provider or counterset GUID
 * already installed (-EEXIST), and installs each provider of it.  With
 * a->owner, the sidecars name that user as the countersets' owner; only
 * root may name another user than itself (-EPERM).
 */
int regadm_install(struct regadm *a, const char *manifest, const char *app_dir);

/* unlodctr: every provider of manifest (/M:), one GUID (/G:), one providerName (/P:). */
int regadm_remove_manifest(struct regadm *a, const char *manifest);
int regadm_remove_guid(struct regadm *a, const char *guid_text);
int regadm_remove_name(struct regadm *a, const char *name);

#endif /* PERFLIBD_REG_ADMIN_H */
