/*
 * A provider header in the form of Microsoft's ctrpp.exe output, written
 * for test-wincompat-header.sh: selectany variables, EXTERN_C FORCEINLINE
 * functions with SAL 1 parameters.  Included by two translation units of one
 * program, so the selectany and inline forms must link.
 *
 * The variables are DECLSPEC_SELECTANY without ctrpp.exe's EXTERN_C in
 * front, inside an extern "C" block instead: GCC warns, in C and C++ alike,
 * about an initialized variable declared extern (see perflib-windows.h).
 */
#ifndef WINCOMPAT_COUNTERS_H
#define WINCOMPAT_COUNTERS_H

#ifdef __cplusplus
extern "C" {
#endif

#define WINCOMPAT_REQUESTS 1
#define WINCOMPAT_BYTES 2

DECLSPEC_SELECTANY GUID WinCompatProviderGuid =
        { 0x7a3c0d11, 0x52e8, 0x4f61, { 0xa9, 0x0e, 0x3b, 0x6d, 0x14, 0xc2, 0x88, 0x05 } };
DECLSPEC_SELECTANY GUID WinCompatSetGuid =
        { 0x7a3c0d12, 0x52e8, 0x4f61, { 0xa9, 0x0e, 0x3b, 0x6d, 0x14, 0xc2, 0x88, 0x05 } };
DECLSPEC_SELECTANY HANDLE WinCompatProvider = NULL;

DECLSPEC_SELECTANY struct {
        PERF_COUNTERSET_INFO CounterSet;
        PERF_COUNTER_INFO Counter0;
        PERF_COUNTER_INFO Counter1;
} WinCompatSetInfo = {
        { { 0x7a3c0d12, 0x52e8, 0x4f61, { 0xa9, 0x0e, 0x3b, 0x6d, 0x14, 0xc2, 0x88, 0x05 } },
          { 0x7a3c0d11, 0x52e8, 0x4f61, { 0xa9, 0x0e, 0x3b, 0x6d, 0x14, 0xc2, 0x88, 0x05 } },
          2, PERF_COUNTERSET_MULTI_INSTANCES },
        { WINCOMPAT_REQUESTS, PERF_COUNTER_RAWCOUNT, 0, sizeof(ULONG), PERF_DETAIL_NOVICE, 0, 0 },
        { WINCOMPAT_BYTES, PERF_COUNTER_BULK_COUNT, 0, sizeof(ULONGLONG), PERF_DETAIL_NOVICE, 0, 0 },
};

#ifdef __cplusplus
}
#endif

/* Defined in the other translation unit: its view of the shared variables. */
EXTERN_C ULONG WinCompatOtherUnit(_Out_ PVOID *ProviderSeen, _Out_ ULONG *NumCounters);

EXTERN_C FORCEINLINE
VOID
WinCompatCleanup(
    VOID
    )
{
    if (WinCompatProvider != NULL) {
        PerfStopProvider(WinCompatProvider);
        WinCompatProvider = NULL;
    }
}

EXTERN_C FORCEINLINE
ULONG
WinCompatInitialize(
    __in_opt PERFLIBREQUEST NotificationCallback,
    __inout_opt PVOID Context
    )
{
    ULONG Status;

    UNREFERENCED_PARAMETER(Context);
    Status = PerfStartProvider(&WinCompatProviderGuid, NotificationCallback, &WinCompatProvider);
    if (Status != ERROR_SUCCESS) {
        WinCompatProvider = NULL;
        return Status;
    }
    Status = PerfSetCounterSetInfo(WinCompatProvider, &WinCompatSetInfo.CounterSet,
                                   sizeof(WinCompatSetInfo));
    if (Status != ERROR_SUCCESS)
        WinCompatCleanup();
    return Status;
}

#endif
