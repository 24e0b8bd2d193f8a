/* SPDX-License-Identifier: MIT */
/*
 * rrp.h: the server stubs of the few MS-RRP (Windows Remote Registry,
 * interface 338cd001-2244-31f1-aaaa-900038001003 v1.0) calls a performance
 * client makes on \PIPE\winreg, which carries MS-RRP beside PerflibV2:
 * OpenLocalMachine, OpenPerformanceData, OpenPerformanceText and
 * OpenPerformanceNlsText, BaseRegQueryValue, BaseRegGetVersion and
 * BaseRegCloseKey.  The other hives are refused with ERROR_ACCESS_DENIED,
 * BaseRegOpenKey of any subkey with ERROR_FILE_NOT_FOUND, and every other
 * opnum with the nca_s_op_rng_error fault: this is not a registry.
 *
 * Our own code: MS-RRP 3.1.5 gives the IDL, C706 chapter 14 the NDR; no
 * Debian library serves one interface of a DCE/RPC server.  Every request
 * is hostile input: each pointer, conformance and length is checked
 * against the stub before use.
 */
#ifndef PCQ_RRP_H
#define PCQ_RRP_H

#include <stddef.h>
#include <stdint.h>

#include "ndr.h"

extern const uint8_t rrp_syntax[20];

/* The keys a client may open here. */
enum rrp_hive {
        RRP_HKLM,       /* HKEY_LOCAL_MACHINE: open, but holds nothing */
        RRP_HKPD,       /* HKEY_PERFORMANCE_DATA */
        RRP_HKPT,       /* HKEY_PERFORMANCE_TEXT: names in US English */
        RRP_HKPN,       /* HKEY_PERFORMANCE_NLSTEXT: names in the server's language */
};

#define RRP_REG_SZ              1
#define RRP_REG_BINARY          3
#define RRP_REG_MULTI_SZ        7

/* The most keys one connection may hold open. */
#define RRP_MAX_KEYS            16
/* The largest value a reply carries (MS-RRP's range on lpData). */
#define RRP_MAX_DATA            0x4000000u

/* A value: data is malloc'd and owned by whoever holds the struct. */
struct rrp_value {
        uint32_t type;
        uint8_t *data;
        size_t len;
};

struct rrp_handlers {
        /*
         * The value name (UTF-16LE, units code units, no NUL) of hive:
         * ERROR_SUCCESS and *ret, or a Win32 error (ERROR_FILE_NOT_FOUND
         * for a name it does not hold).  Runs on the connection's thread.
         */
        uint32_t (*query_value)(void *ctx, enum rrp_hive hive, const uint8_t *name,
                                size_t units, struct rrp_value *ret);
        /* Gives back a value query_value made, once it is in the reply; NULL: free(data). */
        void (*release)(void *ctx, struct rrp_value *v);
        void *ctx;
};

struct rrp_stubs;

/* h must outlive the stubs.  Owned by the caller (rrp_stubs_free).  0, -EINVAL or -ENOMEM. */
int rrp_stubs_new(const struct rrp_handlers *h, struct rrp_stubs **ret);
void rrp_stubs_free(struct rrp_stubs *s);

/*
 * Runs one call: on return 0, either *ret_fault is 0 and out holds the
 * response stub, or *ret_fault is the status of a fault PDU.  -ENOMEM when
 * the response could not be built.
 */
int rrp_stubs_call(struct rrp_stubs *s, uint16_t opnum, const uint8_t *stub, size_t stub_len,
                   struct ndr_push *out, uint32_t *ret_fault);

#endif /* PCQ_RRP_H */
