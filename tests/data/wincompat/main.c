/*
 * C: perflib-windows.h first, then glibc headers that name prototype
 * parameters __in and __out, which C always gets.
 */
#include <perflib-windows.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "counters.h"
#include "annotated.h"
#include "run.h"

static ULONG Twice(__in ULONG Value, __out ULONG *Result)
{
    *Result = 2 * Value;
    return ERROR_SUCCESS;
}

int main(void)
{
    struct in_addr Loopback = { htonl(INADDR_LOOPBACK) };
    ULONG Result = 0;

    if (Twice(21, &Result) != ERROR_SUCCESS || Result != 42)
        return WINCOMPAT_FAIL("__in/__out");
    if (inet_netof(Loopback) != 127)
        return WINCOMPAT_FAIL("inet_netof");
    return WinCompatRun();
}
