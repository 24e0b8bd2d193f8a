/* SPDX-License-Identifier: MIT */
/*
 * Samba's accounts through winbind (acct-winbind.h).  libwbclient's
 * wbcAuthenticateUserEx at the response level: winbindd computes the
 * NTLMv2 proof from the hash Samba keeps, and for NTLMv2 the user session
 * key it returns is the session base key (MS-NLMP 3.3.2).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <wbclient.h>

#include "acct-winbind.h"

/* NTSTATUS values of MS-ERREF 2.3.1 that winbind reports. */
#define NT_STATUS_NO_SUCH_USER          0xC0000064u
#define NT_STATUS_NO_SUCH_DOMAIN        0xC00000DFu
#define NT_STATUS_NO_LOGON_SERVERS      0xC000005Eu

/* What winbind's error means to the NTLM server. */
static int from_wbc(wbcErr e, const struct wbcAuthErrorInfo *err)
{
        if (e == WBC_ERR_WINBIND_NOT_AVAILABLE)
                return -EHOSTUNREACH;
        if (e != WBC_ERR_AUTH_ERROR || !err)
                return -EIO;
        if ((uint32_t) err->nt_status == NT_STATUS_NO_SUCH_USER)
                return -ENOENT;
        if ((uint32_t) err->nt_status == NT_STATUS_NO_SUCH_DOMAIN ||
            (uint32_t) err->nt_status == NT_STATUS_NO_LOGON_SERVERS)
                return -ENXIO;
        return -EACCES;
}

static int authenticate(const char *user, const char *domain, const uint8_t challenge[8],
                        const uint8_t *nt, size_t nt_len, uint8_t ret_base[16])
{
        struct wbcAuthUserParams p = {
                .account_name = user,
                .domain_name = domain,
                .workstation_name = "",
                .level = WBC_AUTH_USER_LEVEL_RESPONSE,
        };
        struct wbcAuthUserInfo *info = NULL;
        struct wbcAuthErrorInfo *err = NULL;
        wbcErr e;
        int r;

        memcpy(p.password.response.challenge, challenge, 8);
        p.password.response.nt_length = (uint32_t) nt_len;
        p.password.response.nt_data = (uint8_t *) nt;
        e = wbcAuthenticateUserEx(&p, &info, &err);
        r = e == WBC_ERR_SUCCESS ? 0 : from_wbc(e, err);
        if (r == 0)
                memcpy(ret_base, info->user_session_key, 16);
        wbcFreeMemory(info);
        wbcFreeMemory(err);
        return r;
}

/* This server's own accounts' domain: Samba's SAM, named by its NetBIOS name. */
static int own_domain(char *buf, size_t size)
{
        struct wbcInterfaceDetails *d = NULL;
        wbcErr e = wbcInterfaceDetails(&d);
        int r = -EIO;

        if (e == WBC_ERR_SUCCESS && d->netbios_name && strlen(d->netbios_name) < size) {
                strcpy(buf, d->netbios_name);
                r = 0;
        } else if (e == WBC_ERR_WINBIND_NOT_AVAILABLE)
                r = -EHOSTUNREACH;
        wbcFreeMemory(d);
        return r;
}

int acct_winbind_verify(void *userdata, const char *user, const char *domain,
                        const uint8_t challenge[8], const uint8_t *nt, size_t nt_len,
                        uint8_t ret_base[16])
{
        char own[256];
        int r = -ENXIO;

        (void) userdata;
        if (!user || !domain || !challenge || !nt || nt_len <= 16 || !ret_base)
                return -EINVAL;
        if (domain[0])
                r = authenticate(user, domain, challenge, nt, nt_len, ret_base);
        /*
         * No domain, or one winbind does not serve (the name our CHALLENGE
         * gave, say): Samba's own accounts.  NTLMv2 proves the name the
         * client used, which winbind checks besides its own.
         */
        if (r == -ENXIO && (r = own_domain(own, sizeof(own))) == 0)
                r = authenticate(user, own, challenge, nt, nt_len, ret_base);
        return r == -ENXIO ? -ENOENT : r;
}
