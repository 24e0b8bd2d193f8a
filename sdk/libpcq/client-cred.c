/* SPDX-License-Identifier: MIT */
/*
 * Credentials for a TCP link (client-cred.h).  The password is turned into
 * its NT hash at once, the one secret NTLM needs, and never kept; the hash
 * lives in the cl_cred until the bind is done, then is wiped, as the
 * security context wipes its own copy and its keys when freed.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client-cred.h"
#include "dcerpc-auth.h"
#include "dcerpc-krb5.h"
#include "dcerpc-ntlm.h"
#include "spnego-sec.h"

static const char *env(const char *name)
{
        const char *v = getenv(name);

        return v && *v ? v : NULL;
}

static uint32_t auth_type(enum pcq_auth a, struct cl_cred *ret, char *why, size_t size)
{
        const char *e = env("PERFLIB_AUTH");

        if (a == PCQ_AUTH_DEFAULT && e) {
                if (!strcasecmp(e, "ntlm"))
                        a = PCQ_AUTH_NTLM;
                else if (!strcasecmp(e, "spnego"))
                        a = PCQ_AUTH_SPNEGO;
                else if (!strcasecmp(e, "kerberos"))
                        a = PCQ_AUTH_KERBEROS;
                else {
                        snprintf(why, size, "PERFLIB_AUTH is '%s': want ntlm, spnego or "
                                 "kerberos", e);
                        return PDH_INVALID_ARGUMENT;
                }
        }
        switch (a) {
        case PCQ_AUTH_NTLM:
                ret->auth_type = DCERPC_AUTH_TYPE_NTLM;
                return ERROR_SUCCESS;
        case PCQ_AUTH_KERBEROS:
                ret->kerberos = true;   /* MS-PCQ 2.1: Kerberos comes by SPNEGO */
                ret->auth_type = DCERPC_AUTH_TYPE_SPNEGO;
                return ERROR_SUCCESS;
        case PCQ_AUTH_DEFAULT:
        case PCQ_AUTH_SPNEGO:
                ret->auth_type = DCERPC_AUTH_TYPE_SPNEGO;
                return ERROR_SUCCESS;
        }
        snprintf(why, size, "unknown authentication mechanism %d", (int)a);
        return PDH_INVALID_ARGUMENT;
}

/* "DOMAIN\USER", "USER@DOMAIN" or "USER" into c's user and domain. */
static uint32_t split_user(const char *name, struct cl_cred *c, char *why, size_t size)
{
        const char *bs = strchr(name, '\\'), *at = strrchr(name, '@');
        const char *user = name, *domain = "";
        size_t ulen = strlen(name), dlen = 0;

        if (bs) {
                domain = name;
                dlen = (size_t)(bs - name);
                user = bs + 1;
                ulen = strlen(user);
        } else if (at) {
                ulen = (size_t)(at - name);
                domain = at + 1;
                dlen = strlen(domain);
        }
        if (ulen == 0 || ulen > NTLM_NAME_MAX || dlen > NTLM_NAME_MAX) {
                snprintf(why, size, "bad user name '%s': want USER, DOMAIN\\USER or "
                         "USER@DOMAIN, each part at most %d bytes", name, NTLM_NAME_MAX);
                return PDH_INVALID_ARGUMENT;
        }
        memcpy(c->user, user, ulen);
        c->user[ulen] = 0;
        memcpy(c->domain, domain, dlen);
        c->domain[dlen] = 0;
        return ERROR_SUCCESS;
}

uint32_t cl_cred_get(const struct pcq_credentials *given, struct cl_cred *ret, char *why,
                     size_t why_size)
{
        const char *user = given && given->user ? given->user : env("PERFLIB_USER");
        const char *password = given && given->password ? given->password :
                               getenv("PERFLIB_PASSWORD");
        struct cl_cred c = { .auth_type = DCERPC_AUTH_TYPE_NONE };
        uint32_t e = auth_type(given ? given->auth : PCQ_AUTH_DEFAULT, &c, why, why_size);

        *ret = (struct cl_cred){ .auth_type = DCERPC_AUTH_TYPE_NONE };
        if (e)
                return e;
        if (c.kerberos) {       /* the ticket says who: a user or password is not asked */
                *ret = c;
                return ERROR_SUCCESS;
        }
        if (!user)
                return ERROR_SUCCESS;
        *ret = c;
        e = split_user(user, ret, why, why_size);
        if (e)
                return e;
        if (!password) {
                snprintf(why, why_size, "no password for user '%s': set PERFLIB_PASSWORD, "
                         "or give one", user);
                return PDH_INVALID_ARGUMENT;
        }
        if (ntlm_nt_hash(password, ret->nt_hash) < 0) {
                snprintf(why, why_size, "the password of user '%s' is not UTF-8 or longer "
                         "than %d bytes", user, NTLM_PASSWORD_MAX);
                return PDH_INVALID_ARGUMENT;
        }
        return ERROR_SUCCESS;
}

void cl_cred_wipe(struct cl_cred *c)
{
        explicit_bzero(c, sizeof(*c));
}

const char *cl_cred_mech(const struct cl_cred *c)
{
        if (c->kerberos)
                return "Kerberos";
        return c->auth_type == DCERPC_AUTH_TYPE_NTLM ? "NTLM" : "SPNEGO";
}

/* The service to ask a ticket for: $PERFLIB_KRB5_SERVICE, else "host@HOST". */
static const char *kerberos_service(const char *host, char *buf, size_t size)
{
        const char *service = env("PERFLIB_KRB5_SERVICE");

        if (service)
                return service;
        if (snprintf(buf, size, "host@%s", host) >= (int)size)
                return NULL;
        return buf;
}

void cl_cred_explain(const struct cl_cred *c, const char *host, int err, char *why,
                     size_t size)
{
        char buf[NI_MAXHOST + 8];

        if (!c->kerberos || err != -ENOKEY)
                return;
        snprintf(why, size, "no Kerberos ticket for %s could be had: is the service known to "
                 "the KDC (PERFLIB_KRB5_SERVICE names another), is the ticket-granting "
                 "ticket current (klist)?", kerberos_service(host, buf, sizeof(buf)));
}

/* Kerberos in SPNEGO, for the service kerberos_service names. */
static int kerberos_sec(const char *host, struct dcerpc_sec *ret, char *why, size_t size)
{
        char buf[NI_MAXHOST + 8];
        const char *service = kerberos_service(host, buf, sizeof(buf));
        struct dcerpc_sec krb5 = { 0 };
        int r;

        if (!service)
                return -EINVAL;
        r = dcerpc_sec_krb5_initiator(service, &krb5);
        if (r == -ENOKEY)
                snprintf(why, size, "no Kerberos ticket to log on to %s with: run kinit, or "
                         "set KRB5CCNAME to the credential cache", service);
        else if (r == -EINVAL)
                snprintf(why, size, "'%s' is not a Kerberos service name (want "
                         "service@host, as in PERFLIB_KRB5_SERVICE)", service);
        if (r < 0)
                return r;
        return dcerpc_sec_spnego_client(SPNEGO_MECH_KRB5, &krb5, ret);
}

int cl_cred_sec(const struct cl_cred *c, const char *host, struct dcerpc_sec *ret, char *why,
                size_t why_size)
{
        struct dcerpc_sec ntlm = { 0 };
        int r;

        if (c->kerberos)
                return kerberos_sec(host, ret, why, why_size);
        r = dcerpc_sec_ntlm_client(c->user, c->domain, c->nt_hash, &ntlm);

        if (r < 0 || c->auth_type == DCERPC_AUTH_TYPE_NTLM) {
                if (r == 0)
                        *ret = ntlm;
                return r;
        }
        return dcerpc_sec_spnego_client(SPNEGO_MECH_NTLM, &ntlm, ret);
}
