/* SPDX-License-Identifier: MIT */
/*
 * Who may query over TCP (remote-auth.h).  The accounts are reread on a
 * logon that finds the file changed, under a lock of their own: logons
 * come from every connection thread.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "accounts.h"
#include "auth-delay.h"
#include "dcerpc-krb5.h"
#include "dcerpc-ntlm.h"
#include "log.h"
#include "remote-auth.h"
#include "spnego-sec.h"

struct remote_auth {
        pthread_mutex_t lock;
        char *path;
        struct acct_file *file;         /* NULL until a good file was read */
        int last_err;                   /* of the last read, logged once */
        struct auth_delay *delay;
        char *keytab;                   /* NULL: no Kerberos */
        struct pv2_auth_policy policy;
};

/* Rereads the file when it changed; under ra->lock. */
static void accounts_refresh(struct remote_auth *ra)
{
        struct acct_error err = { "" };
        int r = ra->file ? acct_reload(ra->path, &ra->file, &err)
                         : acct_load(ra->path, &ra->file, &err);

        if (r < 0 && r != ra->last_err)
                log_error("remote accounts: %s%s", err.msg[0] ? err.msg : strerror(-r),
                          ra->file ? "; the accounts read before stay in force" :
                          "; every logon over TCP is refused");
        else if (r > 0 || (r == 0 && ra->last_err))
                log_info("remote accounts: read %s (%zu accounts)", ra->path,
                         ra->file->n_entries);
        ra->last_err = r < 0 ? r : 0;
}

/* ntlm_lookup_fn: one answer, and one pace, for unknown and disabled accounts. */
static int lookup(void *userdata, const char *user, const char *domain,
                  uint8_t ret_hash[NTLM_HASH_SIZE])
{
        struct remote_auth *ra = userdata;
        int r = -ENOENT;

        (void) domain;          /* accepted as given: the accounts form one domain */
        pthread_mutex_lock(&ra->lock);
        accounts_refresh(ra);
        if (ra->file)
                r = acct_lookup(ra->file, user, ret_hash);
        pthread_mutex_unlock(&ra->lock);
        return r == -EACCES ? -ENOENT : r;
}

/* Kerberos, when we have a keytab; a keytab gone bad since the start refuses the logon. */
static int kerberos(struct remote_auth *ra, struct dcerpc_sec *ret)
{
        int r;

        if (!ra->keytab)
                return -EPROTONOSUPPORT;
        r = dcerpc_sec_krb5_acceptor(ra->keytab, ret);
        if (r == -ENOKEY) {
                log_error("Kerberos: the keytab %s has no key for us any more", ra->keytab);
                return -EACCES;
        }
        return r;
}

static int spnego_inner(void *userdata, enum spnego_mech mech, struct dcerpc_sec *ret)
{
        if (mech == SPNEGO_MECH_KRB5 || mech == SPNEGO_MECH_MS_KRB5)
                return kerberos(userdata, ret);
        if (mech != SPNEGO_MECH_NTLM)
                return -EPROTONOSUPPORT;
        return dcerpc_sec_ntlm_server(REMOTE_AUTH_DOMAIN, lookup, userdata, ret);
}

static int new_sec(void *userdata, uint8_t auth_type, struct dcerpc_sec *ret)
{
        if (auth_type == DCERPC_AUTH_TYPE_NTLM)
                return dcerpc_sec_ntlm_server(REMOTE_AUTH_DOMAIN, lookup, userdata, ret);
        if (auth_type == DCERPC_AUTH_TYPE_SPNEGO)
                return dcerpc_sec_spnego_server(spnego_inner, userdata, ret);
        if (auth_type == DCERPC_AUTH_TYPE_KRB5)
                return kerberos(userdata, ret);
        return -EPROTONOSUPPORT;
}

static int spnego_inner_verified(void *userdata, enum spnego_mech mech, struct dcerpc_sec *ret)
{
        const struct remote_verifier *v = userdata;

        if (mech != SPNEGO_MECH_NTLM)
                return spnego_inner(v->ra, mech, ret);
        return dcerpc_sec_ntlm_server_verify(REMOTE_AUTH_DOMAIN, lookup, v->ra, v->verify,
                                             v->userdata, ret);
}

int remote_auth_new_sec_verified(void *userdata, uint8_t auth_type, struct dcerpc_sec *ret)
{
        const struct remote_verifier *v = userdata;

        if (auth_type == DCERPC_AUTH_TYPE_NTLM)
                return dcerpc_sec_ntlm_server_verify(REMOTE_AUTH_DOMAIN, lookup, v->ra,
                                                     v->verify, v->userdata, ret);
        if (auth_type == DCERPC_AUTH_TYPE_SPNEGO)
                return dcerpc_sec_spnego_server(spnego_inner_verified, userdata, ret);
        return new_sec(v->ra, auth_type, ret);
}

/*
 * Who may query: an account of the file, enabled.  NTLM found it there
 * already; a Kerberos principal is named "user" when of our own realm
 * (dcerpc-krb5.h), "user@REALM" otherwise, and must be listed so.
 */
static int authorize(void *userdata, const char *peer)
{
        struct remote_auth *ra = userdata;
        uint8_t hash[NTLM_HASH_SIZE];
        int r = -ENOENT;

        pthread_mutex_lock(&ra->lock);
        accounts_refresh(ra);
        if (ra->file)
                r = acct_lookup(ra->file, peer, hash);
        pthread_mutex_unlock(&ra->lock);
        explicit_bzero(hash, sizeof(hash));
        return r < 0 ? -EACCES : 0;
}

/* Whether the keytab holds a key we can accept with: checked once, at the start. */
static int keytab_check(const char *keytab)
{
        struct dcerpc_sec probe;
        int r = dcerpc_sec_krb5_acceptor(keytab, &probe);

        if (r < 0) {
                log_error("Kerberos: cannot accept with the keytab %s: %s", keytab,
                          r == -ENOKEY ? "no usable key in it" : strerror(-r));
                return r;
        }
        dcerpc_sec_free(&probe);
        return 0;
}

int remote_auth_new(const char *path, const char *keytab, struct remote_auth **ret)
{
        struct remote_auth *ra;
        int r;

        if (keytab && (r = keytab_check(keytab)) < 0)
                return r;
        ra = calloc(1, sizeof(*ra));
        if (!ra)
                return -ENOMEM;
        ra->path = strdup(path);
        ra->keytab = keytab ? strdup(keytab) : NULL;
        if (!ra->path || (keytab && !ra->keytab) || auth_delay_new(0, &ra->delay) < 0) {
                free(ra->path);
                free(ra->keytab);
                free(ra);
                return -ENOMEM;
        }
        pthread_mutex_init(&ra->lock, NULL);
        ra->policy = (struct pv2_auth_policy){ new_sec, authorize, ra };
        accounts_refresh(ra);
        *ret = ra;
        return 0;
}

void remote_auth_free(struct remote_auth *ra)
{
        if (!ra)
                return;
        acct_file_free(ra->file);
        auth_delay_free(ra->delay);
        pthread_mutex_destroy(&ra->lock);
        free(ra->path);
        free(ra->keytab);
        free(ra);
}

const struct pv2_auth_policy *remote_auth_policy(struct remote_auth *ra)
{
        return &ra->policy;
}

static uint64_t now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000;
}

static void peer_text(const struct sockaddr *peer, char *buf, size_t size)
{
        const void *a = peer->sa_family == AF_INET6 ?
                        (const void *) &((const struct sockaddr_in6 *) peer)->sin6_addr :
                        (const void *) &((const struct sockaddr_in *) peer)->sin_addr;

        if (!inet_ntop(peer->sa_family, a, buf, (socklen_t) size))
                snprintf(buf, size, "an unknown peer");
}

uint64_t remote_auth_report(struct remote_auth *ra, enum pv2_auth_event e, const char *detail,
                            const struct sockaddr *peer, socklen_t len)
{
        char who[INET6_ADDRSTRLEN] = "an unknown peer";
        uint64_t wait = 0;

        if (peer && (peer->sa_family == AF_INET || peer->sa_family == AF_INET6))
                peer_text(peer, who, sizeof(who));
        switch (e) {
        case PV2_AUTH_EVENT_OK:
                /*
                 * Not forgiven: whoever holds one account could otherwise
                 * reset the delay between guesses at another's password.
                 * A good logon is never slowed anyway; only failures are.
                 */
                log_info("%s logged on as %s", who, detail);
                break;
        case PV2_AUTH_EVENT_DENIED:
                wait = auth_delay_failed(ra->delay, peer, len, now_usec());
                log_notice("access denied to %s: %s; answering in %llu ms", who, detail,
                           (unsigned long long) (wait / 1000));
                break;
        case PV2_AUTH_EVENT_REFUSED:
                log_notice("refused %s: %s", who, detail);
                break;
        default:
                break;
        }
        return wait;
}
