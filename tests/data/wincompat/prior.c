/*
 * Compiled only: a program that defined some of the names itself, and
 * includes perflib.h before perflib-windows.h, twice.  With -Werror a
 * redefinition would fail the build; the asserts check that the program's
 * own values are the ones left.
 */
#define IN 7
#define EXTERN_C extern
#define UNREFERENCED_PARAMETER(P) ((void)sizeof(P))
#define _In_ const
#define __in const
#include <perflib.h>
#include <perflib-windows.h>
#include <perflib-windows.h>

_Static_assert(IN == 7, "IN was redefined");

static int Length(_In_ char *Text, __in char *More)
{
    UNREFERENCED_PARAMETER(More);
    return Text[0] != 0;
}

EXTERN_C int PriorMain(void);
int PriorMain(void)
{
    return Length("x", "y");
}
