/* SPDX-License-Identifier: MIT */
/*
 * perflib.h for Perflib for Linux: the PerflibV2 provider API, source
 * compatible with Windows.  Names, types, layouts and Win32 error codes are
 * Windows'; PCWSTR is const wchar_t * (UTF-32 here).  Linux additions are
 * marked below: Windows-style ones carry "Utf8" in their name, Linux-style
 * ones the pl_ prefix (those return 0 or -errno).
 *
 * Counter data layout (the one Offset convention): the counter data block of
 * an instance starts right after its PERF_COUNTERSET_INSTANCE header, at
 * (BYTE *)Instance + sizeof(PERF_COUNTERSET_INSTANCE), and a counter's
 * PERF_COUNTER_INFO.Offset is relative to that start.  When every Offset of a
 * template is 0 (what Windows ctrpp emits for user-mode providers),
 * PerfSetCounterSetInfo lays the counters out itself, in template order, each
 * aligned to its own size: the layout of a C struct with those members in
 * that order.  It does the same, as Windows does, when the template's offsets
 * are misaligned or overlap.  A value's width (4 or 8 bytes) comes from the
 * size bits of its Type; Size is the room the counter takes, and is ignored
 * for PERF_ATTRIB_BY_REFERENCE counters.  See docs/segment-format.md.
 */
#ifndef PERFLIB_PERFLIB_H
#define PERFLIB_PERFLIB_H

#include "perflib-wintypes.h"
#include "winperf.h"
#include "perflib-description.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PERFLIB_API __attribute__((visibility("default")))
#else
#define PERFLIB_API
#endif

#define PERFLIB_VERSION_MAJOR 0
#define PERFLIB_VERSION_MINOR 1

/* Provider types, as Windows' perflib.h has them; only user mode exists here. */
#define PERF_PROVIDER_USER_MODE                 0
#define PERF_PROVIDER_KERNEL_MODE               1
#define PERF_PROVIDER_DRIVER                    2

/* Counterset instance types (InstanceType of PERF_COUNTERSET_INFO). */
#define PERF_COUNTERSET_FLAG_MULTIPLE           2
#define PERF_COUNTERSET_FLAG_AGGREGATE          4
#define PERF_COUNTERSET_FLAG_HISTORY            8
#define PERF_COUNTERSET_FLAG_INSTANCE           16
#define PERF_COUNTERSET_SINGLE_INSTANCE         0
#define PERF_COUNTERSET_MULTI_INSTANCES         (PERF_COUNTERSET_FLAG_MULTIPLE)
#define PERF_COUNTERSET_SINGLE_AGGREGATE        (PERF_COUNTERSET_FLAG_AGGREGATE)
#define PERF_COUNTERSET_MULTI_AGGREGATE \
        (PERF_COUNTERSET_FLAG_AGGREGATE | PERF_COUNTERSET_FLAG_MULTIPLE)
#define PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY \
        (PERF_COUNTERSET_FLAG_HISTORY | PERF_COUNTERSET_SINGLE_AGGREGATE)
#define PERF_COUNTERSET_INSTANCE_AGGREGATE \
        (PERF_COUNTERSET_MULTI_AGGREGATE | PERF_COUNTERSET_FLAG_INSTANCE)

/* Aggregation functions. */
#define PERF_AGGREGATE_UNDEFINED                0
#define PERF_AGGREGATE_TOTAL                    1
#define PERF_AGGREGATE_AVG                      2
#define PERF_AGGREGATE_MIN                      3
#define PERF_AGGREGATE_MAX                      4

/* Counter attributes (PERF_COUNTER_INFO.Attrib). */
#define PERF_ATTRIB_BY_REFERENCE                0x0000000000000001ULL
#define PERF_ATTRIB_NO_DISPLAYABLE              0x0000000000000002ULL
#define PERF_ATTRIB_NO_GROUP_SEPARATOR          0x0000000000000004ULL
#define PERF_ATTRIB_DISPLAY_AS_REAL             0x0000000000000008ULL
#define PERF_ATTRIB_DISPLAY_AS_HEX              0x0000000000000010ULL

/* Notification request codes passed to a PERFLIBREQUEST callback. */
#define PERF_ADD_COUNTER                        1
#define PERF_REMOVE_COUNTER                     2
#define PERF_ENUM_INSTANCES                     3
#define PERF_ENUMERATE_INSTANCES                PERF_ENUM_INSTANCES     /* our first name */
#define PERF_COLLECT_START                      5
#define PERF_COLLECT_END                        6
#define PERF_FILTER                             9

#define PERF_WILDCARD_COUNTER                   0xFFFFFFFF
#define PERF_WILDCARD_INSTANCE                  L"*"
#define PERF_AGGREGATE_INSTANCE                 L"_Total"
#define PERF_MAX_INSTANCE_NAME                  1024

/*
 * Block types of PERF_COUNTER_HEADER (consumer side, MS-PCQ 2.2.4.8).  The
 * MS-PCQ table calls 2 and 4 PERF_MULTI_COUNTERS and PERF_MULTI_INSTANCES,
 * which are also the names of the structures those blocks hold; Windows'
 * perflib.h names the values PERF_MULTIPLE_*, and so do we, so that both the
 * values and the structures keep their Windows names.
 */
typedef enum _PerfCounterDataType {
        PERF_ERROR_RETURN = 0,
        PERF_SINGLE_COUNTER = 1,
        PERF_MULTIPLE_COUNTERS = 2,
        PERF_MULTIPLE_INSTANCES = 4,
        PERF_COUNTERSET = 6,
} PerfCounterDataType;

typedef struct _PERF_COUNTERSET_INFO {
        GUID CounterSetGuid;
        GUID ProviderGuid;
        ULONG NumCounters;
        ULONG InstanceType;
} PERF_COUNTERSET_INFO, *PPERF_COUNTERSET_INFO;

typedef struct _PERF_COUNTER_INFO {
        ULONG CounterId;
        ULONG Type;
        ULONGLONG Attrib;
        ULONG Size;
        ULONG DetailLevel;
        LONG Scale;
        ULONG Offset;
} PERF_COUNTER_INFO, *PPERF_COUNTER_INFO;

typedef struct _PERF_COUNTERSET_INSTANCE {
        GUID CounterSetGuid;
        ULONG dwSize;
        ULONG InstanceId;
        ULONG InstanceNameOffset;
        ULONG InstanceNameSize;
} PERF_COUNTERSET_INSTANCE, *PPERF_COUNTERSET_INSTANCE;

typedef struct _PERF_COUNTER_IDENTITY {
        GUID CounterSetGuid;
        ULONG BufferSize;
        ULONG CounterId;
        ULONG InstanceId;
        ULONG MachineOffset;
        ULONG NameOffset;
        ULONG Reserved;
} PERF_COUNTER_IDENTITY, *PPERF_COUNTER_IDENTITY;

typedef ULONG (WINAPI *PERFLIBREQUEST)(ULONG RequestCode, PVOID Buffer,
                                       ULONG BufferSize);
typedef LPVOID (CALLBACK *PERF_MEM_ALLOC)(SIZE_T AllocSize, LPVOID pContext);
typedef void (CALLBACK *PERF_MEM_FREE)(LPVOID pBuffer, LPVOID pContext);

typedef struct _PROVIDER_CONTEXT {
        DWORD ContextSize;
        DWORD Reserved;
        PERFLIBREQUEST ControlCallback;
        PERF_MEM_ALLOC MemAllocRoutine;
        PERF_MEM_FREE MemFreeRoutine;
        LPVOID pMemContext;
} PERF_PROVIDER_CONTEXT, *PPERF_PROVIDER_CONTEXT;

#ifdef __cplusplus
#define PERFLIB_STATIC_ASSERT static_assert
#else
#define PERFLIB_STATIC_ASSERT _Static_assert
#endif
PERFLIB_STATIC_ASSERT(sizeof(GUID) == 16, "GUID layout");
PERFLIB_STATIC_ASSERT(sizeof(PERF_COUNTERSET_INFO) == 40, "PERF_COUNTERSET_INFO layout");
PERFLIB_STATIC_ASSERT(sizeof(PERF_COUNTER_INFO) == 32, "PERF_COUNTER_INFO layout");
PERFLIB_STATIC_ASSERT(offsetof(PERF_COUNTER_INFO, Attrib) == 8, "PERF_COUNTER_INFO layout");
PERFLIB_STATIC_ASSERT(sizeof(PERF_COUNTERSET_INSTANCE) == 32, "PERF_COUNTERSET_INSTANCE layout");
PERFLIB_STATIC_ASSERT(sizeof(PERF_COUNTER_IDENTITY) == 40, "PERF_COUNTER_IDENTITY layout");
PERFLIB_STATIC_ASSERT(sizeof(PERF_PROVIDER_CONTEXT) == 8 + 4 * sizeof(void *),
                      "PERF_PROVIDER_CONTEXT layout");

/*
 * Provider lifetime.  The handle returned in *phProvider is owned by the
 * caller and released by PerfStopProvider, which also deletes every instance
 * the provider still has and withdraws its segment.
 */
PERFLIB_API ULONG PerfStartProvider(LPGUID ProviderGuid,
                                    PERFLIBREQUEST ControlCallback,
                                    HANDLE *phProvider);
PERFLIB_API ULONG PerfStartProviderEx(LPGUID ProviderGuid,
                                      PPERF_PROVIDER_CONTEXT ProviderContext,
                                      HANDLE *Provider);
PERFLIB_API ULONG PerfStopProvider(HANDLE ProviderHandle);

/* The template is copied; the caller keeps ownership of it. */
PERFLIB_API ULONG PerfSetCounterSetInfo(HANDLE ProviderHandle,
                                        PPERF_COUNTERSET_INFO Template,
                                        ULONG TemplateSize);

/*
 * Instances.  The returned block lives in the provider's shared-memory
 * segment and belongs to the provider until PerfDeleteInstance (or
 * PerfStopProvider); on failure NULL is returned and GetLastError() says why.
 */
PERFLIB_API PPERF_COUNTERSET_INSTANCE PerfCreateInstance(HANDLE ProviderHandle,
                                                         LPCGUID CounterSetGuid,
                                                         PCWSTR Name, ULONG Id);
PERFLIB_API ULONG PerfDeleteInstance(HANDLE Provider,
                                     PPERF_COUNTERSET_INSTANCE InstanceBlock);
PERFLIB_API PPERF_COUNTERSET_INSTANCE PerfQueryInstance(HANDLE ProviderHandle,
                                                        LPCGUID CounterSetGuid,
                                                        PCWSTR Name, ULONG Id);

/* Linux addition: the same two calls with a UTF-8 instance name. */
PERFLIB_API PPERF_COUNTERSET_INSTANCE PerfCreateInstanceUtf8(HANDLE ProviderHandle,
                                                             LPCGUID CounterSetGuid,
                                                             const char *Name, ULONG Id);
PERFLIB_API PPERF_COUNTERSET_INSTANCE PerfQueryInstanceUtf8(HANDLE ProviderHandle,
                                                            LPCGUID CounterSetGuid,
                                                            const char *Name, ULONG Id);

/*
 * Counter updates.  None of these takes a lock or makes a system call; the
 * Increment/Decrement calls are atomic read-modify-writes, so concurrent
 * updates from many threads are all counted.
 */
PERFLIB_API ULONG PerfSetCounterRefValue(HANDLE Provider,
                                         PPERF_COUNTERSET_INSTANCE Instance,
                                         ULONG CounterId, PVOID Address);
PERFLIB_API ULONG PerfSetULongCounterValue(HANDLE Provider,
                                           PPERF_COUNTERSET_INSTANCE Instance,
                                           ULONG CounterId, ULONG Value);
PERFLIB_API ULONG PerfSetULongLongCounterValue(HANDLE Provider,
                                               PPERF_COUNTERSET_INSTANCE Instance,
                                               ULONG CounterId, ULONGLONG Value);
PERFLIB_API ULONG PerfIncrementULongCounterValue(HANDLE Provider,
                                                 PPERF_COUNTERSET_INSTANCE Instance,
                                                 ULONG CounterId, ULONG Value);
PERFLIB_API ULONG PerfIncrementULongLongCounterValue(HANDLE Provider,
                                                     PPERF_COUNTERSET_INSTANCE Instance,
                                                     ULONG CounterId, ULONGLONG Value);
PERFLIB_API ULONG PerfDecrementULongCounterValue(HANDLE Provider,
                                                 PPERF_COUNTERSET_INSTANCE Instance,
                                                 ULONG CounterId, ULONG Value);
PERFLIB_API ULONG PerfDecrementULongLongCounterValue(HANDLE Provider,
                                                     PPERF_COUNTERSET_INSTANCE Instance,
                                                     ULONG CounterId, ULONGLONG Value);

/*
 * Linux addition: publishes the provider's self-description (ctrpp's
 * resource output; see perflib-description.h) with its segment, so that
 * readers can name its countersets and counters with no install step.  The
 * header ctrpp generates calls this from CounterInitialize().  The
 * description is copied; the caller keeps ownership of it.  Once per
 * provider, before or after its countersets are set.
 *
 * NULL strings mean "absent".  The description must not change during the
 * call.
 *
 * Returns 0; -EINVAL for a NULL or unknown handle, a NULL description, one
 * of another version or size, one whose provider GUID is not the
 * provider's, a NULL counters or countersets array with a nonzero count,
 * or a string that is not UTF-8; -EEXIST when the provider has published
 * one already; -E2BIG when it exceeds the segment's limits (16 MiB
 * flattened, PL_SEG_MAX_DESC_SIZE; 4096 countersets; 65536 counters in a
 * counterset); -ENOMEM when the segment has no room left.
 */
PERFLIB_API int pl_set_provider_description(HANDLE Provider,
                                            const struct ctrpp_provider_desc *Description);

#ifdef __cplusplus
}
#endif

#endif /* PERFLIB_PERFLIB_H */
