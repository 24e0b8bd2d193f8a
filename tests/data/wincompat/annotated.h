/*
 * Helpers annotated with every <windows.h>-level name perflib-windows.h
 * offers but __in and __out (which C++ only gets on request), written the
 * way Windows code writes them.  static FORCEINLINE, so a unit that does
 * not call one of them does not warn.
 */
#ifndef WINCOMPAT_ANNOTATED_H
#define WINCOMPAT_ANNOTATED_H

#include <string.h>

_Success_(return == ERROR_SUCCESS)
static FORCEINLINE ULONG
WinCompatCopy(_Out_writes_bytes_(Size) PVOID Destination, _In_reads_bytes_(Size) LPCVOID Source,
              _In_ ULONG Size, _Out_opt_ ULONG *Copied)
{
    memcpy(Destination, Source, Size);
    if (Copied != NULL)
        *Copied = Size;
    return ERROR_SUCCESS;
}

static FORCEINLINE VOID
WinCompatSwap(_Inout_updates_bytes_(Size) PVOID Buffer, _In_ ULONG Size, _Inout_ ULONG *Swaps,
              _Inout_opt_ ULONG *Total)
{
    PBYTE Bytes = (PBYTE) Buffer;

    for (ULONG i = 0; i < Size / 2; i++) {
        BYTE b = Bytes[i];
        Bytes[i] = Bytes[Size - 1 - i];
        Bytes[Size - 1 - i] = b;
    }
    *Swaps += 1;
    if (Total != NULL)
        *Total += Size;
}

static FORCEINLINE ULONG
WinCompatFill(__out_bcount(Size) PVOID Buffer, __in_bcount(1) LPCVOID Byte, IN ULONG Size,
              __inout_bcount(sizeof(ULONG)) ULONG *Filled, __inout ULONG *Calls,
              __inout_opt ULONG *Spare, __in_opt LPCVOID Unused)
{
    UNREFERENCED_PARAMETER(Unused);
    UNREFERENCED_PARAMETER(Spare);
    memset(Buffer, *(const BYTE *) Byte, Size);
    *Filled += Size;
    *Calls += 1;
    return Size;
}

_Ret_maybenull_
static FORCEINLINE PPERF_COUNTERSET_INSTANCE
WinCompatFind(IN HANDLE Provider, IN OPTIONAL PCWSTR Name, OUT ULONG *Looked)
{
    *Looked += 1;
    return PerfQueryInstance(Provider, &WinCompatSetGuid, Name, 0);
}

#endif
