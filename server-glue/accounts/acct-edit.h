/* SPDX-License-Identifier: MIT */
/*
 * acct-edit.h: changing the accounts file, for perflib-passwd.  perflibd
 * only reads it (accounts.h).
 *
 * Functions return 0 or -errno and write ret_ parameters only on success.
 */
#ifndef PL_ACCT_EDIT_H
#define PL_ACCT_EDIT_H

#include <stdint.h>

#include "accounts.h"

/*
 * Sets USER's NT hash to HASH in the file at PATH, adding the account
 * when it is not there (its name as spelt and its flags stay as they were
 * when it is), or, when HASH is NULL, deletes the account (-ENOENT when
 * there is none).  Every other line is kept byte for byte.  Holds PATH.lock (flock) across the
 * read and the write, so two runs never lose an update, and replaces the
 * file by a rename of a temporary one in the same directory, fsync'd, mode
 * 0600: a reader sees the old file or the new one, never part of one.
 * A file the format refuses is not rewritten.  ret_err, if not NULL, says
 * why on failure.
 */
int acct_edit(const char *path, const char *user, const uint8_t *hash,
              struct acct_error *ret_err);

#endif /* PL_ACCT_EDIT_H */
