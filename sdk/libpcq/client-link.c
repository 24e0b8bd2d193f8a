/* SPDX-License-Identifier: MIT */
/*
 * One link to a PerflibV2 server over the internal client (perflibv2.h):
 * finding the local server's socket, or a TCP host and port (and when
 * they do not answer, client-explain.c says why in words), and the
 * lpData calls with MS-PCQ's sizing rule: every such call is retried with
 * a larger buffer while the server says ERROR_NOT_ENOUGH_MEMORY (or its
 * pdwRtnSize is larger than what it sent), up to the IDL's range() limit,
 * and the size that worked is kept as the next call's first guess.  The
 * catalog fetches through this, and pcq_conn wraps it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client-cred.h"
#include "client-explain.h"
#include "client-link.h"
#include "client-wire.h"

#define SOCKET_NAME             "perflibd.sock"
#define FIRST_GUESS             4096u
#define MAX_TRIES               16

/* ---- connecting ---- */

static bool is_local(const char *host)
{
        return !host || !*host || !strcmp(host, ".") || !strcasecmp(host, "localhost");
}

static bool exists(const char *path)
{
        return access(path, F_OK) == 0;
}

/*
 * The local server's socket, found the way perflibd picks its runtime
 * directory (pl_runtime_dir), but never creating anything.  Malloc'd;
 * *ret_origin says how it was chosen, for the message when it fails.
 */
static char *local_socket(enum cl_origin *ret_origin)
{
        const char *e = getenv("PERFLIB_SOCKET");
        char *s = NULL;

        *ret_origin = CL_FROM_SOCKET_VAR;
        if (e && *e)
                return strdup(e);
        *ret_origin = CL_FROM_RUNTIME_VAR;
        e = getenv("PERFLIB_RUNTIME_DIR");
        if (e && *e)
                return asprintf(&s, "%s/" SOCKET_NAME, e) < 0 ? NULL : s;
        *ret_origin = CL_FROM_RUN;
        if (exists("/run/perflib/" SOCKET_NAME))
                return strdup("/run/perflib/" SOCKET_NAME);
        *ret_origin = CL_FROM_XDG;
        e = getenv("XDG_RUNTIME_DIR");
        if (e && *e && asprintf(&s, "%s/perflib/" SOCKET_NAME, e) >= 0) {
                if (exists(s))
                        return s;
                free(s);
        }
        *ret_origin = CL_FROM_FALLBACK;
        return asprintf(&s, "/tmp/perflib-%u/" SOCKET_NAME, (unsigned) getuid()) < 0 ? NULL : s;
}

/* Splits "host", "host:port", "[v6]" or "[v6]:port" into malloc'd parts. */
static uint32_t split_host(const char *spec, char **ret_host, char **ret_port)
{
        const char *port = NULL, *end;
        size_t len;

        if (spec[0] == '[') {
                end = strchr(spec, ']');
                if (!end || (end[1] && (end[1] != ':' || !end[2])))
                        return PDH_CSTATUS_NO_MACHINE;
                spec++;
                len = (size_t) (end - spec);
                port = end[1] ? end + 2 : NULL;
        } else {
                end = strchr(spec, ':');
                /* More than one colon: a bare IPv6 address, no port. */
                if (end && strchr(end + 1, ':'))
                        end = NULL;
                len = end ? (size_t) (end - spec) : strlen(spec);
                port = end ? end + 1 : NULL;
                if (port && !*port)
                        return PDH_CSTATUS_NO_MACHINE;
        }
        if (len == 0)
                return PDH_CSTATUS_NO_MACHINE;
        *ret_host = strndup(spec, len);
        *ret_port = strdup(port ? port : PCQ_DEFAULT_TCP_PORT);
        if (!*ret_host || !*ret_port) {
                free(*ret_host);
                free(*ret_port);
                return PDH_MEMORY_ALLOCATION_FAILURE;
        }
        return ERROR_SUCCESS;
}

static uint32_t from_errno(int r)
{
        switch (r) {
        case -ENOMEM:
                return PDH_MEMORY_ALLOCATION_FAILURE;
        case -EACCES:
        case -EPERM:
        case -ENOKEY:   /* no credentials to log on with */
                return ERROR_ACCESS_DENIED;
        case -EINVAL:
        case -ENAMETOOLONG:
                return PDH_INVALID_ARGUMENT;
        default:
                return PDH_CANNOT_CONNECT_MACHINE;
        }
}

/* One cheap call, so that a server that refuses this user says so now. */
static uint32_t probe(struct cl_link *c)
{
        struct pv2_out o = { 0 };
        uint32_t e = pv2_enumerate_counterset(c->client, c->machine, 0, &o);

        pv2_out_done(&o);
        if (e == ERROR_NOT_ENOUGH_MEMORY)
                return ERROR_SUCCESS;
        if (e == ERROR_CONNECTION_ABORTED)
                return PDH_CANNOT_CONNECT_MACHINE;
        return e;
}

/* The local server's socket, or the one "unix:PATH" names.  Malloc'd. */
static char *unix_path(const char *host, enum cl_origin *ret_origin)
{
        if (is_local(host))
                return local_socket(ret_origin);
        *ret_origin = CL_GIVEN;
        return strdup(host + 5);
}

static uint32_t open_unix(struct cl_link *c, const char *host, int timeout_ms, char *why,
                          size_t size)
{
        struct cl_target t = { .timeout_ms = timeout_ms };
        char *path = unix_path(host, &t.origin);
        uint32_t e;
        int r;

        if (!path)
                return PDH_MEMORY_ALLOCATION_FAILURE;
        t.path = path;
        r = pv2_client_connect_unix(path, timeout_ms, &c->client);
        e = r < 0 ? from_errno(r) : probe(c);
        if (e)
                cl_explain_connect(&t, r < 0 ? r : 0, e, why, size);
        free(path);
        return e;
}

/*
 * Connects to host and port as cred says, wiping its hash once the bind is
 * done; t gets the user (copied into user) and the mechanism for messages,
 * *ret_err the connect's -errno (0 when it succeeded or was refused).
 */
static uint32_t connect_tcp(struct cl_link *c, const char *host, const char *port,
                            const struct pcq_credentials *cred, int timeout_ms,
                            struct cl_target *t, char user[NTLM_NAME_MAX + 1], int *ret_err,
                            char *why, size_t size)
{
        struct cl_cred cc;
        struct dcerpc_sec sec = { 0 };
        uint32_t e = cl_cred_get(cred, &cc, why, size);
        int r = 0;

        if (e == ERROR_SUCCESS && cc.auth_type != DCERPC_AUTH_TYPE_NONE) {
                r = cl_cred_sec(&cc, host, &sec, why, size);
                e = r < 0 ? from_errno(r) : ERROR_SUCCESS;
        }
        if (cc.auth_type != DCERPC_AUTH_TYPE_NONE) {
                strcpy(user, cc.kerberos ? "the Kerberos ticket's principal" : cc.user);
                t->user = user;
                t->mech = cl_cred_mech(&cc);
        }
        if (e == ERROR_SUCCESS) {
                r = pv2_client_connect_tcp_sec(host, port, timeout_ms, cc.auth_type, &sec,
                                               &c->client);
                e = r < 0 ? from_errno(r) : ERROR_SUCCESS;
                cl_cred_explain(&cc, host, r, why, size);
        }
        cl_cred_wipe(&cc);
        *ret_err = r == -EACCES ? 0 : r;        /* a refusal is told as the status */
        return e;
}

/*
 * Over TCP, c->machine becomes the host name alone (no port, no
 * brackets): it is the szMachine of every call, which perflibd hands to
 * providers as the name of the machine asked.
 */
static uint32_t open_tcp(struct cl_link *c, const char *host, const struct pcq_credentials *cred,
                         int timeout_ms, char *why, size_t size)
{
        struct cl_target t = { .origin = CL_TCP, .timeout_ms = timeout_ms };
        char *h = NULL, *port = NULL, user[NTLM_NAME_MAX + 1];
        uint32_t e = split_host(host, &h, &port);
        int r = 0;

        if (e == PDH_CSTATUS_NO_MACHINE)
                snprintf(why, size, "cannot connect to '%s': a host is NAME, NAME:PORT, "
                         "[ADDRESS] or [ADDRESS]:PORT", host);
        if (e)
                return e;
        t.host = h;
        t.port = port;
        e = connect_tcp(c, h, port, cred, timeout_ms, &t, user, &r, why, size);
        if (e == ERROR_SUCCESS) {
                c->machine = h;         /* t.host stays valid: the link owns it now */
                h = NULL;
                e = probe(c);
        }
        if (e && !why[0])
                cl_explain_connect(&t, r, e, why, size);
        free(h);
        free(port);
        return e;
}

bool cl_host_is_local(const char *host)
{
        return is_local(host);
}

uint32_t cl_link_open(struct cl_link *l, const char *host, const struct pcq_credentials *cred,
                      int timeout_ms, char *why, size_t why_size)
{
        uint32_t e;

        why[0] = 0;
        if (is_local(host) || !strncmp(host, "unix:", 5))
                e = open_unix(l, host, timeout_ms, why, why_size);
        else
                e = open_tcp(l, host, cred, timeout_ms, why, why_size);
        if (e && !why[0])
                snprintf(why, why_size, "cannot connect: %s", pcq_status_text(e));
        return e;
}

void cl_link_close(struct cl_link *l)
{
        pv2_client_free(l->client);
        free(l->machine);
        *l = (struct cl_link){ 0 };
}

PCQ_API void pcq_buf_done(struct pcq_buf *b)
{
        if (!b)
                return;
        free(b->data);
        *b = (struct pcq_buf){ 0 };
}

/* ---- the sizing rule ---- */

struct call {
        enum pv2_opnum op;
        uint32_t max;
        const GUID *guid;
        uint32_t code, lcid;
        const struct pv2_handle *h;
};

static uint32_t call_once(struct cl_link *c, const struct call *k, uint32_t size, struct pv2_out *o)
{
        switch (k->op) {
        case PV2_ENUMERATE_COUNTERSET:
                return pv2_enumerate_counterset(c->client, c->machine, size, o);
        case PV2_QUERY_COUNTERSET_REGISTRATION_INFO:
                return pv2_query_registration_info(c->client, c->machine, k->guid, k->code,
                                                   k->lcid, size, o);
        case PV2_ENUMERATE_COUNTERSET_INSTANCES:
                return pv2_enumerate_instances(c->client, c->machine, k->guid, size, o);
        case PV2_QUERY_COUNTER_INFO:
                return pv2_query_counter_info(c->client, k->h, size, o);
        case PV2_QUERY_COUNTER_DATA:
                return pv2_query_counter_data(c->client, k->h, size, o);
        default:
                return ERROR_INVALID_PARAMETER;
        }
}

/* The next buffer size after the server asked for rtn bytes (0: it did not say). */
static uint32_t grow(uint32_t size, uint32_t rtn, uint32_t max)
{
        uint64_t next = (uint64_t) size * 2;

        /* Slack over what was asked for, since the data may grow meanwhile. */
        if (rtn > size)
                next = (uint64_t) rtn + rtn / 8 + 64;
        return next > max ? max : (uint32_t) next;
}

/* *ret gets the bytes (out_size of them) on success, owned by the caller. */
static uint32_t sized_call(struct cl_link *c, const struct call *k, struct pv2_out *ret)
{
        uint32_t size = c->size_hint[k->op] ? c->size_hint[k->op] : FIRST_GUESS;
        uint32_t e = ERROR_NOT_ENOUGH_MEMORY;

        if (size > k->max)
                size = k->max;
        for (int i = 0; i < MAX_TRIES; i++) {
                struct pv2_out o = { 0 };

                e = call_once(c, k, size, &o);
                if (e == ERROR_SUCCESS && o.rtn_size <= o.out_size) {
                        c->size_hint[k->op] = size;
                        *ret = o;
                        return ERROR_SUCCESS;
                }
                pv2_out_done(&o);
                if ((e != ERROR_SUCCESS && e != ERROR_NOT_ENOUGH_MEMORY) || size == k->max)
                        break;
                size = grow(size, o.rtn_size, k->max);
        }
        return e == ERROR_SUCCESS ? ERROR_NOT_ENOUGH_MEMORY : e;
}

static uint32_t sized_buf(struct cl_link *c, const struct call *k, struct pcq_buf *ret)
{
        struct pv2_out o = { 0 };
        uint32_t e = sized_call(c, k, &o);

        if (e)
                return e;
        *ret = (struct pcq_buf){ .data = o.data, .size = o.out_size };
        return ERROR_SUCCESS;
}

/* ---- the calls ---- */

uint32_t cl_link_enum_countersets(struct cl_link *c, GUID **ret_guids, size_t *ret_n)
{
        struct call k = { .op = PV2_ENUMERATE_COUNTERSET, .max = PV2_MAX_ENUMERATE_GUIDS_EXT };
        struct pv2_out o = { 0 };
        GUID *v;
        uint32_t e;

        /*
         * Counted in GUIDs: ask for the IDL's 256 at once, and for more
         * only when the server says it has more (perflibd's extension; a
         * Windows server never has).
         */
        if (c->size_hint[k.op] < PV2_MAX_ENUMERATE_GUIDS)
                c->size_hint[k.op] = PV2_MAX_ENUMERATE_GUIDS;
        e = sized_call(c, &k, &o);
        if (e)
                return e;
        v = calloc(o.out_size ? o.out_size : 1, sizeof(*v));
        if (!v) {
                pv2_out_done(&o);
                return PDH_MEMORY_ALLOCATION_FAILURE;
        }
        for (uint32_t i = 0; i < o.out_size; i++)
                cl_guid_read(o.data + 16 * (size_t) i, &v[i]);
        *ret_n = o.out_size;
        *ret_guids = v;
        pv2_out_done(&o);
        return ERROR_SUCCESS;
}

uint32_t cl_link_registration_info(struct cl_link *l, const GUID *counterset,
                                   uint32_t request_code, uint32_t lcid, struct pcq_buf *ret)
{
        struct call k = { .op = PV2_QUERY_COUNTERSET_REGISTRATION_INFO,
                          .max = PV2_MAX_REG_INFO_BYTES, .guid = counterset,
                          .code = request_code, .lcid = lcid };

        return sized_buf(l, &k, ret);
}

uint32_t cl_link_enum_instances(struct cl_link *l, const GUID *counterset, struct pcq_buf *ret)
{
        struct call k = { .op = PV2_ENUMERATE_COUNTERSET_INSTANCES,
                          .max = PV2_MAX_INSTANCES_BYTES, .guid = counterset };

        return sized_buf(l, &k, ret);
}

uint32_t cl_link_counter_info(struct cl_link *l, const struct pv2_handle *h, struct pcq_buf *ret)
{
        struct call k = { .op = PV2_QUERY_COUNTER_INFO, .max = PV2_MAX_COUNTER_INFO_BYTES,
                          .h = h };

        return sized_buf(l, &k, ret);
}

uint32_t cl_link_counter_data(struct cl_link *l, const struct pv2_handle *h, struct pcq_buf *ret)
{
        struct call k = { .op = PV2_QUERY_COUNTER_DATA, .max = PV2_MAX_COUNTER_DATA_BYTES,
                          .h = h };

        return sized_buf(l, &k, ret);
}
