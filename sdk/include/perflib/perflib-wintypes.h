/* SPDX-License-Identifier: MIT */
/*
 * The handful of Windows base types that perflib.h and winperf.h need, with
 * their Windows widths (ULONG is 32 bits here, as on Windows, not the LP64
 * unsigned long).  Each group is guarded so that a program that already has
 * its own compatibility layer (wine's, for example) can define
 * PERFLIB_NO_WINTYPES and supply them itself.
 */
#ifndef PERFLIB_WINTYPES_H
#define PERFLIB_WINTYPES_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#ifndef PERFLIB_NO_WINTYPES

#ifndef WINAPI
#define WINAPI
#endif
#ifndef CALLBACK
#define CALLBACK
#endif
#ifndef VOID
#define VOID void
#endif

typedef uint8_t BYTE, *PBYTE, *LPBYTE;
typedef uint16_t WORD, *PWORD;
typedef uint32_t DWORD, *PDWORD, *LPDWORD;
typedef int32_t LONG, *PLONG;
typedef uint32_t ULONG, *PULONG;
typedef int64_t LONGLONG, *PLONGLONG;
typedef uint64_t ULONGLONG, *PULONGLONG;
typedef uint64_t ULONG64, *PULONG64;
typedef int32_t BOOL;
typedef size_t SIZE_T;
typedef void *PVOID, *LPVOID, *HANDLE, **PHANDLE;
typedef const void *LPCVOID;
typedef wchar_t WCHAR, *PWSTR, *LPWSTR;
typedef const wchar_t *PCWSTR, *LPCWSTR;
typedef char CHAR, *PSTR, *LPSTR;
typedef const char *PCSTR, *LPCSTR;

#ifndef GUID_DEFINED
#define GUID_DEFINED
typedef struct _GUID {
        uint32_t Data1;
        uint16_t Data2;
        uint16_t Data3;
        uint8_t Data4[8];
} GUID;
#endif
typedef GUID *LPGUID;
typedef const GUID *LPCGUID;

typedef union _LARGE_INTEGER {
        struct {
                DWORD LowPart;
                LONG HighPart;
        } u;
        LONGLONG QuadPart;
} LARGE_INTEGER, *PLARGE_INTEGER;

typedef struct _SYSTEMTIME {
        WORD wYear;
        WORD wMonth;
        WORD wDayOfWeek;
        WORD wDay;
        WORD wHour;
        WORD wMinute;
        WORD wSecond;
        WORD wMilliseconds;
} SYSTEMTIME, *PSYSTEMTIME;

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

#ifndef ZeroMemory
#include <string.h>
#define ZeroMemory(p, n) memset((p), 0, (n))
#endif

/* Win32 error codes the perflib API returns. */
#ifndef ERROR_SUCCESS
#define ERROR_SUCCESS                   0UL
#define ERROR_INVALID_HANDLE            6UL
#define ERROR_NOT_ENOUGH_MEMORY         8UL
#define ERROR_GEN_FAILURE               31UL
#define ERROR_OUTOFMEMORY               14UL
#define ERROR_INVALID_PARAMETER         87UL
#define ERROR_INSUFFICIENT_BUFFER       122UL
#define ERROR_ALREADY_EXISTS            183UL
#define ERROR_NO_DATA                   232UL
#define ERROR_ACCESS_DENIED             5UL
#define ERROR_NOT_SUPPORTED             50UL
#define ERROR_TIMEOUT                   1460UL
#define ERROR_NOT_FOUND                 1168UL
#define ERROR_PATH_NOT_FOUND            3UL
#define ERROR_INVALID_DATA              13UL
#define ERROR_WMI_GUID_NOT_FOUND        4200UL
#define ERROR_WMI_INSTANCE_NOT_FOUND    4201UL
#define ERROR_WMI_ITEMID_NOT_FOUND      4202UL
#endif

#ifdef __cplusplus
extern "C" {
#endif
/*
 * The last error of the calling thread, as Windows keeps it.  Only the
 * perflib functions that report failure through a NULL return set it
 * (PerfCreateInstance, PerfQueryInstance); it is thread-local.
 */
#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
DWORD GetLastError(void);
#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
void SetLastError(DWORD err);
#ifdef __cplusplus
}
#endif

#endif /* !PERFLIB_NO_WINTYPES */

#endif /* PERFLIB_WINTYPES_H */
