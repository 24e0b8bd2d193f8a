/* SPDX-License-Identifier: MIT */
/*
 * webcfg.c: exporter-toolkit's web-config.yml (docs/web-configuration.md
 * there), read with libyaml's document API.  We support the TLS files,
 * min_version and basic-auth users; every other key exporter-toolkit knows
 * is refused by name, so that a file written for another exporter never
 * silently means less here (a client_ca_file ignored would be an open
 * door).  Errors read "FILE:LINE: cause", LINE being the key's line.
 */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <yaml.h>

#include "webcfg.h"

/* Bounds: a config or PEM file is a few KiB; users are people or scrapers. */
#define WEBCFG_MAX_FILE (1024 * 1024)
#define WEBCFG_MAX_USERS 1024
/* bcrypt uses the first 72 bytes only; longer passwords are refused. */
#define BCRYPT_MAX_PASSWORD 72
#define BCRYPT_HASH_LEN 60
#define CACHE_SLOTS 64

/*
 * Successful checks, so that a scraper sending the right credentials every
 * few seconds pays bcrypt once, not on every scrape (exporter-toolkit does
 * the same).  An entry is the user's index and HMAC-SHA256(key, user NUL
 * password) under a key drawn at load and never stored: the password itself
 * is never kept, and a memory dump gives no fast offline oracle (a plain
 * hash would undo bcrypt's cost).  Bounded: a full cache replaces its
 * oldest entry.  The mutex makes it safe from libmicrohttpd's threads.
 */
struct cache_entry {
        size_t user;
        uint8_t mac[SHA256_DIGEST_SIZE];
        bool used;
};

struct webcfg_cache {
        pthread_mutex_t lock;
        uint8_t key[32];
        struct cache_entry slot[CACHE_SLOTS];
        size_t next;
        /* A salt at the users' highest cost, for unknown users' bcrypt. */
        char dummy[CRYPT_GENSALT_OUTPUT_SIZE];
};

/* What a load carries: the file's name and directory, the error text. */
struct loader {
        const char *path;
        char *dir;                      /* NULL: the current directory */
        char *why;
        size_t why_size;
        struct webcfg *c;
        size_t cert_line, key_line;
};

__attribute__((format(printf, 4, 5)))
static int fail(struct loader *l, int err, size_t line, const char *fmt, ...)
{
        char cause[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(cause, sizeof(cause), fmt, ap);
        va_end(ap);
        if (l->why && l->why_size > 0) {
                if (line > 0)
                        snprintf(l->why, l->why_size, "%s:%zu: %s", l->path, line, cause);
                else
                        snprintf(l->why, l->why_size, "%s: %s", l->path, cause);
        }
        return err;
}

/* Reads a whole file of at most WEBCFG_MAX_FILE bytes, NUL-terminated;
 * *ret is the caller's to free. */
static int read_file(const char *path, char **ret, size_t *ret_len)
{
        /* O_NONBLOCK: a FIFO named by mistake is refused, not waited on. */
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        struct stat st;
        char *buf = NULL;
        size_t len;
        FILE *f;
        int r;

        if (fd < 0)
                return -errno;
        f = fdopen(fd, "r");
        if (!f) {
                r = -errno;
                close(fd);
                return r;
        }
        if (fstat(fileno(f), &st) < 0) {
                r = -errno;
                goto fail;
        }
        if (!S_ISREG(st.st_mode)) {
                r = -EINVAL;
                goto fail;
        }
        if (st.st_size > WEBCFG_MAX_FILE) {
                r = -EFBIG;
                goto fail;
        }
        /* One byte more than the bound tells a file that grew meanwhile. */
        buf = malloc(WEBCFG_MAX_FILE + 2);
        if (!buf) {
                r = -ENOMEM;
                goto fail;
        }
        len = fread(buf, 1, WEBCFG_MAX_FILE + 1, f);
        if (ferror(f)) {
                r = -EIO;
                goto fail;
        }
        if (len > WEBCFG_MAX_FILE) {
                r = -EFBIG;
                goto fail;
        }
        fclose(f);
        buf[len] = '\0';
        *ret = buf;
        if (ret_len)
                *ret_len = len;
        return 0;
fail:
        free(buf);
        fclose(f);
        return r;
}

static const char *why_errno(int r)
{
        return r == -EFBIG ? "larger than 1 MiB" :
               r == -EINVAL ? "not a regular file" : strerror(-r);
}

static size_t line_of(const yaml_node_t *n)
{
        return n->start_mark.line + 1;
}

static const char *scalar(const yaml_node_t *n)
{
        return n->type == YAML_SCALAR_NODE ? (const char *) n->data.scalar.value : NULL;
}

/* YAML's null: an empty plain scalar, ~ or null. */
static bool is_null(const yaml_node_t *n)
{
        const char *s = scalar(n);

        if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return false;
        return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
               !strcmp(s, "NULL");
}

/* Whether one of names (NULL-terminated) is s. */
static bool one_of(const char *s, const char *const *names)
{
        for (; *names; names++)
                if (!strcmp(s, *names))
                        return true;
        return false;
}

/*
 * Checks that map is a mapping (or null: empty) with scalar keys, each once.
 * libyaml does not refuse a repeated key; here a second cert_file or a
 * second entry for a user is an error, not a silent override.
 */
static int check_mapping(struct loader *l, yaml_document_t *doc, const yaml_node_t *map,
                         size_t line, const char *section)
{
        const yaml_node_pair_t *p, *q;

        if (is_null(map))
                return 0;
        if (map->type != YAML_MAPPING_NODE)
                return fail(l, -EINVAL, line, "%s is not a mapping", section);
        for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                const yaml_node_t *k = yaml_document_get_node(doc, p->key);

                if (!scalar(k))
                        return fail(l, -EINVAL, line_of(k), "a key in %s is not a string",
                                    section);
                for (q = map->data.mapping.pairs.start; q < p; q++) {
                        const yaml_node_t *k0 = yaml_document_get_node(doc, q->key);

                        if (!strcmp(scalar(k), scalar(k0)))
                                return fail(l, -EINVAL, line_of(k),
                                            "duplicate key '%s' in %s, first on line %zu",
                                            scalar(k), section, line_of(k0));
                }
        }
        return 0;
}

static size_t n_pairs(const yaml_node_t *map)
{
        if (map->type != YAML_MAPPING_NODE)
                return 0;
        return (size_t) (map->data.mapping.pairs.top - map->data.mapping.pairs.start);
}

/* A string value, or NULL for null; *ret is the caller's. */
static int string_value(struct loader *l, const yaml_node_t *k, const yaml_node_t *v,
                        char **ret)
{
        const char *s;

        if (is_null(v)) {
                *ret = NULL;
                return 0;
        }
        s = scalar(v);
        if (!s)
                return fail(l, -EINVAL, line_of(k), "%s is not a string", scalar(k));
        if (!(*ret = strdup(s)))
                return fail(l, -ENOMEM, line_of(k), "out of memory");
        return 0;
}

/* exporter-toolkit resolves the TLS files against the config's directory. */
static int tls_file(struct loader *l, const yaml_node_t *k, const yaml_node_t *v,
                    char **ret_path)
{
        char *name = NULL;
        int r;

        r = string_value(l, k, v, &name);
        if (r < 0 || !name)
                return r;
        if (name[0] == '\0') {
                free(name);
                return 0;
        }
        if (name[0] != '/' && l->dir) {
                char *full;

                if (asprintf(&full, "%s/%s", l->dir, name) < 0) {
                        free(name);
                        return fail(l, -ENOMEM, line_of(k), "out of memory");
                }
                free(name);
                name = full;
        }
        free(*ret_path);
        *ret_path = name;
        return 0;
}

static int tls_version(struct loader *l, const yaml_node_t *k, const yaml_node_t *v)
{
        const char *s = scalar(v);
        static const char *const old[] = { "TLS10", "TLS11", NULL };

        if (s && !strcmp(s, "TLS12"))
                l->c->min_version = WEBCFG_TLS12;
        else if (s && !strcmp(s, "TLS13"))
                l->c->min_version = WEBCFG_TLS13;
        else if (s && one_of(s, old))
                return fail(l, -EINVAL, line_of(k),
                            "min_version %s is not supported (TLS12 or TLS13)", s);
        else
                return fail(l, -EINVAL, line_of(k),
                            "min_version is not TLS10, TLS11, TLS12 or TLS13");
        return 0;
}

static int client_auth(struct loader *l, const yaml_node_t *k, const yaml_node_t *v)
{
        static const char *const known[] = {
                "RequestClientCert", "RequireAnyClientCert", "VerifyClientCertIfGiven",
                "RequireAndVerifyClientCert", NULL,
        };
        const char *s = scalar(v);

        if (is_null(v) || (s && !strcmp(s, "NoClientCert")))
                return 0;
        if (s && one_of(s, known))
                return fail(l, -ENOTSUP, line_of(k),
                            "client_auth_type %s is not supported (NoClientCert only)", s);
        return fail(l, -EINVAL, line_of(k), "unknown client_auth_type '%s'", s ? s : "");
}

static int parse_tls(struct loader *l, yaml_document_t *doc, const yaml_node_t *map,
                     size_t line)
{
        static const char *const unsupported[] = {
                "cert", "key", "client_ca_file", "client_allowed_sans", "cipher_suites",
                "curve_preferences", "max_version", "prefer_server_cipher_suites", NULL,
        };
        const yaml_node_pair_t *p;
        int r;

        r = check_mapping(l, doc, map, line, "tls_server_config");
        if (r < 0 || n_pairs(map) == 0)
                return r;
        for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                const yaml_node_t *k = yaml_document_get_node(doc, p->key);
                const yaml_node_t *v = yaml_document_get_node(doc, p->value);
                const char *key = scalar(k);

                if (!strcmp(key, "cert_file")) {
                        l->cert_line = line_of(k);
                        r = tls_file(l, k, v, &l->c->cert_file);
                } else if (!strcmp(key, "key_file")) {
                        l->key_line = line_of(k);
                        r = tls_file(l, k, v, &l->c->key_file);
                } else if (!strcmp(key, "min_version"))
                        r = tls_version(l, k, v);
                else if (!strcmp(key, "client_auth_type"))
                        r = client_auth(l, k, v);
                else if (one_of(key, unsupported))
                        r = fail(l, -ENOTSUP, line_of(k),
                                 "'%s' in tls_server_config is not supported", key);
                else
                        r = fail(l, -EINVAL, line_of(k),
                                 "unknown key '%s' in tls_server_config", key);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_http(struct loader *l, yaml_document_t *doc, const yaml_node_t *map,
                      size_t line)
{
        static const char *const unsupported[] = { "http2", "headers", NULL };
        const yaml_node_pair_t *p;
        int r;

        r = check_mapping(l, doc, map, line, "http_server_config");
        if (r < 0 || n_pairs(map) == 0)
                return r;
        for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                const yaml_node_t *k = yaml_document_get_node(doc, p->key);
                const char *key = scalar(k);

                if (one_of(key, unsupported))
                        return fail(l, -ENOTSUP, line_of(k),
                                    "'%s' in http_server_config is not supported", key);
                return fail(l, -EINVAL, line_of(k), "unknown key '%s' in http_server_config",
                            key);
        }
        return 0;
}

/* "$2a$", "$2b$" or "$2y$", a cost of 04 to 31, '$', 53 of bcrypt's base64. */
static bool is_bcrypt(const char *h)
{
        static const char b64[] =
                "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        int cost;

        if (strlen(h) != BCRYPT_HASH_LEN || h[0] != '$' || h[1] != '2' ||
            !strchr("aby", h[2]) || h[3] != '$' || h[6] != '$')
                return false;
        if (h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9')
                return false;
        cost = (h[4] - '0') * 10 + (h[5] - '0');
        if (cost < 4 || cost > 31)
                return false;
        return strspn(h + 7, b64) == BCRYPT_HASH_LEN - 7;
}

static int parse_users(struct loader *l, yaml_document_t *doc, const yaml_node_t *map,
                       size_t line)
{
        const yaml_node_pair_t *p;
        size_t n = n_pairs(map);
        int r;

        r = check_mapping(l, doc, map, line, "basic_auth_users");
        if (r < 0 || n == 0)
                return r;
        if (n > WEBCFG_MAX_USERS)
                return fail(l, -E2BIG, line, "more than %d users in basic_auth_users",
                            WEBCFG_MAX_USERS);
        l->c->users = calloc(n, sizeof(*l->c->users));
        if (!l->c->users)
                return fail(l, -ENOMEM, line, "out of memory");
        for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                const yaml_node_t *k = yaml_document_get_node(doc, p->key);
                const yaml_node_t *v = yaml_document_get_node(doc, p->value);
                const char *user = scalar(k), *hash = scalar(v);
                struct webcfg_user *u;

                /* Basic auth's user-pass is "user:password": no ':' in a user. */
                if (!*user || strchr(user, ':'))
                        return fail(l, -EINVAL, line_of(k), "invalid user name '%s'", user);
                if (!hash || !is_bcrypt(hash))
                        return fail(l, -EINVAL, line_of(k),
                                    "the hash of user '%s' is not bcrypt ($2a$, $2b$ or $2y$)",
                                    user);
                u = &l->c->users[l->c->n_users];
                u->name = strdup(user);
                u->hash = strdup(hash);
                l->c->n_users++;
                if (!u->name || !u->hash)
                        return fail(l, -ENOMEM, line_of(k), "out of memory");
        }
        return 0;
}

static int parse_root(struct loader *l, yaml_document_t *doc, const yaml_node_t *root)
{
        const yaml_node_pair_t *p;
        int r;

        r = check_mapping(l, doc, root, line_of(root), "the top level");
        if (r < 0 || n_pairs(root) == 0)
                return r;
        for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
                const yaml_node_t *k = yaml_document_get_node(doc, p->key);
                const yaml_node_t *v = yaml_document_get_node(doc, p->value);
                const char *key = scalar(k);

                if (!strcmp(key, "tls_server_config"))
                        r = parse_tls(l, doc, v, line_of(k));
                else if (!strcmp(key, "http_server_config"))
                        r = parse_http(l, doc, v, line_of(k));
                else if (!strcmp(key, "basic_auth_users"))
                        r = parse_users(l, doc, v, line_of(k));
                else if (!strcmp(key, "rate_limit"))
                        r = fail(l, -ENOTSUP, line_of(k), "'rate_limit' is not supported");
                else
                        r = fail(l, -EINVAL, line_of(k), "unknown key '%s' at the top level",
                                 key);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Parses text (one YAML document, or none) into l->c. */
static int parse_text(struct loader *l, const char *text, size_t len)
{
        yaml_parser_t parser;
        yaml_document_t doc;
        yaml_node_t *root;
        int r;

        if (!yaml_parser_initialize(&parser))
                return fail(l, -ENOMEM, 0, "out of memory");
        yaml_parser_set_input_string(&parser, (const unsigned char *) text, len);
        if (!yaml_parser_load(&parser, &doc)) {
                r = fail(l, -EINVAL, parser.problem_mark.line + 1, "%s",
                         parser.problem ? parser.problem : "YAML error");
                yaml_parser_delete(&parser);
                return r;
        }
        root = yaml_document_get_root_node(&doc);
        r = root ? parse_root(l, &doc, root) : 0;
        yaml_document_delete(&doc);
        if (r == 0) {
                /* A second document would be ignored by exporter-toolkit's
                 * single Unmarshal; refuse it rather than guess. */
                if (!yaml_parser_load(&parser, &doc))
                        r = fail(l, -EINVAL, parser.problem_mark.line + 1, "%s",
                                 parser.problem ? parser.problem : "YAML error");
                else {
                        root = yaml_document_get_root_node(&doc);
                        if (root)
                                r = fail(l, -EINVAL, line_of(root),
                                         "more than one YAML document");
                        yaml_document_delete(&doc);
                }
        }
        yaml_parser_delete(&parser);
        return r;
}

/* cert_file and key_file come in pairs; their PEM is read now, so that a
 * bad path is reported at start rather than on the first TLS handshake. */
static int load_tls(struct loader *l)
{
        struct webcfg *c = l->c;
        int r;

        if (!c->cert_file && !c->key_file)
                return 0;
        if (!c->key_file)
                return fail(l, -EINVAL, l->cert_line,
                            "cert_file without key_file in tls_server_config");
        if (!c->cert_file)
                return fail(l, -EINVAL, l->key_line,
                            "key_file without cert_file in tls_server_config");
        r = read_file(c->cert_file, &c->cert_pem, NULL);
        if (r < 0)
                return fail(l, r, l->cert_line, "cannot read cert_file '%s': %s",
                            c->cert_file, why_errno(r));
        r = read_file(c->key_file, &c->key_pem, NULL);
        if (r < 0)
                return fail(l, r, l->key_line, "cannot read key_file '%s': %s",
                            c->key_file, why_errno(r));
        return 0;
}

static int bcrypt_cost(const char *hash)
{
        return (hash[4] - '0') * 10 + (hash[5] - '0');
}

static int cache_new(struct loader *l)
{
        struct webcfg *c = l->c;
        struct webcfg_cache *k;
        unsigned long cost = 10;
        size_t i;

        k = calloc(1, sizeof(*k));
        if (!k)
                return fail(l, -ENOMEM, 0, "out of memory");
        c->cache = k;
        if (pthread_mutex_init(&k->lock, NULL) != 0) {
                c->cache = NULL;
                free(k);
                return fail(l, -ENOMEM, 0, "out of memory");
        }
        if (getrandom(k->key, sizeof(k->key), 0) != (ssize_t) sizeof(k->key))
                return fail(l, -EIO, 0, "cannot draw a random key: %s", strerror(errno));
        if (c->n_users > 0)
                cost = 4;
        for (i = 0; i < c->n_users; i++)
                if ((unsigned long) bcrypt_cost(c->users[i].hash) > cost)
                        cost = (unsigned long) bcrypt_cost(c->users[i].hash);
        if (!crypt_gensalt_rn("$2b$", cost, NULL, 0, k->dummy, sizeof(k->dummy)))
                return fail(l, -errno, 0, "cannot make a bcrypt salt: %s", strerror(errno));
        return 0;
}

/* The config's directory, NULL for one in the current directory. */
static int dir_of(const char *path, char **ret)
{
        const char *slash = strrchr(path, '/');

        *ret = NULL;
        if (!slash)
                return 0;
        *ret = slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
        return *ret ? 0 : -ENOMEM;
}

int webcfg_load(const char *path, struct webcfg **ret, char *why, size_t why_size)
{
        struct loader l = { .path = path, .why = why, .why_size = why_size };
        char *text = NULL;
        size_t len;
        int r;

        r = read_file(path, &text, &len);
        if (r < 0)
                return fail(&l, r, 0, "cannot read: %s", why_errno(r));
        l.c = calloc(1, sizeof(*l.c));
        if (!l.c || dir_of(path, &l.dir) < 0) {
                r = fail(&l, -ENOMEM, 0, "out of memory");
                goto fail;
        }
        l.c->min_version = WEBCFG_TLS12;
        if (strlen(text) != len) {
                r = fail(&l, -EINVAL, 0, "a NUL byte in the file");
                goto fail;
        }
        r = parse_text(&l, text, len);
        if (r < 0)
                goto fail;
        r = load_tls(&l);
        if (r < 0)
                goto fail;
        r = cache_new(&l);
        if (r < 0)
                goto fail;
        free(text);
        free(l.dir);
        *ret = l.c;
        return 0;
fail:
        webcfg_free(l.c);
        free(text);
        free(l.dir);
        return r;
}

/* Frees c and everything it holds; the key's PEM is wiped first. */
void webcfg_free(struct webcfg *c)
{
        size_t i;

        if (!c)
                return;
        for (i = 0; i < c->n_users; i++) {
                free(c->users[i].name);
                free(c->users[i].hash);
        }
        free(c->users);
        if (c->key_pem) {
                explicit_bzero(c->key_pem, strlen(c->key_pem));
                free(c->key_pem);
        }
        free(c->cert_pem);
        free(c->cert_file);
        free(c->key_file);
        if (c->cache) {
                pthread_mutex_destroy(&c->cache->lock);
                explicit_bzero(c->cache, sizeof(*c->cache));
                free(c->cache);
        }
        free(c);
}

static void cache_mac(const struct webcfg_cache *k, const char *user, const char *password,
                      uint8_t mac[SHA256_DIGEST_SIZE])
{
        struct hmac_sha256_ctx ctx;

        hmac_sha256_set_key(&ctx, sizeof(k->key), k->key);
        hmac_sha256_update(&ctx, strlen(user) + 1, (const uint8_t *) user);
        hmac_sha256_update(&ctx, strlen(password), (const uint8_t *) password);
        hmac_sha256_digest(&ctx, SHA256_DIGEST_SIZE, mac);
        explicit_bzero(&ctx, sizeof(ctx));
}

static bool cache_has(struct webcfg_cache *k, size_t user, const uint8_t *mac)
{
        bool hit = false;
        size_t i;

        pthread_mutex_lock(&k->lock);
        for (i = 0; i < CACHE_SLOTS; i++)
                if (k->slot[i].used && k->slot[i].user == user &&
                    memeql_sec(k->slot[i].mac, mac, SHA256_DIGEST_SIZE))
                        hit = true;
        pthread_mutex_unlock(&k->lock);
        return hit;
}

static void cache_add(struct webcfg_cache *k, size_t user, const uint8_t *mac)
{
        struct cache_entry *e;

        pthread_mutex_lock(&k->lock);
        e = &k->slot[k->next];
        k->next = (k->next + 1) % CACHE_SLOTS;
        e->user = user;
        memcpy(e->mac, mac, SHA256_DIGEST_SIZE);
        e->used = true;
        pthread_mutex_unlock(&k->lock);
}

/* bcrypt of password under setting (a hash or a salt) equals want, compared
 * in constant time; crypt_rn's state is on the heap (it is ~32 KiB). */
static bool bcrypt_equal(const char *password, const char *setting, const char *want)
{
        struct crypt_data *cd = calloc(1, sizeof(*cd));
        const char *got;
        bool ok = false;

        if (!cd)
                return false;
        got = crypt_rn(password, setting, cd, (int) sizeof(*cd));
        if (got && strlen(got) == BCRYPT_HASH_LEN && strlen(want) == BCRYPT_HASH_LEN)
                ok = memeql_sec(got, want, BCRYPT_HASH_LEN);
        explicit_bzero(cd, sizeof(*cd));
        free(cd);
        return ok;
}

bool webcfg_check(const struct webcfg *c, const char *user, const char *password)
{
        uint8_t mac[SHA256_DIGEST_SIZE];
        size_t i, found = SIZE_MAX;
        bool ok;

        if (!c || !c->cache || c->n_users == 0 || !user || !password)
                return false;
        /* bcrypt would ignore what follows byte 72: two passwords would match. */
        if (strlen(password) > BCRYPT_MAX_PASSWORD)
                return false;
        for (i = 0; i < c->n_users; i++)
                if (!strcmp(c->users[i].name, user))
                        found = i;
        if (found != SIZE_MAX) {
                cache_mac(c->cache, user, password, mac);
                if (cache_has(c->cache, found, mac))
                        return true;
                ok = bcrypt_equal(password, c->users[found].hash, c->users[found].hash);
                if (ok)
                        cache_add(c->cache, found, mac);
                return ok;
        }
        /* An unknown user costs one bcrypt too, which never matches. */
        bcrypt_equal(password, c->cache->dummy, c->cache->dummy);
        return false;
}
