/* SPDX-License-Identifier: MIT */
/*
 * Credentials for a TCP link (client-cred.h).  The password is turned into
 * its NT hash at once, the one secret NTLM needs, and never kept; the hash
 * lives in the cl_cred until the bind is done, then is wiped, as the
 * security context wipes its own copy and its keys when freed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client-cred.h"
#include "dcerpc-auth.h"
#include "dcerpc-ntlm.h"
#include "spnego-sec.h"

static const char *env(const char *name)
{
        const char *v = getenv(name);

        return v && *v ? v : NULL;
}

static uint32_t auth_type(enum pcq_auth a, uint8_t *ret, char *why, size_t size)
{
        const char *e = env("PERFLIB_AUTH");

        if (a == PCQ_AUTH_DEFAULT && e) {
                if (!strcasecmp(e, "ntlm"))
                        a = PCQ_AUTH_NTLM;
                else if (!strcasecmp(e, "spnego"))
                        a = PCQ_AUTH_SPNEGO;
                else {
                        snprintf(why, size, "PERFLIB_AUTH is '%s': want ntlm or spnego", e);
                        return PDH_INVALID_ARGUMENT;
                }
        }
        switch (a) {
        case PCQ_AUTH_NTLM:
                *ret = DCERPC_AUTH_TYPE_NTLM;
                return ERROR_SUCCESS;
        case PCQ_AUTH_DEFAULT:
        case PCQ_AUTH_SPNEGO:
                *ret = DCERPC_AUTH_TYPE_SPNEGO;
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
        uint32_t e;

        *ret = (struct cl_cred){ .auth_type = DCERPC_AUTH_TYPE_NONE };
        if (!user)
                return ERROR_SUCCESS;
        e = split_user(user, ret, why, why_size);
        if (e == ERROR_SUCCESS)
                e = auth_type(given ? given->auth : PCQ_AUTH_DEFAULT, &ret->auth_type, why,
                              why_size);
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
        return c->auth_type == DCERPC_AUTH_TYPE_NTLM ? "NTLM" : "SPNEGO";
}

int cl_cred_sec(const struct cl_cred *c, struct dcerpc_sec *ret)
{
        struct dcerpc_sec ntlm = { 0 };
        int r = dcerpc_sec_ntlm_client(c->user, c->domain, c->nt_hash, &ntlm);

        if (r < 0 || c->auth_type == DCERPC_AUTH_TYPE_NTLM) {
                if (r == 0)
                        *ret = ntlm;
                return r;
        }
        return dcerpc_sec_spnego_client(SPNEGO_MECH_NTLM, &ntlm, ret);
}
