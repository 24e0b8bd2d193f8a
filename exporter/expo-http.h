/* SPDX-License-Identifier: MIT */
/*
 * expo-http.h: perflib-exporter's HTTP side with libmicrohttpd
 * (expo-http.c): the landing page at "/", the metrics at the telemetry
 * path, GET and HEAD only, content negotiation (OpenMetrics when asked),
 * gzip, TLS and basic auth from web-config.yml, and libmicrohttpd's limits
 * on connections, their memory and their time.  Hidden symbols, expo_
 * prefix.
 */
#ifndef EXPO_HTTP_H
#define EXPO_HTTP_H

#include <stdbool.h>

#include "expo-format.h"
#include "expo-scrape.h"
#include "webcfg.h"

struct expo_http_config {
        const char *listen;             /* "[HOST]:PORT", HOST empty: every address */
        const char *path;               /* the telemetry path */
        unsigned max_connections;
        unsigned max_per_address;
        unsigned request_bytes;         /* libmicrohttpd's memory per connection */
        unsigned timeout_s;
        const struct webcfg *web;       /* NULL: plain HTTP, no auth; the caller's */
        struct expo_scraper *scraper;   /* the caller's */
};

struct expo_http;

/*
 * Starts serving in threads of libmicrohttpd's.  *ret is the caller's
 * (expo_http_stop).  -EINVAL for a listen address that does not parse,
 * another -errno when it cannot listen (both logged).
 */
int expo_http_start(const struct expo_http_config *cfg, struct expo_http **ret);
void expo_http_stop(struct expo_http *h);

/* Which syntax an Accept header asks for (exposed for the unit tests). */
enum expo_syntax expo_http_negotiate(const char *accept);
/* Whether an Accept-Encoding header allows gzip. */
bool expo_http_gzip_ok(const char *accept_encoding);

#endif /* EXPO_HTTP_H */
