/* SPDX-License-Identifier: MIT */
/*
 * acct-winbind.h: Samba's own accounts for the logon inside \PIPE\winreg,
 * so that a Samba user needs no second password: winbind (libwbclient)
 * checks the client's NTLMv2 response against the password Samba holds
 * and hands back the session base key, the ntlm_verify_fn of ntlm.h.
 *
 * It blocks until winbindd answers (on a domain member, until a domain
 * controller does): call it with no lock others wait on.
 */
#ifndef PERFLIBD_ACCT_WINBIND_H
#define PERFLIBD_ACCT_WINBIND_H

#include <stddef.h>
#include <stdint.h>

/*
 * user and domain as the client sent them (an empty domain means this
 * server's own accounts, Samba's SAM).  0 and *ret_base, -EACCES (a wrong
 * response, or a disabled or locked account), -ENOENT (no such account),
 * -EHOSTUNREACH (winbindd is not running), -EIO (anything else winbind
 * reported).  userdata is not used.
 */
int acct_winbind_verify(void *userdata, const char *user, const char *domain,
                        const uint8_t challenge[8], const uint8_t *nt, size_t nt_len,
                        uint8_t ret_base[16]);

#endif /* PERFLIBD_ACCT_WINBIND_H */
