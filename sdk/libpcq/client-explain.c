/* SPDX-License-Identifier: MIT */
/*
 * Why a connection failed, in words a newcomer can act on: the socket or
 * host and port that were tried, how the socket was chosen (a variable,
 * a default, or the last fallback), the system's own error, and what to
 * do about it (start perflibd, set PERFLIB_RUNTIME_DIR, --listen-tcp,
 * --group).  A bare "cannot connect" sends people searching; this says
 * where to look.
 */
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client-explain.h"
#include "pcq.h"

struct out {
        char *buf;
        size_t size, len;
};

static void add(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct out *o, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (o->len + 1 >= o->size)
                return;
        va_start(ap, fmt);
        n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
        va_end(ap);
        if (n > 0)
                o->len = o->len + (size_t) n < o->size ? o->len + (size_t) n : o->size - 1;
}

static bool is_unix(const struct cl_target *t)
{
        return t->origin != CL_TCP;
}

static void add_target(struct out *o, const struct cl_target *t)
{
        switch (t->origin) {
        case CL_TCP:
                add(o, "perflibd on %s port %s%s", t->host, t->port,
                    strcmp(t->port, PCQ_DEFAULT_TCP_PORT) ? "" : " (the default port)");
                return;
        case CL_GIVEN:
                add(o, "perflibd at %s", t->path);
                return;
        default:
                break;
        }
        add(o, "the local perflibd at %s (", t->path);
        switch (t->origin) {
        case CL_FROM_SOCKET_VAR:
                add(o, "$PERFLIB_SOCKET");
                break;
        case CL_FROM_RUNTIME_VAR:
                add(o, "in $PERFLIB_RUNTIME_DIR");
                break;
        case CL_FROM_RUN:
                add(o, "in /run/perflib, PERFLIB_RUNTIME_DIR being unset");
                break;
        case CL_FROM_XDG:
                add(o, "in $XDG_RUNTIME_DIR/perflib, PERFLIB_RUNTIME_DIR being unset and "
                    "/run/perflib holding no socket");
                break;
        default:
                add(o, "the last default: PERFLIB_RUNTIME_DIR is unset and neither /run/perflib "
                    "nor $XDG_RUNTIME_DIR/perflib holds perflibd.sock");
                break;
        }
        add(o, ")");
}

/* What to do when there is no socket at all. */
static void add_no_socket(struct out *o, const struct cl_target *t)
{
        switch (t->origin) {
        case CL_FROM_SOCKET_VAR:
        case CL_GIVEN:
                add(o, "start perflibd with --socket=%s, or name the socket the running one uses",
                    t->path);
                break;
        case CL_FROM_RUNTIME_VAR:
                add(o, "start perflibd with this PERFLIB_RUNTIME_DIR, or set PERFLIB_RUNTIME_DIR "
                    "to the runtime directory of the running one (its --runtime-dir)");
                break;
        default:
                add(o, "start perflibd, or set PERFLIB_RUNTIME_DIR to the runtime directory of "
                    "the running one (its --runtime-dir)");
                break;
        }
}

/* A user by name, else by number. */
static void add_user(struct out *o, uid_t uid)
{
        struct passwd pw, *found = NULL;
        char tmp[1024];

        if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &found) == 0 && found)
                add(o, "%s", found->pw_name);
        else
                add(o, "uid %u", (unsigned) uid);
}

static void add_refused(struct out *o, const struct cl_target *t)
{
        struct stat st;

        if (!is_unix(t) && t->mech && !strcmp(t->mech, "Kerberos")) {
                add(o, "the server refused the Kerberos ticket: it needs a keytab with the "
                    "key of the service asked for (perflibd --keytab), and an account named "
                    "as the ticket's principal (perflib-passwd USER, or USER@REALM for "
                    "another realm)");
                return;
        }
        if (!is_unix(t) && t->user) {
                add(o, "the server does not know user %s or the password is wrong: check "
                    "them (PERFLIB_USER, PERFLIB_PASSWORD), or add the account on the "
                    "server with perflib-passwd", t->user);
                return;
        }
        if (!is_unix(t)) {
                add(o, "perflibd serves TCP only to clients that authenticate: give a user "
                    "and password (PERFLIB_USER and PERFLIB_PASSWORD, typeperf -u)");
                return;
        }
        add(o, "perflibd answers only root, the user it runs as");
        /* The socket is the server's: its owner is the user perflibd runs as. */
        if (stat(t->path, &st) == 0) {
                add(o, " (");
                add_user(o, st.st_uid);
                add(o, ")");
        }
        add(o, " and members of its --group: run as one of them, or have user ");
        add_user(o, getuid());
        add(o, " added to that group");
}

static void add_errno_advice(struct out *o, const struct cl_target *t, int err)
{
        switch (err) {
        case -ENOENT:
                if (is_unix(t))
                        add_no_socket(o, t);
                break;
        case -ECONNREFUSED:
                if (is_unix(t))
                        add(o, "no perflibd listens on it any more (one stopped and left its "
                            "socket behind): start perflibd");
                else
                        add(o, "start perflibd there with --listen-tcp=ADDRESS:%s (or "
                            "PERFLIB_LISTEN_TCP), or give the port it listens on as HOST:PORT",
                            t->port);
                break;
        case -EACCES:
        case -EPERM:
                add(o, "this user may not reach the socket: run as root, as the user perflibd "
                    "runs as or as a member of its --group");
                break;
        case -EHOSTUNREACH:
        case -ENETUNREACH:
                add(o, "check the host name and the network");
                break;
        case -ETIMEDOUT:
                add(o, "check that %s is up and that no firewall drops port %s", t->host,
                    t->port);
                break;
        case -EPROTO:
                add(o, "what answers there is not a PerflibV2 server");
                break;
        case -EPROTONOSUPPORT:
                add(o, "the server accepted the bind without authenticating, as no perflibd "
                    "that knows remote accounts does: check what listens on port %s", t->port);
                break;
        default:
                break;
        }
}

void cl_explain_connect(const struct cl_target *t, int err, uint32_t status, char *buf,
                        size_t size)
{
        struct out o = { buf, size, 0 };
        size_t before;

        if (!buf || size == 0)
                return;
        buf[0] = 0;
        add(&o, "cannot connect to ");
        add_target(&o, t);
        /* Who we were matters once the server answered. */
        if (t->origin == CL_TCP && t->user && !err)
                add(&o, " as %s (%s)", t->user, t->mech ? t->mech : "");
        if (err)
                add(&o, ": %s", strerror(-err));
        else
                add(&o, ": %.*s", (int) strcspn(pcq_status_text(status), "."),
                    pcq_status_text(status));
        before = o.len;
        add(&o, "; ");
        if (err)
                add_errno_advice(&o, t, err);
        else if (status == ERROR_ACCESS_DENIED)
                add_refused(&o, t);
        else if (status == PDH_CANNOT_CONNECT_MACHINE)
                add(&o, "the connection broke or the first call took longer than %d ms",
                    t->timeout_ms);
        if (o.len == before + 2)
                buf[before] = 0;        /* no advice: no "; " */
}
