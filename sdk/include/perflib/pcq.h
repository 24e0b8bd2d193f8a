/* SPDX-License-Identifier: MIT */
/*
 * pcq.h: libpcq, the consumer side of Perflib for Linux.  What PDH is on
 * Windows: it talks MS-PCQ's PerflibV2 interface to perflibd (a local Unix
 * socket by default, a remote host over TCP), names counters with the
 * paths PDH writes, and turns two raw samples into the values people read
 * ("37.5" % Processor Time, "12031" Bytes/sec) exactly as each counter type
 * defines.  Link with `pkg-config --libs pcq`.
 *
 * Three layers, each usable alone:
 *   1. pcq_conn: the eight PerflibV2 calls, with MS-PCQ's buffer sizing
 *      rule handled inside, and typed iterators over every structure the
 *      calls return;
 *   2. pure functions: counter paths (parse, format) and the counter-type
 *      math (pcq_calculate), with no connection at all;
 *   3. pcq_query: PDH's model (add counter paths, collect, read formatted
 *      values), with wildcards, _Total aggregation and history.
 *
 * Errors: every function returns a Win32 error code or a PDH status code
 * (the values of Windows' winerror.h and pdhmsg.h), ERROR_SUCCESS (0) on
 * success; pcq_status_text() names it.  ret_ out-parameters are written
 * only on success.  Strings are UTF-8 (the wire's UTF-16LE is converted
 * inside).  Objects are not thread-safe: use one per thread or lock.
 */
#ifndef PERFLIB_PCQ_H
#define PERFLIB_PCQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perflib-wintypes.h"   /* GUID, Win32 error codes */
#include "winperf.h"            /* PERF_* counter types */

#ifdef __cplusplus
extern "C" {
#endif

#define PCQ_API __attribute__((visibility("default")))

/* ---- status codes (pdhmsg.h values) ---- */
#define PDH_CSTATUS_VALID_DATA          0x00000000u
#define PDH_CSTATUS_NEW_DATA            0x00000001u
#define PDH_CSTATUS_NO_MACHINE          0x800007D0u
#define PDH_CSTATUS_NO_INSTANCE         0x800007D1u
#define PDH_MORE_DATA                   0x800007D2u
#define PDH_CSTATUS_ITEM_NOT_VALIDATED  0x800007D3u
#define PDH_NO_DATA                     0x800007D5u
#define PDH_CALC_NEGATIVE_DENOMINATOR   0x800007D6u
#define PDH_CALC_NEGATIVE_TIMEBASE      0x800007D7u
#define PDH_CALC_NEGATIVE_VALUE         0x800007D8u
#define PDH_CSTATUS_NO_OBJECT           0xC0000BB8u
#define PDH_CSTATUS_NO_COUNTER          0xC0000BB9u
#define PDH_CSTATUS_INVALID_DATA        0xC0000BBAu
#define PDH_MEMORY_ALLOCATION_FAILURE   0xC0000BBBu
#define PDH_INVALID_HANDLE              0xC0000BBCu
#define PDH_INVALID_ARGUMENT            0xC0000BBDu
#define PDH_CSTATUS_NO_COUNTERNAME      0xC0000BBFu
#define PDH_CSTATUS_BAD_COUNTERNAME     0xC0000BC0u
#define PDH_INSUFFICIENT_BUFFER         0xC0000BC2u
#define PDH_CANNOT_CONNECT_MACHINE      0xC0000BC3u
#define PDH_INVALID_PATH                0xC0000BC4u
#define PDH_INVALID_INSTANCE            0xC0000BC5u
#define PDH_INVALID_DATA                0xC0000BC6u

/*
 * A short English text for a Win32 or PDH code ("The specified object was
 * not found on the computer."), or "Unknown error 0x%08X" in a static
 * thread-local buffer.  Never NULL.
 */
PCQ_API const char *pcq_status_text(uint32_t status);

/* ================================================================== */
/* 1. The connection and the eight PerflibV2 calls                    */
/* ================================================================== */

typedef struct pcq_conn pcq_conn;

/*
 * Connects and binds.  host: NULL, "" or "." or "localhost" for the local
 * perflibd over its Unix socket ($PERFLIB_RUNTIME_DIR/perflibd.sock unless
 * $PERFLIB_SOCKET names another); "unix:PATH" for a given socket; otherwise
 * "HOST" or "HOST:PORT" (brackets around an IPv6 address) over TCP, port
 * PCQ_DEFAULT_TCP_PORT when none is given.  A leading "\\" is
 * stripped, so PDH's "\\host" works.  timeout_ms bounds each call (0: no
 * bound).  *ret is the caller's (pcq_conn_free).  PDH_CANNOT_CONNECT_MACHINE
 * when nothing answers, ERROR_ACCESS_DENIED when perflibd refuses this user.
 * Over TCP it authenticates as $PERFLIB_USER with $PERFLIB_PASSWORD: see
 * pcq_connect_as.
 */
#define PCQ_DEFAULT_TCP_PORT    "4700"
PCQ_API uint32_t pcq_connect(const char *host, int timeout_ms, pcq_conn **ret);

/*
 * Who to be on a remote host.  Over TCP, MS-PCQ has the client
 * authenticate with NTLM or SPNEGO at packet privacy (every call sealed,
 * every answer's signature checked), and perflibd refuses anything less;
 * the local socket needs no credentials (the kernel names the peer) and
 * ignores them.
 *
 * user: "USER", "DOMAIN\USER" or "USER@DOMAIN" (the domain is sent as
 * given; perflibd's accounts form one domain), NULL: $PERFLIB_USER, and
 * with neither the bind is unauthenticated, which perflibd refuses over
 * TCP.  password: NULL: $PERFLIB_PASSWORD (which other processes of the
 * same user can read: prefer asking, pcq_password_prompt).  Only the
 * password's NT hash is kept, for the bind, then wiped.  auth:
 * PCQ_AUTH_DEFAULT is $PERFLIB_AUTH ("ntlm", "spnego" or "kerberos") when
 * set, else SPNEGO, as Windows clients negotiate.  PCQ_AUTH_KERBEROS
 * needs no user or password: it logs on with the Kerberos ticket of the
 * credential cache ($KRB5CCNAME, kinit), asking for the service
 * "host@HOST" of the host connected to, or $PERFLIB_KRB5_SERVICE when set
 * ("service@host", for a host reached by address or another name).
 */
enum pcq_auth {
        PCQ_AUTH_DEFAULT = 0,
        PCQ_AUTH_NTLM = 1,              /* RPC_C_AUTHN_WINNT */
        PCQ_AUTH_SPNEGO = 2,            /* RPC_C_AUTHN_GSS_NEGOTIATE, offering NTLM */
        PCQ_AUTH_KERBEROS = 3,          /* RPC_C_AUTHN_GSS_NEGOTIATE, offering Kerberos */
};
struct pcq_credentials {
        const char *user;
        const char *password;
        enum pcq_auth auth;
};
/*
 * pcq_connect with credentials (NULL: from the environment alone, which
 * is what pcq_connect does).  ERROR_ACCESS_DENIED (5) when the server
 * refuses them: wrong password, unknown user, no user at all; then
 * pcq_connect_error() says "Access is denied" and which user was tried.
 * PDH_INVALID_ARGUMENT for a user without a password, a name or password
 * that is not UTF-8 or longer than 256 bytes, an unknown $PERFLIB_AUTH.
 */
PCQ_API uint32_t pcq_connect_as(const char *host, const struct pcq_credentials *cred,
                                int timeout_ms, pcq_conn **ret);
/*
 * Asks for a password on the controlling terminal (/dev/tty), prompt
 * first, echo off, and reads one line into buf (size bytes, NUL
 * included; the newline dropped).  SIGINT, SIGTERM, SIGQUIT and SIGHUP
 * are held off while echo is off and delivered once it is back.
 * ERROR_NOT_FOUND when there is no terminal, ERROR_INSUFFICIENT_BUFFER
 * for a longer line, ERROR_CANCELLED at end of input or on a signal.
 * The caller wipes buf (explicit_bzero) once done with it.
 */
#ifndef ERROR_CANCELLED
#define ERROR_CANCELLED                 1223u
#endif
PCQ_API uint32_t pcq_password_prompt(const char *prompt, char *buf, size_t size);
/*
 * Why this thread's last pcq_connect failed, as one line for people: the
 * socket (and the variable or default that chose it) or the host and
 * port tried, the system's error, and what to do, e.g. "cannot connect
 * to the local perflibd at /run/user/1000/perflib/perflibd.sock (in
 * $PERFLIB_RUNTIME_DIR): No such file or directory; start perflibd with
 * this PERFLIB_RUNTIME_DIR, or set ...".  "" after a success.  In
 * thread-local storage, valid until the thread's next pcq_connect.
 */
PCQ_API const char *pcq_connect_error(void);
PCQ_API void pcq_conn_free(pcq_conn *c);
/* The host as given to pcq_connect, "" for the local machine.  Owned by c. */
PCQ_API const char *pcq_conn_host(const pcq_conn *c);
/*
 * Why the last of pcq_validate_path, pcq_expand_path and pcq_list_paths
 * on c failed, naming the part of the path at fault and, when one is
 * close, the name meant ("no counterset named 'Procesor' on the local
 * machine; did you mean 'Processor'?").  "" when none has failed.  Owned
 * by c, valid until the next of those calls.
 */
PCQ_API const char *pcq_conn_error(const pcq_conn *c);

/*
 * A buffer one call returned: the raw MS-PCQ bytes (little-endian, 8-byte
 * aligned structures).  data is malloc'd; pcq_buf_done frees it and zeroes
 * the struct (accepts a zeroed or already-done buffer).
 */
struct pcq_buf {
        uint8_t *data;
        uint32_t size;
};
PCQ_API void pcq_buf_done(struct pcq_buf *b);

/*
 * The calls.  Each handles the sizing rule (asks, grows the buffer on
 * ERROR_NOT_ENOUGH_MEMORY / a pdwRtnSize larger than given, retries while
 * the data keeps growing, up to the IDL's limits) and fills *ret, owned by
 * the caller.  Returns the server's Win32 code, or ERROR_CONNECTION_ABORTED
 * (0x4D4) when the connection broke (c is unusable afterwards), or
 * RPC_S_CALL_FAILED (0x6BE) on an RPC fault.
 */
#ifndef ERROR_CONNECTION_ABORTED
#define ERROR_CONNECTION_ABORTED        0x4D4u
#endif
#ifndef RPC_S_CALL_FAILED
#define RPC_S_CALL_FAILED               0x6BEu
#endif

/* Opnum 0: *ret_guids is a malloc'd array of *ret_n GUIDs, the caller's. */
PCQ_API uint32_t pcq_enum_countersets(pcq_conn *c, GUID **ret_guids, size_t *ret_n);
/* Opnum 1: request_code is one of MS-PCQ's ten RequestCodes; lcid 0 = English. */
PCQ_API uint32_t pcq_registration_info(pcq_conn *c, const GUID *counterset,
                                       uint32_t request_code, uint32_t lcid,
                                       struct pcq_buf *ret);
/* Opnum 2 */
PCQ_API uint32_t pcq_enum_instances(pcq_conn *c, const GUID *counterset, struct pcq_buf *ret);

/* Opnums 3-7 work on a server query handle. */
typedef struct pcq_handle pcq_handle;
PCQ_API uint32_t pcq_open(pcq_conn *c, pcq_handle **ret);
/* Closes on the server (errors ignored) and frees; accepts NULL. */
PCQ_API void pcq_close(pcq_handle *h);
/*
 * Opnum 7.  ids: a buffer of PERF_COUNTER_IDENTIFIER records as built by
 * pcq_ident_append (below); updated in place with each record's Status.
 */
PCQ_API uint32_t pcq_validate(pcq_handle *h, struct pcq_buf *ids, bool add);
/* Opnum 5 */
PCQ_API uint32_t pcq_counter_info(pcq_handle *h, struct pcq_buf *ret);
/* Opnum 6 */
PCQ_API uint32_t pcq_counter_data(pcq_handle *h, struct pcq_buf *ret);

/*
 * Appends one PERF_COUNTER_IDENTIFIER (with its UTF-16LE instance name,
 * padded to 8 bytes) to b, growing it.  counter_id 0xFFFFFFFF = every
 * counter; instance NULL = no name, "*" = every instance.
 */
PCQ_API uint32_t pcq_ident_append(struct pcq_buf *b, const GUID *counterset,
                                  uint32_t counter_id, uint32_t instance_id,
                                  const char *instance);

/* ---- typed iterators ----
 * Each iterator is an opaque pcq_iter on the caller's stack, initialised from
 * a buffer with *_begin and advanced with *_next, which returns true and
 * fills the item while there is one.  Strings in items are UTF-8 copies
 * held in the iterator (valid until the next call).  The buffer is
 * untrusted: a structure that runs past the end, overlaps, or has a size
 * smaller than its header stops the iteration, and pcq_iter_error() then says
 * ERROR_INVALID_DATA instead of ERROR_SUCCESS.
 */

typedef struct pcq_iter {
        uint64_t _private[16];  /* layout is libpcq's own */
} pcq_iter;
/* Frees what an iterator holds (its string copies); accepts a finished one. */
PCQ_API void pcq_iter_done(pcq_iter *it);
PCQ_API uint32_t pcq_iter_error(const pcq_iter *it);

/* PERF_COUNTERSET_REG_INFO + PERF_COUNTER_REG_INFO[] (RequestCode 1, 0x80000000 ...) */
struct pcq_counter_reg {
        uint32_t id;
        uint32_t type;
        uint64_t attrib;
        uint32_t detail_level;
        int32_t default_scale;
        uint32_t base_id;
        uint32_t perf_time_id;
        uint32_t perf_freq_id;
        uint32_t multi_id;
        uint32_t aggregate_func;
};
struct pcq_counterset_reg {
        GUID guid;
        uint32_t detail_level;
        uint32_t num_counters;
        uint32_t instance_type;
};
PCQ_API uint32_t pcq_reg_iter_begin(pcq_iter *it, const struct pcq_buf *b,
                                    struct pcq_counterset_reg *ret_set);
PCQ_API bool pcq_reg_iter_next(pcq_iter *it, struct pcq_counter_reg *ret);

/* STRING_BUFFER_HEADER + STRING_COUNTER_HEADER[] + strings (names, help) */
struct pcq_string_item {
        uint32_t counter_id;            /* 0xFFFFFFFF: the counterset's own */
        const char *text;
};
PCQ_API uint32_t pcq_string_iter_begin(pcq_iter *it, const struct pcq_buf *b);
PCQ_API bool pcq_string_iter_next(pcq_iter *it, struct pcq_string_item *ret);

/* PERF_INSTANCE_HEADER[] (EnumerateCounterSetInstances) */
struct pcq_instance_item {
        uint32_t id;
        const char *name;
};
PCQ_API void pcq_instance_iter_begin(pcq_iter *it, const struct pcq_buf *b);
PCQ_API bool pcq_instance_iter_next(pcq_iter *it, struct pcq_instance_item *ret);

/* PERF_COUNTER_IDENTIFIER[] (QueryCounterInfo, ValidateCounters) */
struct pcq_ident_item {
        GUID counterset;
        uint32_t status;
        uint32_t counter_id;
        uint32_t instance_id;
        uint32_t index;
        const char *instance;           /* NULL when none */
};
PCQ_API void pcq_ident_iter_begin(pcq_iter *it, const struct pcq_buf *b);
PCQ_API bool pcq_ident_iter_next(pcq_iter *it, struct pcq_ident_item *ret);

/*
 * QueryCounterData: the PERF_DATA_HEADER, then one value per
 * (block, instance, counter), flattened.  block is the index of the
 * PERF_COUNTER_HEADER (it matches QueryCounterInfo's Index); value points
 * into the buffer (size bytes, little-endian, 4 or 8 for numbers).
 */
/*
 * Block types of PERF_COUNTER_HEADER (MS-PCQ 2.2.4.8), the values of
 * perflib.h's PerfCounterDataType, here so that a consumer needs pcq.h only.
 */
#define PCQ_BLOCK_ERROR                 0u      /* PERF_ERROR_RETURN */
#define PCQ_BLOCK_SINGLE_COUNTER        1u      /* PERF_SINGLE_COUNTER */
#define PCQ_BLOCK_MULTIPLE_COUNTERS     2u      /* PERF_MULTIPLE_COUNTERS */
#define PCQ_BLOCK_MULTIPLE_INSTANCES    4u      /* PERF_MULTIPLE_INSTANCES */
#define PCQ_BLOCK_COUNTERSET            6u      /* PERF_COUNTERSET */
struct pcq_data_header {
        uint32_t num_counters;
        uint64_t perf_time;             /* PerfTimeStamp */
        uint64_t perf_time_100ns;       /* PerfTime100NSec, since 1601 UTC */
        uint64_t perf_freq;             /* PerfFreq */
        uint16_t system_time[8];        /* SYSTEMTIME */
};
struct pcq_data_item {
        uint32_t block;
        uint32_t block_type;            /* PCQ_BLOCK_* */
        uint32_t status;                /* the block's dwStatus */
        uint32_t counter_id;            /* 0xFFFFFFFF when the block does not say */
        uint32_t instance_id;
        const char *instance;           /* NULL for single-instance blocks */
        const uint8_t *value;
        uint32_t size;
};
PCQ_API uint32_t pcq_data_iter_begin(pcq_iter *it, const struct pcq_buf *b,
                                     struct pcq_data_header *ret_header);
PCQ_API bool pcq_data_iter_next(pcq_iter *it, struct pcq_data_item *ret);

/* ================================================================== */
/* 2. Pure functions: counter paths and the counter-type math         */
/* ================================================================== */

/*
 * A counter path as PDH writes it:
 *      \\host\Object(Parent/Instance#Index)\Counter
 * every part but Object and Counter optional; "*" as the instance or the
 * counter is a wildcard.  Parsing never touches the network.
 */
struct pcq_path {
        char *host;                     /* NULL: local */
        char *object;
        char *parent;                   /* NULL when none */
        char *instance;                 /* NULL: no instance part (single-instance set) */
        uint32_t index;                 /* the #n suffix, 0 when none */
        char *counter;
};
/*
 * Fills *ret (strings malloc'd, the caller's: pcq_path_done).
 * PDH_CSTATUS_NO_COUNTERNAME for an empty path, PDH_CSTATUS_BAD_COUNTERNAME
 * for a malformed one; *ret_error_pos (may be NULL) gets the byte offset
 * where parsing failed.
 */
PCQ_API uint32_t pcq_path_parse(const char *path, struct pcq_path *ret, size_t *ret_error_pos);
PCQ_API void pcq_path_done(struct pcq_path *p);
/* Formats p back, malloc'd, the caller's; NULL on allocation failure. */
PCQ_API char *pcq_path_format(const struct pcq_path *p);

/*
 * One raw sample of one counter, with the companion values its type needs,
 * as PDH_RAW_COUNTER carries it.
 *   first:  the counter's own value;
 *   second: per type: the base counter (fractions, averages, precision
 *           timers), the PerfTimeId counter (object timers, elapsed time),
 *           otherwise unused (the time comes from the sample's times);
 *   multi:  the MultiId counter (multi timers), 1 when the type has none;
 *   freq:   the PerfFreqId counter (object timers, elapsed time);
 *   perf_time / perf_freq / time_100ns: the sample's PERF_DATA_HEADER.
 * status: PDH_CSTATUS_VALID_DATA, or why this sample has no value (the
 * instance vanished, the block said an error): such a sample never yields
 * a value.
 */
struct pcq_raw {
        uint32_t status;
        uint64_t first;
        uint64_t second;
        uint64_t multi;
        uint64_t freq;
        uint64_t perf_time;
        uint64_t perf_freq;
        uint64_t time_100ns;
};

/* Flags for pcq_calculate and the query layer. */
#define PCQ_FMT_NOCAP100        0x1u    /* percentages may exceed 100 */
#define PCQ_FMT_NOSCALE         0x2u    /* ignore DefaultScale */
#define PCQ_FMT_1000            0x4u    /* multiply the result by 1000 */

/* What a counter type needs, for callers that gather companions. */
struct pcq_type_info {
        const char *name;               /* "PERF_COUNTER_COUNTER" */
        bool known;                     /* one of MS-PCQ's / the schema's types */
        bool two_samples;               /* needs a previous sample */
        bool is_base;                   /* a base: not displayed by itself */
        bool needs_base;                /* second = BaseCounterId's value */
        bool needs_perf_time;           /* second = PerfTimeId, freq = PerfFreqId */
        bool needs_multi;               /* multi = MultiId */
        bool is_text;
        bool is_percent;                /* capped at 100 unless PCQ_FMT_NOCAP100 */
        uint8_t value_size;             /* 4 or 8 (0: text/zero) */
};
/* Fills *ret for type; an unknown type gets known = false and stays usable. */
PCQ_API void pcq_type_info(uint32_t type, struct pcq_type_info *ret);

/*
 * The formatted value of one counter from two samples (prev may be NULL for
 * the types that need only one), scaled by 10^default_scale unless
 * PCQ_FMT_NOSCALE.  Returns:
 *   PDH_CSTATUS_VALID_DATA    *ret_value written;
 *   PDH_CSTATUS_INVALID_DATA  first sample of a two-sample type (prev NULL
 *                             or prev->status not valid), either sample
 *                             invalid, or a counter that went backwards (a
 *                             provider restart) — never a huge number;
 *   PDH_CALC_NEGATIVE_DENOMINATOR / PDH_CALC_NEGATIVE_TIMEBASE: a zero or
 *                             negative base or time interval (but 0/0, an
 *                             average over an idle interval, is 0);
 *   PDH_CALC_NEGATIVE_VALUE   PERF_ELAPSED_TIME with a start after now;
 *   PDH_NO_DATA               PERF_COUNTER_NODATA;
 *   PDH_INVALID_ARGUMENT      text types, unknown types, cur or ret_value
 *                             NULL, default_scale outside -10..10.
 * 32-bit types wrap: their values are masked to 32 bits and the difference
 * taken modulo 2^32 (right when the counter wrapped at most once between
 * the samples); 64-bit ones never wrap (see pcq-calculate(3)).
 */
PCQ_API uint32_t pcq_calculate(uint32_t type, int32_t default_scale,
                               const struct pcq_raw *prev, const struct pcq_raw *cur,
                               uint32_t flags, double *ret_value);

/*
 * Text for a value as the counter's display attributes ask (PERF_ATTRIB_*
 * of MS-PCQ 2.2.4.2: no display -> "", no group separator, as real, as
 * hex of the raw first value), with digit grouping by "," only when
 * PCQ_TEXT_GROUP is given and the attribute allows it.  Writes at most
 * size bytes including the NUL; returns ERROR_INSUFFICIENT_BUFFER if it did
 * not fit.  decimals: digits after the point for real display (typeperf
 * uses 6).
 */
#define PCQ_TEXT_GROUP          0x1u
PCQ_API uint32_t pcq_value_text(double value, uint64_t raw_first, uint32_t type,
                                uint64_t attrib, unsigned decimals, uint32_t flags,
                                char *buf, size_t size);

/*
 * Aggregation (AggregateFunc 1 total, 2 average, 3 minimum, 4 maximum) of
 * n formatted values; 0 (undefined) and n == 0 give PDH_NO_DATA.
 */
PCQ_API uint32_t pcq_aggregate(uint32_t func, const double *values, size_t n, double *ret);

/* ================================================================== */
/* 3. Queries, as PDH has them                                        */
/* ================================================================== */

typedef struct pcq_query pcq_query;
typedef struct pcq_counter pcq_counter;

/*
 * A query over one connection (the caller keeps c alive until
 * pcq_query_free).  *ret is the caller's.
 */
PCQ_API uint32_t pcq_query_new(pcq_conn *c, pcq_query **ret);
PCQ_API void pcq_query_free(pcq_query *q);

/*
 * Adds a counter path (wildcards allowed: "(*)", "\*", "(name*)" prefix
 * matches); the counter is owned by q.  The path's host part, if any,
 * must name q's connection's host.  Errors: PDH_CSTATUS_BAD_COUNTERNAME,
 * PDH_CSTATUS_NO_OBJECT, PDH_CSTATUS_NO_COUNTER (a named instance that does
 * not exist yet is accepted, as PDH does, and reads as
 * PDH_CSTATUS_NO_INSTANCE until it appears).  pcq_query_error() then holds a
 * sentence naming the part that failed ("no counterset named 'Procesor' on
 * the local machine").
 */
PCQ_API uint32_t pcq_query_add(pcq_query *q, const char *path, pcq_counter **ret);
PCQ_API const char *pcq_query_error(const pcq_query *q);

/*
 * Takes one sample of every counter of q (one QueryCounterData round trip
 * per connection), re-expanding wildcards so instances that appeared are
 * added and vanished ones dropped, and keeping the previous sample for the
 * rate types.  Aggregate countersets get their _Total instance computed
 * here per each counter's AggregateFunc (global aggregate history keeps
 * the last value of a vanished instance).  A global aggregate counter read
 * without an instance part ("\Set\Counter", how Windows shows that
 * single-instance type) gives that aggregate as its one item.
 */
PCQ_API uint32_t pcq_query_collect(pcq_query *q);
/* Same, and the sample's time as 100 ns since 1601 (for logs). */
PCQ_API uint64_t pcq_query_sample_time(const pcq_query *q);

/*
 * One counter's values after a collect: one item per matched instance (one
 * item for single-instance sets), in a stable order (instances in server
 * order, _Total last).  *ret_items points into q, valid until the next
 * collect.  status per item as pcq_calculate returns it (the first collect
 * of a rate counter gives PDH_CSTATUS_INVALID_DATA for every item).
 */
struct pcq_value {
        const char *path;               /* full path of this item, no wildcards */
        const char *instance;           /* NULL for single-instance */
        uint32_t status;
        double value;
        uint64_t raw_first;             /* for hex display */
};
PCQ_API uint32_t pcq_counter_values(pcq_counter *ctr, uint32_t flags,
                                    const struct pcq_value **ret_items, size_t *ret_n);
/* The counter's type, attributes, scale, name and help (owned by q). */
struct pcq_counter_desc {
        const char *path;               /* as added */
        const char *object, *counter, *help;
        uint32_t type;
        uint64_t attrib;
        int32_t default_scale;
        uint32_t detail_level;
        uint32_t instance_type;         /* the counterset's */
};
PCQ_API void pcq_counter_describe(const pcq_counter *ctr, struct pcq_counter_desc *ret);

/*
 * Browsing, for typeperf -q/-qx: every counter path of one counterset
 * (object NULL: all), without instances ("\Object(*)\Counter" for
 * multi-instance sets) or with each live instance (with_instances).  *ret
 * is a NULL-terminated malloc'd array of malloc'd strings, the caller's
 * (pcq_strv_free).  Base counters and no-display counters are left out, as
 * Windows lists them; global aggregate sets are listed as single-instance
 * ones ("\Object\Counter"), as Windows lists them too.
 */
PCQ_API uint32_t pcq_list_paths(pcq_conn *c, const char *object, bool with_instances,
                                char ***ret);
/* Every path a wildcard path stands for right now, same ownership. */
PCQ_API uint32_t pcq_expand_path(pcq_conn *c, const char *path, char ***ret);
/*
 * Whether path names something that exists now, as PdhValidatePath
 * says: ERROR_SUCCESS, or PDH_CSTATUS_BAD_COUNTERNAME, NO_MACHINE,
 * NO_OBJECT, NO_COUNTER, or PDH_CSTATUS_NO_INSTANCE when no live instance
 * matches its instance part (when pcq_expand_path would give no path).
 * pcq_conn_error(c) then says which part, with the nearest name.  A query
 * accepts a path whose instance is missing (pcq_query_add); this is how a
 * program finds out first, as Windows' typeperf does.
 */
PCQ_API uint32_t pcq_validate_path(pcq_conn *c, const char *path);
PCQ_API void pcq_strv_free(char **v);

#ifdef __cplusplus
}
#endif

#endif /* PERFLIB_PCQ_H */
