/* SPDX-License-Identifier: MIT */
/* utf.c: strict UTF-8, for instance names and self-descriptions.  Hidden. */
#ifndef PL_UTF_H
#define PL_UTF_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

/* Strict UTF-8 to wchar_t (UTF-32); *ret owned by the caller (free). */
int pl_utf8_to_wcs(const char *s, wchar_t **ret);

/* n bytes of strict UTF-8; a NUL byte counts as a character. */
bool pl_utf8_valid(const char *s, size_t n);

#endif /* PL_UTF_H */
