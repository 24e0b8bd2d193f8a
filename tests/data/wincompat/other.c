/* The second unit of every build: it includes counters.h too. */
#include <perflib-windows.h>
#include "counters.h"

EXTERN_C ULONG WinCompatOtherUnit(_Out_ PVOID *ProviderSeen, _Out_ ULONG *NumCounters)
{
    *ProviderSeen = WinCompatProvider;
    *NumCounters = WinCompatSetInfo.CounterSet.NumCounters;
    return ERROR_SUCCESS;
}
