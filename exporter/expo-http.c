/* SPDX-License-Identifier: MIT */
/*
 * HTTP with libmicrohttpd, a thread per connection under a connection
 * limit: a scrape waits for perflibd, and the landing page or a second
 * scraper should not wait behind it.  libmicrohttpd bounds each
 * connection's memory (request headers included) and idle time, and
 * refuses plain HTTP on a TLS port.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <microhttpd.h>
#include <zlib.h>

#include "expo-http.h"
#include "expo-opts.h"

#define REALM                   "perflib-exporter"

struct expo_http {
        struct MHD_Daemon *d;
        struct expo_http_config cfg;
        char *landing;                  /* the page at "/", owned */
};

/* ---- negotiation ---- */

/* The q of one element of an Accept list ("type/sub;a=b;q=0.5"), 1 when none. */
static double q_of(const char *params, const char *end)
{
        const char *q;

        for (q = params; q && q < end; q++) {
                const char *p = q + 1;

                if (*q != ';')
                        continue;
                while (p < end && (*p == ' ' || *p == '\t'))
                        p++;
                if (end - p > 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=')
                        return strtod(p + 2, NULL);
        }
        return 1.0;
}

/* Whether the element [s, end) of a list is token (before any ';'), case-insensitive. */
static bool element_is(const char *s, const char *end, const char *token, const char **params)
{
        size_t n = strlen(token);
        const char *t;

        while (s < end && (*s == ' ' || *s == '\t'))
                s++;
        for (*params = s; *params < end && **params != ';'; (*params)++)
                ;
        for (t = *params; t > s && (t[-1] == ' ' || t[-1] == '\t'); t--)
                ;
        return (size_t) (t - s) == n && !strncasecmp(s, token, n);
}

/* The highest q the list gives token, -1 when it does not name it. */
static double list_q(const char *list, const char *token)
{
        double best = -1;

        for (const char *s = list; s && *s;) {
                const char *end = strchr(s, ','), *params;

                if (!end)
                        end = s + strlen(s);
                if (element_is(s, end, token, &params)) {
                        double q = q_of(*params == ';' ? params : NULL, end);

                        if (q > best)
                                best = q;
                }
                s = *end ? end + 1 : end;
        }
        return best;
}

enum expo_syntax expo_http_negotiate(const char *accept)
{
        double om, text;

        if (!accept)
                return EXPO_PROMETHEUS;
        om = list_q(accept, "application/openmetrics-text");
        text = list_q(accept, "text/plain");
        return om > 0 && om >= text ? EXPO_OPENMETRICS : EXPO_PROMETHEUS;
}

bool expo_http_gzip_ok(const char *accept_encoding)
{
        double q;

        if (!accept_encoding)
                return false;
        q = list_q(accept_encoding, "gzip");
        if (q < 0)
                q = list_q(accept_encoding, "*");
        return q > 0;
}

/* ---- answers ---- */

/* Gzips n bytes of data into *ret (malloc'd, the caller's). */
static int gzip(const char *data, size_t n, char **ret, size_t *ret_n)
{
        z_stream z = { 0 };
        uLong cap;
        char *out;
        int r;

        if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                return -ENOMEM;
        cap = deflateBound(&z, (uLong) n);
        out = malloc(cap);
        if (!out) {
                deflateEnd(&z);
                return -ENOMEM;
        }
        z.next_in = (Bytef *) data;
        z.avail_in = (uInt) n;
        z.next_out = (Bytef *) out;
        z.avail_out = (uInt) cap;
        r = deflate(&z, Z_FINISH);
        deflateEnd(&z);
        if (r != Z_STREAM_END) {
                free(out);
                return -EIO;
        }
        *ret = out;
        *ret_n = z.total_out;
        return 0;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *type,
                                 const char *text)
{
        struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(text), (void *) text,
                                                                    MHD_RESPMEM_MUST_COPY);
        enum MHD_Result r;

        if (!resp)
                return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
        if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        r = MHD_queue_response(c, status, resp);
        MHD_destroy_response(resp);
        return r;
}

static enum MHD_Result send_unauthorized(struct MHD_Connection *c)
{
        static const char text[] = "Unauthorized\n";
        struct MHD_Response *resp = MHD_create_response_from_buffer(
                sizeof(text) - 1, (void *) text, MHD_RESPMEM_PERSISTENT);
        enum MHD_Result r;

        if (!resp)
                return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
        r = MHD_queue_basic_auth_fail_response(c, REALM, resp);
        MHD_destroy_response(resp);
        return r;
}

/*
 * The response for a scrape's text, gzipped when gz (and it works); takes
 * b's data either way, so that the text is never copied.
 */
static struct MHD_Response *metrics_response(struct expo_buf *b, bool gz)
{
        struct MHD_Response *resp;
        char *data;
        size_t n;

        if (gz && gzip(b->data, b->len, &data, &n) == 0) {
                free(b->data);
        } else {
                gz = false;
                data = b->data;
                n = b->len;
        }
        b->data = NULL;
        resp = MHD_create_response_from_buffer(n, data, MHD_RESPMEM_MUST_FREE);
        if (!resp) {
                free(data);
                return NULL;
        }
        if (gz)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
        MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
        return resp;
}

static enum MHD_Result send_metrics(struct expo_http *h, struct MHD_Connection *c)
{
        const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
        const char *enc = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                      MHD_HTTP_HEADER_ACCEPT_ENCODING);
        enum expo_syntax syntax = expo_http_negotiate(accept);
        struct expo_buf b = { 0 };
        struct MHD_Response *resp;
        enum MHD_Result r;

        if (expo_scrape(h->cfg.scraper, syntax, &b) < 0 || !b.data) {
                expo_buf_done(&b);
                return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
                                 "Out of memory\n");
        }
        resp = metrics_response(&b, expo_http_gzip_ok(enc));
        expo_buf_done(&b);
        if (!resp)
                return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, expo_content_type(syntax));
        r = MHD_queue_response(c, MHD_HTTP_OK, resp);
        MHD_destroy_response(resp);
        return r;
}

/* Whether the request carries one of web-config.yml's users (or none is needed). */
static bool authorized(const struct expo_http *h, struct MHD_Connection *c)
{
        char *pass = NULL, *user;
        bool ok;

        if (!h->cfg.web || !h->cfg.web->n_users)
                return true;
        user = MHD_basic_auth_get_username_password(c, &pass);
        ok = user && pass && webcfg_check(h->cfg.web, user, pass);
        if (pass) {
                explicit_bzero(pass, strlen(pass));
                MHD_free(pass);
        }
        if (user)
                MHD_free(user);
        return ok;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **req)
{
        struct expo_http *h = cls;

        (void) version;
        (void) upload;
        (void) upload_size;
        (void) req;
        if (!authorized(h, c))
                return send_unauthorized(c);
        if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
                return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
                                 "Method Not Allowed\n");
        if (!strcmp(url, h->cfg.path))
                return send_metrics(h, c);
        if (!strcmp(url, "/"))
                return send_text(c, MHD_HTTP_OK, "text/html; charset=utf-8", h->landing);
        return send_text(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", "Not Found\n");
}

/* ---- the daemon ---- */

/* The page at "/", the telemetry path HTML-escaped in it; malloc'd. */
static char *landing_page(const char *path)
{
        char esc[1024], *page, *o = esc;

        for (const char *p = path; *p && o < esc + sizeof(esc) - 7; p++) {
                const char *rep = *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" :
                                  *p == '"' ? "&quot;" : NULL;

                if (rep) {
                        o = stpcpy(o, rep);
                } else {
                        *o++ = *p;
                }
        }
        *o = '\0';
        if (asprintf(&page,
                     "<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\">"
                     "<title>perflib-exporter</title></head>\n<body>\n"
                     "<h1>perflib-exporter</h1>\n"
                     "<p>perflibd's performance counters for Prometheus and OpenMetrics.</p>\n"
                     "<p><a href=\"%s\">Metrics</a></p>\n</body>\n</html>\n", esc) < 0)
                return NULL;
        return page;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
        char line[512];
        size_t n;

        (void) cls;
        vsnprintf(line, sizeof(line), fmt, ap);
        n = strlen(line);
        while (n && line[n - 1] == '\n')
                line[--n] = '\0';
        expo_log(EXPO_DEBUG, "libmicrohttpd: %s", line);
}

/* "[HOST]:PORT" into host (empty: every address) and port. */
static int split_listen(const char *listen, char *host, size_t size, const char **ret_port)
{
        const char *colon = strrchr(listen, ':'), *h = listen, *end = colon;

        if (!colon || !colon[1])
                return -EINVAL;
        if (*h == '[') {
                h++;
                if (end == h || end[-1] != ']')
                        return -EINVAL;
                end--;
        } else if (memchr(listen, ':', (size_t) (colon - listen))) {
                return -EINVAL;         /* an IPv6 address wants brackets */
        }
        if ((size_t) (end - h) >= size)
                return -EINVAL;
        memcpy(host, h, (size_t) (end - h));
        host[end - h] = '\0';
        *ret_port = colon + 1;
        return 0;
}

static int resolve(const char *host, const char *port, struct sockaddr_storage *ret,
                   unsigned *ret_port)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                                  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
        struct addrinfo *ai;
        char *end;
        unsigned long p = strtoul(port, &end, 10);
        int r;

        if (*end || end == port || p > 65535)
                return -EINVAL;
        *ret_port = (unsigned) p;
        if (!*host)
                return 0;
        r = getaddrinfo(host, port, &hints, &ai);
        if (r) {
                expo_log(EXPO_ERROR, "--web.listen-address: %s: %s", host, gai_strerror(r));
                return -EINVAL;
        }
        memcpy(ret, ai->ai_addr, ai->ai_addrlen);
        freeaddrinfo(ai);
        return 0;
}

/* GnuTLS priorities for web-config.yml's min_version (exporter-toolkit's default: TLS 1.2). */
static const char *tls_priorities(const struct webcfg *w)
{
        return w->min_version == WEBCFG_TLS13 ? "NORMAL:-VERS-ALL:+VERS-TLS1.3" :
                                                "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
}

static struct MHD_Daemon *start_daemon(struct expo_http *h, unsigned flags, unsigned port,
                                       const struct sockaddr_storage *sa)
{
        const struct webcfg *w = h->cfg.web;
        unsigned per_ip = h->cfg.max_connections < h->cfg.max_per_address ?
                          h->cfg.max_connections : h->cfg.max_per_address;
        struct MHD_OptionItem o[10] = {
                { MHD_OPTION_CONNECTION_LIMIT, h->cfg.max_connections, NULL },
                { MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip, NULL },
                { MHD_OPTION_CONNECTION_TIMEOUT, h->cfg.timeout_s, NULL },
                { MHD_OPTION_CONNECTION_MEMORY_LIMIT, h->cfg.request_bytes, NULL },
        };
        size_t n = 4;

        if (sa->ss_family) {
                o[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *) sa };
                if (sa->ss_family == AF_INET6)
                        flags |= MHD_USE_IPv6;
        }
        if (w && w->cert_pem) {
                flags |= MHD_USE_TLS;
                o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, w->cert_pem };
                o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, w->key_pem };
                o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
                                                  (void *) tls_priorities(w) };
        }
        o[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
        return MHD_start_daemon(flags | MHD_USE_THREAD_PER_CONNECTION |
                                MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
                                (uint16_t) port, NULL, NULL, answer, h,
                                MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
                                MHD_OPTION_ARRAY, o, MHD_OPTION_END);
}

int expo_http_start(const struct expo_http_config *cfg, struct expo_http **ret)
{
        struct sockaddr_storage sa = { 0 };
        struct expo_http *h;
        const char *port;
        char host[256];
        unsigned p;
        int r;

        r = split_listen(cfg->listen, host, sizeof(host), &port);
        if (r < 0 || (r = resolve(host, port, &sa, &p)) < 0) {
                expo_log(EXPO_ERROR, "--web.listen-address=%s: not [HOST]:PORT", cfg->listen);
                return -EINVAL;
        }
        h = calloc(1, sizeof(*h));
        if (!h || !(h->landing = landing_page(cfg->path))) {
                free(h);
                return -ENOMEM;
        }
        h->cfg = *cfg;
        /* Every address: IPv6 and IPv4 on one socket, IPv4 alone without IPv6. */
        h->d = start_daemon(h, *host ? 0 : MHD_USE_DUAL_STACK, p, &sa);
        if (!h->d && !*host)
                h->d = start_daemon(h, 0, p, &sa);
        if (!h->d) {
                r = errno ? -errno : -EADDRINUSE;
                expo_log(EXPO_ERROR, "cannot listen on %s: %s", cfg->listen, strerror(-r));
                free(h->landing);
                free(h);
                return r;
        }
        expo_log(EXPO_INFO, "listening on %s, metrics at %s, TLS %s, basic auth %s", cfg->listen,
                 cfg->path, cfg->web && cfg->web->cert_pem ? "on" : "off",
                 cfg->web && cfg->web->n_users ? "on" : "off");
        *ret = h;
        return 0;
}

void expo_http_stop(struct expo_http *h)
{
        if (!h)
                return;
        MHD_stop_daemon(h->d);
        free(h->landing);
        free(h);
}
