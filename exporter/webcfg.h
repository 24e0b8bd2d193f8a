/* SPDX-License-Identifier: MIT */
/*
 * webcfg.h: the web configuration file of Prometheus' exporter-toolkit
 * (web-config.yml, --web.config.file), read with libyaml (webcfg.c):
 * TLS (tls_server_config: cert_file and key_file) and basic auth
 * (basic_auth_users: user to bcrypt hash, checked with libcrypt).  What
 * exporter-toolkit accepts and we do not support is refused by name, never
 * ignored.  Hidden symbols, webcfg_ prefix.
 */
#ifndef EXPO_WEBCFG_H
#define EXPO_WEBCFG_H

#include <stdbool.h>
#include <stddef.h>

struct webcfg_user {
        char *name;
        char *hash;                     /* bcrypt: $2y$, $2b$, $2a$ */
};

/* tls_server_config.min_version: exporter-toolkit's default is TLS 1.2. */
enum webcfg_tls_version {
        WEBCFG_TLS12 = 12,
        WEBCFG_TLS13 = 13,
};

struct webcfg_cache;

struct webcfg {
        /* TLS: both NULL for plain HTTP.  The PEM text, read at load. */
        char *cert_file, *key_file;
        char *cert_pem, *key_pem;
        enum webcfg_tls_version min_version;
        /* Basic auth: none for no authentication. */
        struct webcfg_user *users;
        size_t n_users;
        /* webcfg_check's own: successful checks, and a dummy hash. */
        struct webcfg_cache *cache;
};

/*
 * Reads path into *ret (the caller's: webcfg_free).  On failure, -errno
 * and why (why_size bytes) says "FILE:LINE: cause" (or "FILE: cause").
 */
int webcfg_load(const char *path, struct webcfg **ret, char *why, size_t why_size);
void webcfg_free(struct webcfg *c);

/*
 * Whether user and password are one of c's users (bcrypt): the same work,
 * a hash check, for a user that does not exist, so that timing does not
 * tell which users do.  Thread-safe; false when c has no users.
 */
bool webcfg_check(const struct webcfg *c, const char *user, const char *password);

#endif /* EXPO_WEBCFG_H */
