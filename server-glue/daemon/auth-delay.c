/* SPDX-License-Identifier: MIT */
/*
 * The slowed answers to failed authentications (auth-delay.h).  A plain
 * array searched linearly: a few thousand peers at most, and every search
 * is for a failure that is about to wait a tenth of a second or more.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "auth-delay.h"

struct peer {
        uint8_t key[16];                /* IPv4: the address; IPv6: its /64 */
        uint8_t family;                 /* 0: a free slot */
        unsigned failures;
        uint64_t last;                  /* µs, monotonic, of the last failure */
};

struct auth_delay {
        pthread_mutex_t lock;
        struct peer *peers;
        size_t n, max;
};

int auth_delay_new(size_t max_peers, struct auth_delay **ret)
{
        struct auth_delay *t;

        if (!ret)
                return -EINVAL;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->max = max_peers ? max_peers : AUTH_DELAY_MAX_PEERS;
        t->peers = calloc(t->max, sizeof(*t->peers));
        if (!t->peers) {
                free(t);
                return -ENOMEM;
        }
        pthread_mutex_init(&t->lock, NULL);
        *ret = t;
        return 0;
}

void auth_delay_free(struct auth_delay *t)
{
        if (!t)
                return;
        pthread_mutex_destroy(&t->lock);
        free(t->peers);
        free(t);
}

/* The key peer is counted under: false for an address that is not counted. */
static bool peer_key(const struct sockaddr *sa, socklen_t len, struct peer *ret)
{
        memset(ret, 0, sizeof(*ret));
        if (sa && sa->sa_family == AF_INET && len >= (socklen_t) sizeof(struct sockaddr_in)) {
                memcpy(ret->key, &((const struct sockaddr_in *) sa)->sin_addr, 4);
                ret->family = AF_INET;
                return true;
        }
        if (sa && sa->sa_family == AF_INET6 && len >= (socklen_t) sizeof(struct sockaddr_in6)) {
                const uint8_t *a = ((const struct sockaddr_in6 *) sa)->sin6_addr.s6_addr;
                static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

                /* An IPv4 peer on a dual-stack socket is that IPv4 address. */
                if (memcmp(a, v4mapped, sizeof(v4mapped)) == 0) {
                        memcpy(ret->key, a + 12, 4);
                        ret->family = AF_INET;
                } else {
                        memcpy(ret->key, a, 8);
                        ret->family = AF_INET6;
                }
                return true;
        }
        return false;
}

static struct peer *find(struct auth_delay *t, const struct peer *k)
{
        for (size_t i = 0; i < t->n; i++)
                if (t->peers[i].family == k->family && memcmp(t->peers[i].key, k->key, 16) == 0)
                        return &t->peers[i];
        return NULL;
}

/* A slot for a new peer: a free one, one forgotten by now, else the quiet the longest. */
static struct peer *take_slot(struct auth_delay *t, uint64_t now)
{
        struct peer *oldest = NULL;

        if (t->n < t->max)
                return &t->peers[t->n++];
        for (size_t i = 0; i < t->n; i++) {
                struct peer *p = &t->peers[i];

                if (now - p->last >= AUTH_DELAY_FORGET_USEC)
                        return p;
                if (!oldest || p->last < oldest->last)
                        oldest = p;
        }
        return oldest;
}

uint64_t auth_delay_failed(struct auth_delay *t, const struct sockaddr *peer, socklen_t len,
                           uint64_t now)
{
        struct peer k, *p;
        uint64_t delay = AUTH_DELAY_FIRST_USEC;

        if (!t || !peer_key(peer, len, &k))
                return 0;
        pthread_mutex_lock(&t->lock);
        p = find(t, &k);
        if (p && now - p->last >= AUTH_DELAY_FORGET_USEC)
                p->failures = 0;
        if (!p) {
                p = take_slot(t, now);
                *p = k;
        }
        p->failures++;
        p->last = now;
        for (unsigned i = 1; i < p->failures && delay < AUTH_DELAY_MAX_USEC; i++)
                delay *= 2;
        pthread_mutex_unlock(&t->lock);
        return delay < AUTH_DELAY_MAX_USEC ? delay : AUTH_DELAY_MAX_USEC;
}

size_t auth_delay_peers(struct auth_delay *t)
{
        size_t n;

        if (!t)
                return 0;
        pthread_mutex_lock(&t->lock);
        n = t->n;
        pthread_mutex_unlock(&t->lock);
        return n;
}
