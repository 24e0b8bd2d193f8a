/*
 * The program every build of test-wincompat-header.sh runs: the provider of
 * counters.h started, an instance published and read back through the
 * annotated helpers, and the other unit's view of the selectany variables,
 * which must be this unit's.  Prints "wincompat: ok" or what differed.
 */
#ifndef WINCOMPAT_RUN_H
#define WINCOMPAT_RUN_H

#include <stdio.h>

#define WINCOMPAT_FAIL(what) (fprintf(stderr, "wincompat: %s\n", (what)), 1)

static int WinCompatValues(PPERF_COUNTERSET_INSTANCE Instance)
{
    /* The automatic layout of { ULONG; ULONGLONG; }, as in windows-provider.c. */
    struct Data { ULONG Requests; ULONGLONG Bytes; } Data;
    ULONG Copied = 0, Swaps = 0, Filled = 0, Calls = 0;
    BYTE Word[4] = { 1, 2, 3, 4 }, Zero = 0;

    if (WinCompatCopy(&Data, Instance + 1, sizeof(Data), &Copied) != ERROR_SUCCESS ||
        Copied != sizeof(Data))
        return WINCOMPAT_FAIL("copy");
    if (Data.Requests != 7 || Data.Bytes != 4096)
        return WINCOMPAT_FAIL("counter values");
    WinCompatSwap(Word, sizeof(Word), &Swaps, NULL);
    if (Word[0] != 4 || Word[3] != 1 || Swaps != 1)
        return WINCOMPAT_FAIL("swap");
    if (WinCompatFill(Word, &Zero, sizeof(Word), &Filled, &Calls, NULL, NULL) != 4 ||
        Word[0] != 0 || Filled != 4 || Calls != 1)
        return WINCOMPAT_FAIL("fill");
    return 0;
}

static int WinCompatRun(void)
{
    PPERF_COUNTERSET_INSTANCE Instance;
    PVOID Seen = NULL;
    ULONG NumCounters = 0, Looked = 0;
    int r;

    if (WinCompatInitialize(NULL, NULL) != ERROR_SUCCESS)
        return WINCOMPAT_FAIL("initialize");
    Instance = PerfCreateInstance(WinCompatProvider, &WinCompatSetGuid, L"one", 0);
    if (Instance == NULL)
        return WinCompatCleanup(), WINCOMPAT_FAIL("create instance");
    PerfSetULongCounterValue(WinCompatProvider, Instance, WINCOMPAT_REQUESTS, 7);
    PerfSetULongLongCounterValue(WinCompatProvider, Instance, WINCOMPAT_BYTES, 4096);
    r = WinCompatValues(Instance);
    if (r == 0 && (WinCompatFind(WinCompatProvider, L"one", &Looked) != Instance || Looked != 1))
        r = WINCOMPAT_FAIL("query instance");
    if (r == 0 && (WinCompatOtherUnit(&Seen, &NumCounters) != ERROR_SUCCESS ||
                   Seen != WinCompatProvider || NumCounters != 2))
        r = WINCOMPAT_FAIL("the other unit has other selectany variables");
    PerfDeleteInstance(WinCompatProvider, Instance);
    WinCompatCleanup();
    if (r == 0)
        printf("wincompat: ok\n");
    return r;
}

#endif
