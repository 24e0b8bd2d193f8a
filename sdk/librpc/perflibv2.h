/* SPDX-License-Identifier: MIT */
/*
 * perflibv2.h: the PerflibV2 interface of MS-PCQ (section 6's IDL) as C
 * calls, on both sides of the wire.  Internal (not installed): libpcq,
 * perflibd, the tests and the benches link the convenience library
 * librpc.la (sdk/librpc).
 *
 * Wire: connection-oriented DCE/RPC (C706 chapter 12, MS-RPCE) with NDR 2.0,
 * over a stream socket (AF_UNIX locally, TCP remotely).  Everything in
 * dcerpc.c, ndr.c and perflibv2-stubs.c is ours: no Debian library speaks
 * this interface.
 *
 * Buffers: every lpData buffer is the raw MS-PCQ byte layout (section
 * 2.2.4: little-endian, structures on 8-byte boundaries).  The stubs only
 * move bytes; what the bytes mean is the core's business (pcq-core.h).
 *
 * Return values: the methods return Win32 error codes (error_status_t).
 * Functions of our own (connect, the server connection) return 0 or -errno
 * and write ret_ parameters only on success.
 */
#ifndef PCQ_PERFLIBV2_H
#define PCQ_PERFLIBV2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perflib.h"            /* GUID, Win32 error codes */

/* da5a86c5-12c2-4943-ab30-7f74a813d853 v1.0 */
#define PV2_IF_UUID_TEXT        "da5a86c5-12c2-4943-ab30-7f74a813d853"
#define PV2_IF_VERSION_MAJOR    1
#define PV2_IF_VERSION_MINOR    0

enum pv2_opnum {
        PV2_ENUMERATE_COUNTERSET = 0,
        PV2_QUERY_COUNTERSET_REGISTRATION_INFO = 1,
        PV2_ENUMERATE_COUNTERSET_INSTANCES = 2,
        PV2_OPEN_QUERY_HANDLE = 3,
        PV2_CLOSE_QUERY_HANDLE = 4,
        PV2_QUERY_COUNTER_INFO = 5,
        PV2_QUERY_COUNTER_DATA = 6,
        PV2_VALIDATE_COUNTERS = 7,
        _PV2_OPNUM_MAX = 7,
};

/* The IDL's range() limits on dwInSize, per opnum. */
#define PV2_MAX_ENUMERATE_GUIDS         256u
/*
 * Our one extension of those ranges: EnumerateCounterSet accepts dwInSize
 * up to this many GUIDs (1 MiB), so that a host with more than 256
 * installed countersets can be enumerated whole by clients that know (our
 * own).  A client that keeps to the IDL still gets ERROR_NOT_ENOUGH_MEMORY
 * with the count, as Windows answers it; past this bound the call faults
 * with nca_s_fault_invalid_bound as before.
 */
#define PV2_MAX_ENUMERATE_GUIDS_EXT     65536u
#define PV2_MAX_REG_INFO_BYTES          134217728u
#define PV2_MAX_INSTANCES_BYTES         67108864u
#define PV2_MAX_COUNTER_INFO_BYTES      67108864u
#define PV2_MAX_COUNTER_DATA_BYTES      1073741824u
#define PV2_MAX_VALIDATE_BYTES          67108864u

/*
 * The result of a method whose lpData is [out, size_is(dwInSize),
 * length_is(*pdwOutSize)]: data holds out_size bytes (for opnum 0:
 * out_size GUIDs, 16 bytes each), rtn_size is *pdwRtnSize.  data is
 * malloc'd and owned by whoever holds the struct (pv2_out_done frees it).
 */
struct pv2_out {
        uint8_t *data;
        uint32_t out_size;
        uint32_t rtn_size;
};
void pv2_out_done(struct pv2_out *o);

/* ---- server side ---- */

/*
 * What a server implements.  conn is the per-connection pointer given to
 * pv2_server_conn_new (perflibd keeps its peer's credentials there); query
 * is what open_query returned, never NULL, and only ever one that this same
 * connection opened and has not closed (the stubs check the context handle
 * and fault otherwise).  machine is the szMachine string as received,
 * UTF-16LE code units, NUL-terminated, NULL when the client sent none.
 *
 * For the lpData methods the handler fills *out (data owned by the stubs
 * afterwards) following MS-PCQ's sizing rule; in_size is dwInSize, already
 * checked against the IDL's range (a value outside it never reaches here).
 * validate_counters gets the in/out buffer of in_size bytes to update in
 * place.  close_query is also called for every query still open when the
 * connection drops.
 */
struct pv2_handlers {
        uint32_t (*enumerate_counterset)(void *conn, const uint16_t *machine,
                                         uint32_t in_size, struct pv2_out *out);
        uint32_t (*query_registration_info)(void *conn, const uint16_t *machine,
                                            const GUID *counterset, uint32_t request_code,
                                            uint32_t request_lcid, uint32_t in_size,
                                            struct pv2_out *out);
        uint32_t (*enumerate_instances)(void *conn, const uint16_t *machine,
                                        const GUID *counterset, uint32_t in_size,
                                        struct pv2_out *out);
        /* On success *ret_query is non-NULL and owned by the connection's handle table. */
        uint32_t (*open_query)(void *conn, const uint16_t *machine, void **ret_query);
        uint32_t (*close_query)(void *conn, void *query);
        uint32_t (*query_counter_info)(void *conn, void *query, uint32_t in_size,
                                       struct pv2_out *out);
        uint32_t (*query_counter_data)(void *conn, void *query, uint32_t in_size,
                                       struct pv2_out *out);
        uint32_t (*validate_counters)(void *conn, void *query, uint8_t *data,
                                      uint32_t in_size, uint32_t add);
        /*
         * Optional: takes back an out->data once it was sent or dropped, so
         * that a handler may hand out a buffer it reuses.  NULL: free().
         */
        void (*release_out)(void *conn, uint8_t *data);
};

/*
 * One server connection's protocol state: fragments in, PDUs out.  The
 * transport (perflibd's event loop) owns the socket; this only turns bytes
 * into bytes.  handlers must outlive the connection.  Owned by the caller
 * (pv2_server_conn_free, which closes every query still open through
 * handlers->close_query).
 */
struct pv2_server_conn;
int pv2_server_conn_new(const struct pv2_handlers *handlers, void *conn,
                        struct pv2_server_conn **ret);
void pv2_server_conn_free(struct pv2_server_conn *c);

/*
 * Feeds received bytes.  Appends whatever must be sent in reply to *out
 * (a growing malloc'd buffer of *out_len bytes, owned by the caller, which
 * sends and frees it).  Returns 0, or -EPROTO when the peer broke the
 * protocol so badly that the connection must be closed (after sending *out,
 * which may hold a fault or bind_nak).  Never calls more than one handler at
 * a time; a request is dispatched once its last fragment is in.
 */
int pv2_server_conn_feed(struct pv2_server_conn *c, const void *data, size_t size,
                         uint8_t **out, size_t *out_len);

/*
 * The same, with the replies left in the connection as slices to send with
 * one sendmsg/writev, the lpData of responses lent rather than copied:
 * *ret_iov[0..*ret_n) (which the caller may change while sending) is valid
 * until the next pv2_server_conn_feed_iov or pv2_server_conn_free.
 */
struct iovec;
int pv2_server_conn_feed_iov(struct pv2_server_conn *c, const void *data, size_t size,
                             struct iovec **ret_iov, size_t *ret_n);

/*
 * From now on pv2_server_conn_feed_iov leaves the response fragments of
 * an authenticated connection framed but not sealed, for
 * pv2_server_conn_seal: so that a caller that feeds under a lock seals
 * outside it (sealing a large reply costs more than building it), and
 * sends what is sealed while it seals the rest.
 */
void pv2_server_conn_defer_seal(struct pv2_server_conn *c);

/*
 * Seals, in order, the next fragments the last feed_iov left: at least
 * min_bytes of them (one at the least), or all that are left.  *ret_ready
 * is how many bytes of its iovecs, from the start, can be sent: SIZE_MAX
 * once all can.  0, or the mechanism's error: close the connection
 * without sending the rest.
 */
int pv2_server_conn_seal(struct pv2_server_conn *c, size_t min_bytes, size_t *ret_ready);

/* Number of query handles this connection holds open. */
/*
 * Gives back what the connection keeps from one feed to the next (the reply
 * buffer, the lpData lent to the last reply, an empty tail buffer, the
 * request buffer between calls), for a client gone quiet.  The iovecs of the
 * last pv2_server_conn_feed_iov must have been sent.
 */
void pv2_server_conn_trim(struct pv2_server_conn *c);
size_t pv2_server_conn_queries(const struct pv2_server_conn *c);

/*
 * The secondary address (port_any_t) the bind_ack carries: the TCP port as
 * text for ncacn_ip_tcp, what the transport likes otherwise.  The default
 * is the empty string (sent as one NUL, which every client parses).  0,
 * -EINVAL when longer than 255 bytes, -ENOMEM.
 */
int pv2_server_conn_set_secondary_address(struct pv2_server_conn *c, const char *addr);

/*
 * Serves MS-RRP's performance calls (rrp.h) on this connection too, beside
 * PerflibV2, as \PIPE\winreg carries both: a bind to MS-RRP is refused
 * (abstract syntax not supported) on connections without it.  Before the
 * bind; h must outlive c.  0, -EINVAL, -ENOMEM.
 */
struct rrp_handlers;
int pv2_server_conn_serve_rrp(struct pv2_server_conn *c, const struct rrp_handlers *h);

/*
 * The most stub bytes one request may reassemble to (default: the largest
 * ValidateCounters the IDL allows, plus room for the other parameters); a
 * request past it is a protocol error that closes the connection.  A
 * server lowers it for callers it will refuse anyway, so that they cannot
 * make it hold 64 MiB each.  0, or -EINVAL outside [1432, default].
 */
int pv2_server_conn_set_max_request(struct pv2_server_conn *c, size_t bytes);

/*
 * The largest request stub a client keeping to MS-PCQ's IDL can send, and
 * the default of the cap above.  Only ValidateCounters carries a buffer
 * in: its context handle (20 bytes), dwInSize (4), lpData's conformance
 * (4) and at most range(0, 67108864) bytes, then dwAdd (4, aligned; 64 MiB
 * needs no padding): 67108864 + 32.  The other methods send a handle or a
 * GUID and a few DWORDs, plus szMachine, a [string] the IDL leaves
 * unbounded but which names a machine (a DNS name: at most 255
 * characters): far less.
 */
#define PV2_MAX_REQUEST (PV2_MAX_VALIDATE_BYTES + 32u)
/* The least cap a server may set: C706's smallest fragment must fit. */
#define PV2_MIN_REQUEST 1432u

/*
 * The most query handles this connection may hold open (default and
 * ceiling PV2_MAX_QUERIES).  OpenQueryHandle past it
 * returns ERROR_OUTOFMEMORY, MS-PCQ 3.1.4.1.4's code for a server that
 * will not store state for another query, without calling open_query.
 * 0, or -EINVAL outside [1, 65536].
 */
#define PV2_MAX_QUERIES 65536u
int pv2_server_conn_set_max_queries(struct pv2_server_conn *c, size_t n);

/*
 * A budget of memory for requests being reassembled, shared by every
 * connection it is given to (any thread).  Each connection may hold its
 * first PV2_BUDGET_FREE_BYTES of request (the request being reassembled and
 * the partial PDU after it, together) without asking, so that ordinary
 * calls never fail for it; growing its buffer past that takes from the
 * budget, and a request that would overdraw it is answered with the fault
 * nca_s_fault_remote_no_memory and the connection closed, rather than
 * grown.  The budget must outlive the connections given it.
 */
#define PV2_BUDGET_FREE_BYTES 65536u
struct pv2_budget;
/* Owned by the caller (pv2_budget_free).  0, -ENOMEM. */
int pv2_budget_new(size_t bytes, struct pv2_budget **ret);
void pv2_budget_free(struct pv2_budget *b);
/* Bytes currently taken (beyond each connection's free share). */
size_t pv2_budget_used(const struct pv2_budget *b);
/* 0, or -EBUSY once the connection holds a request buffer. */
int pv2_server_conn_set_budget(struct pv2_server_conn *c, struct pv2_budget *b);

/*
 * What a transport's deadlines count, rather than bytes (which a slow
 * writer can trickle forever): whether a bind was accepted, and how many
 * requests were complete and answered (a response or a fault).
 */
bool pv2_server_conn_bound(const struct pv2_server_conn *c);
uint64_t pv2_server_conn_calls(const struct pv2_server_conn *c);

/*
 * Authentication, as MS-PCQ 2.1 requires of a network transport.  With a
 * policy set, a connection binds only with an auth verifier at
 * PKT_PRIVACY (anything else gets a bind_nak), serves no request before
 * the security context is established (a fault nca_s_fault_access_denied
 * and the connection closed otherwise), checks and unseals every request
 * fragment (one that fails closes the connection) and seals every
 * response.  new_sec makes the acceptor for an auth_type (9 SPNEGO, 10
 * NTLM, 16 Kerberos) or fails with -EPROTONOSUPPORT.  authorize, when set,
 * decides whether the peer a mechanism vouched for may query (0) or not
 * (-EACCES, the association refused as for a wrong password).  The policy
 * is borrowed and must outlive the connections given it.  0, -EINVAL,
 * -EBUSY once bound.
 */
struct dcerpc_sec;
struct pv2_auth_policy {
        int (*new_sec)(void *userdata, uint8_t auth_type, struct dcerpc_sec *ret);
        int (*authorize)(void *userdata, const char *peer);
        void *userdata;
};
int pv2_server_conn_set_auth(struct pv2_server_conn *c, const struct pv2_auth_policy *p);

/*
 * What the last feed decided about authentication, reported once: OK (the
 * detail is the peer's name), DENIED (credentials refused: a wrong
 * password, an unknown user; the detail names the user when known), or
 * REFUSED (no verifier, a level below PKT_PRIVACY, a mechanism we do not
 * offer, a tampered PDU; the detail says which).  The detail is the
 * connection's, valid until the next feed.
 */
enum pv2_auth_event {
        PV2_AUTH_EVENT_NONE,
        PV2_AUTH_EVENT_OK,
        PV2_AUTH_EVENT_DENIED,
        PV2_AUTH_EVENT_REFUSED,
};
enum pv2_auth_event pv2_server_conn_auth_event(struct pv2_server_conn *c,
                                               const char **ret_detail);

/* ---- client side ---- */

struct pv2_client;
/*
 * Connects and binds to the PerflibV2 interface.  unix: a socket path (the
 * default is $PERFLIB_RUNTIME_DIR/perflibd.sock, see pl_runtime_dir).  tcp:
 * host and port.  timeout_ms bounds every call (0: no bound).  The client is
 * owned by the caller (pv2_client_free).  -ECONNREFUSED etc. from connect,
 * -EPROTO when the server answered the bind with a bind_nak or garbage.
 */
int pv2_client_connect_unix(const char *path, int timeout_ms, struct pv2_client **ret);
int pv2_client_connect_tcp(const char *host, const char *port, int timeout_ms,
                           struct pv2_client **ret);
/*
 * Over TCP, authenticated (MS-PCQ 2.1): sec is a client security context
 * not yet stepped (dcerpc-sec.h; NULL or ops NULL: none), of auth_type
 * (DCERPC_AUTH_TYPE_NTLM or DCERPC_AUTH_TYPE_SPNEGO), which the client
 * takes whatever the outcome (*sec is zeroed) and frees with itself.
 * Every call is then sealed at PKT_PRIVACY and every answer checked.
 * -EACCES when the server refuses the credentials (bind_nak,
 * nca_s_fault_access_denied) or our context refuses the server's proof,
 * -EPROTONOSUPPORT for a server that binds without authenticating (one
 * that does not know how), -EPROTO for one that does it wrong.
 */
struct dcerpc_sec;
int pv2_client_connect_tcp_sec(const char *host, const char *port, int timeout_ms,
                               uint8_t auth_type, struct dcerpc_sec *sec,
                               struct pv2_client **ret);
void pv2_client_free(struct pv2_client *c);

/*
 * The eight methods.  Each returns the method's error_status_t, or, when
 * the call itself failed, one of: ERROR_CONNECTION_ABORTED (0x4D4) when the
 * connection broke or timed out, RPC_S_CALL_FAILED (0x6BE) with the fault
 * status in pv2_client_last_fault() when the server answered with a fault
 * (or sent a response stub that does not parse: then the status is
 * PV2_NCA_S_FAULT_NDR), or ERROR_ACCESS_DENIED (5) when that fault was
 * nca_s_fault_access_denied.  After ERROR_CONNECTION_ABORTED the client is
 * unusable and every later call returns the same; after a fault it is fine.
 * Also ERROR_INVALID_PARAMETER (a NULL argument, machine not UTF-8) and
 * ERROR_OUTOFMEMORY, before anything is sent.  machine may be NULL (sent as
 * an empty string).  *out's data is the caller's to free (pv2_out_done); on
 * any error but the method's own, *out is left as it was.
 */
#define PV2_RPC_S_CALL_FAILED           0x6BEu
#define PV2_ERROR_CONNECTION_ABORTED    0x4D4u

/*
 * The fault statuses the server sends (C706 appendix E, MS-RPCE 2.2.2.11;
 * the values as Wireshark's packet-dcerpc.c and impacket's rpcrt.py name
 * them).
 */
#define PV2_NCA_S_FAULT_ACCESS_DENIED   0x00000005u     /* not this caller, or not at this level */
#define PV2_NCA_S_FAULT_NDR             0x000006F7u     /* bad stub data (RPC_X_BAD_STUB_DATA) */
#define PV2_NCA_S_FAULT_INVALID_BOUND   0x1C000007u     /* range() or size_is/length_is violated */
#define PV2_NCA_S_FAULT_CONTEXT_MISMATCH 0x1C00001Au    /* unknown, closed or foreign handle */
#define PV2_NCA_S_FAULT_REMOTE_NO_MEMORY 0x1C00001Bu
#define PV2_NCA_S_OP_RNG_ERROR          0x1C010002u     /* opnum out of range */
#define PV2_NCA_S_UNK_IF                0x1C010003u     /* context id not bound */
#define PV2_NCA_S_PROTO_ERROR           0x1C01000Bu

/* A context handle as it travels: 4 bytes of attributes, 16 of uuid. */
struct pv2_handle {
        uint8_t bytes[20];
};

uint32_t pv2_enumerate_counterset(struct pv2_client *c, const char *machine,
                                  uint32_t in_size, struct pv2_out *out);
uint32_t pv2_query_registration_info(struct pv2_client *c, const char *machine,
                                     const GUID *counterset, uint32_t request_code,
                                     uint32_t request_lcid, uint32_t in_size,
                                     struct pv2_out *out);
uint32_t pv2_enumerate_instances(struct pv2_client *c, const char *machine,
                                 const GUID *counterset, uint32_t in_size,
                                 struct pv2_out *out);
uint32_t pv2_open_query(struct pv2_client *c, const char *machine, struct pv2_handle *ret);
/* Sets *h to the null handle on success, as the server returns it. */
uint32_t pv2_close_query(struct pv2_client *c, struct pv2_handle *h);
uint32_t pv2_query_counter_info(struct pv2_client *c, const struct pv2_handle *h,
                                uint32_t in_size, struct pv2_out *out);
uint32_t pv2_query_counter_data(struct pv2_client *c, const struct pv2_handle *h,
                                uint32_t in_size, struct pv2_out *out);
/* data: in_size bytes, replaced by the server's returned buffer. */
uint32_t pv2_validate_counters(struct pv2_client *c, const struct pv2_handle *h,
                               uint8_t *data, uint32_t in_size, uint32_t add);
/* The last fault status received (0 if none), for RPC_S_CALL_FAILED. */
uint32_t pv2_client_last_fault(const struct pv2_client *c);

#endif /* PCQ_PERFLIBV2_H */
