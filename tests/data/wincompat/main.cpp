/*
 * C++: <iostream>, <string> and <vector> before perflib-windows.h when
 * STD_FIRST is defined, after it otherwise.  __in and __out exist only with
 * PERFLIB_WINDOWS_SAL_IN_OUT, which test-wincompat-header.sh defines only
 * with STD_FIRST.
 */
#ifdef STD_FIRST
#include <iostream>
#include <string>
#include <vector>
#endif
#include <perflib-windows.h>
#ifndef STD_FIRST
#include <iostream>
#include <string>
#include <vector>
#endif
#include "counters.h"
#include "annotated.h"
#include "run.h"

#ifdef PERFLIB_WINDOWS_SAL_IN_OUT
static ULONG Twice(__in ULONG Value, __out ULONG *Result)
{
    *Result = 2 * Value;
    return ERROR_SUCCESS;
}
#elif defined(__in) || defined(__out)
#error "__in or __out defined in C++ without PERFLIB_WINDOWS_SAL_IN_OUT"
#else
static ULONG Twice(ULONG Value, ULONG *Result)
{
    *Result = 2 * Value;
    return ERROR_SUCCESS;
}
#endif

int main()
{
    std::vector<std::string> Words = { "wincompat", "c++" };
    ULONG Result = 0;

    if (Twice(21, &Result) != ERROR_SUCCESS || Result != 42)
        return WINCOMPAT_FAIL("__in/__out");
    std::cout << Words[0] << ": " << Words[1] << " units built" << std::endl;
    return WinCompatRun();
}
