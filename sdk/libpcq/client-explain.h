/* SPDX-License-Identifier: MIT */
/*
 * client-explain.h: the sentence pcq_connect_error() gives when a
 * connection fails (client-explain.c): what was tried, how it was chosen,
 * what the system said and what to do about it.  Pure formatting over
 * what client-link.c knows; hidden symbols, cl_ prefix.
 */
#ifndef PCQ_CLIENT_EXPLAIN_H
#define PCQ_CLIENT_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

/* How the socket of the local perflibd was chosen (client-link.c's search order). */
enum cl_origin {
        CL_FROM_SOCKET_VAR,             /* $PERFLIB_SOCKET */
        CL_FROM_RUNTIME_VAR,            /* $PERFLIB_RUNTIME_DIR */
        CL_FROM_RUN,                    /* /run/perflib, where a socket was */
        CL_FROM_XDG,                    /* $XDG_RUNTIME_DIR/perflib, where a socket was */
        CL_FROM_FALLBACK,               /* none of the above had one */
        CL_GIVEN,                       /* "unix:PATH" */
        CL_TCP,                         /* host and port */
};

struct cl_target {
        enum cl_origin origin;
        const char *path;               /* the socket, unless CL_TCP */
        const char *host, *port;        /* CL_TCP */
        const char *user, *mech;        /* CL_TCP: who we bound as and how, NULL: nobody */
        int timeout_ms;
};

/*
 * Why connecting to t failed, into buf (always NUL-terminated, cut short
 * when it does not fit): err is the -errno of the connect, or 0 when the
 * connect succeeded and the server answered status (a Win32 code) to the
 * first call.
 */
void cl_explain_connect(const struct cl_target *t, int err, uint32_t status, char *buf,
                        size_t size);

#endif /* PCQ_CLIENT_EXPLAIN_H */
