/* SPDX-License-Identifier: MIT */
/*
 * perflib-windows.h: the <windows.h>-level names that Windows provider code
 * and Microsoft's ctrpp.exe output use beside the perflib API, so that code
 * which opens with
 *
 *     #include <windows.h>
 *     #include <perflib.h>
 *
 * builds here with the one line `#include <perflib-windows.h>`.  Optional:
 * perflib.h does not include it, and code written for Linux never needs it.
 *
 * Why a header of our own name and not a windows.h shim on the include
 * path: a file called windows.h would be taken for the real one by every
 * `__has_include(<windows.h>)` and configure check of the program and its
 * libraries, would shadow Wine's or MinGW's, and would promise all of
 * windows.h when it holds a few macros.  One changed include line is
 * explicit and easy to find.
 *
 * Each name is defined only when it is not defined already, so a program or
 * a compatibility layer of its own (Wine's, say) keeps its definitions.
 * The Windows types, WINAPI, CALLBACK, VOID, TRUE, FALSE, ZeroMemory and the
 * error codes come from perflib-wintypes.h, through perflib.h.
 *
 * What the names become here:
 *   EXTERN_C            extern "C" in C++, extern in C, as on Windows
 *   DECLSPEC_SELECTANY  a weak definition: one of the copies that several
 *                       translation units define is kept, as with selectany
 *   FORCEINLINE         an always-inlined function.  In C it has GNU extern
 *                       inline semantics, so `EXTERN_C FORCEINLINE`, the form
 *                       of ctrpp.exe's headers, never emits a copy and links
 *                       from any number of translation units; in a C header
 *                       write `static FORCEINLINE` or `EXTERN_C FORCEINLINE`,
 *                       not FORCEINLINE alone (that emits an external
 *                       copy in every unit, and the copies collide at link)
 *   UNREFERENCED_PARAMETER(P)  ((void)(P)), which -Wunused-value accepts
 *   IN, OUT, OPTIONAL and the SAL annotations: nothing, as with a compiler
 *                       that does not check them
 *
 * One difference from Windows that no macro can hide: GCC warns
 * "initialized and declared 'extern'", with no option to turn it off, on
 * `EXTERN_C DECLSPEC_SELECTANY T x = value;`, the form of ctrpp.exe's
 * variables, in C and in C++ (Clang, in C only).  Write the definition
 * `DECLSPEC_SELECTANY T x = value;` inside an extern "C" block, as the
 * header our ctrpp(1) generates does.  EXTERN_C declarations and
 * `EXTERN_C FORCEINLINE` functions are not affected.
 *
 * __in and __out: libstdc++ names function parameters __in and __out in
 * its headers (<iostream>, <string>, <algorithm>...), so an empty __in
 * defined before one of them breaks a C++ build.  They are therefore
 * defined for C only (glibc uses them only as parameter names in
 * prototypes, which stay valid unnamed), and for C++ only when the program
 * defines PERFLIB_WINDOWS_SAL_IN_OUT before including this header, having
 * included every C++ standard header it needs first.  The other SAL names
 * (__in_opt, __inout, _In_ ...) name nothing in glibc's or libstdc++'s
 * headers and are always defined.
 */
#ifndef PERFLIB_WINDOWS_H
#define PERFLIB_WINDOWS_H

#include "perflib.h"

#ifndef EXTERN_C
#ifdef __cplusplus
#define EXTERN_C extern "C"
#else
#define EXTERN_C extern
#endif
#endif

#ifndef DECLSPEC_SELECTANY
#define DECLSPEC_SELECTANY __attribute__((__weak__))
#endif

#ifndef FORCEINLINE
#ifdef __cplusplus
#define FORCEINLINE inline __attribute__((__always_inline__))
#else
#define FORCEINLINE __inline__ __attribute__((__always_inline__, __gnu_inline__))
#endif
#endif

#ifndef UNREFERENCED_PARAMETER
#define UNREFERENCED_PARAMETER(P) ((void)(P))
#endif

#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef OPTIONAL
#define OPTIONAL
#endif

/* SAL 2 (Visual Studio 2008 and later, ctrpp.exe since Windows 8). */
#ifndef _In_
#define _In_
#endif
#ifndef _In_opt_
#define _In_opt_
#endif
#ifndef _Out_
#define _Out_
#endif
#ifndef _Out_opt_
#define _Out_opt_
#endif
#ifndef _Inout_
#define _Inout_
#endif
#ifndef _Inout_opt_
#define _Inout_opt_
#endif
#ifndef _Inout_updates_bytes_
#define _Inout_updates_bytes_(n)
#endif
#ifndef _In_reads_bytes_
#define _In_reads_bytes_(n)
#endif
#ifndef _Out_writes_bytes_
#define _Out_writes_bytes_(n)
#endif
#ifndef _Success_
#define _Success_(x)
#endif
#ifndef _Ret_maybenull_
#define _Ret_maybenull_
#endif

/* SAL 1 (the Vista SDK, ctrpp.exe -legacy). */
#ifndef __in_opt
#define __in_opt
#endif
#ifndef __inout_opt
#define __inout_opt
#endif
#ifndef __inout
#define __inout
#endif
#ifndef __inout_bcount
#define __inout_bcount(n)
#endif
#ifndef __out_bcount
#define __out_bcount(n)
#endif
#ifndef __in_bcount
#define __in_bcount(n)
#endif
#if !defined(__cplusplus) || defined(PERFLIB_WINDOWS_SAL_IN_OUT)
#ifndef __in
#define __in
#endif
#ifndef __out
#define __out
#endif
#endif

#endif /* PERFLIB_WINDOWS_H */
