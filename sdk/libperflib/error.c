/* SPDX-License-Identifier: MIT */
/*
 * The calling thread's last error (GetLastError, SetLastError), as Windows
 * keeps it: the instance calls report why they returned NULL through it,
 * and leave it alone when they succeed.
 */
#include "perflib.h"

static __thread DWORD last_error;

DWORD GetLastError(void)
{
        return last_error;
}

void SetLastError(DWORD err)
{
        last_error = err;
}
