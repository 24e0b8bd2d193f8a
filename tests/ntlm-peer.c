/* SPDX-License-Identifier: MIT */
/*
 * ntlm-peer: our NTLM server (sdk/librpc/ntlm.h) on standard input and
 * output, one hex line per message, for a client nobody here wrote
 * (interop/ntlm_impacket.py) to drive.  The account is "User" with
 * "Password".  Lines in, lines out:
 *   NEGOTIATE                 -> CHALLENGE
 *   AUTHENTICATE              -> OK user
 *   PDU SEAL_AT SEAL_LEN SIG  -> the PDU unsealed, as the client sealed it
 *   PDU SEAL_AT SEAL_LEN      -> the PDU sealed and its signature
 * and "ERR -errno" for anything refused, after which it exits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlm.h"

static int lookup(void *userdata, const char *user, const char *domain,
                  uint8_t ret_hash[NTLM_HASH_SIZE])
{
        (void) userdata;
        (void) domain;
        if (strcmp(user, "User") != 0)
                return -ENOENT;
        return ntlm_nt_hash("Password", ret_hash);
}

/* Hex to bytes in place; the byte count, or -1. */
static long unhex(char *s)
{
        size_t n = strlen(s);

        if (n % 2)
                return -1;
        for (size_t i = 0; i < n; i += 2) {
                unsigned v;

                if (sscanf(s + i, "%2x", &v) != 1)
                        return -1;
                s[i / 2] = (char) v;
        }
        return (long) (n / 2);
}

static void hex(const uint8_t *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                printf("%02x", p[i]);
}

/* One PDU line: unseal it if it has a signature, else seal it. */
static int pdu(struct ntlm_session *s, char *line)
{
        char *pdu = strtok(line, " \n"), *at = strtok(NULL, " \n");
        char *n = strtok(NULL, " \n"), *sig = strtok(NULL, " \n");
        long len = pdu ? unhex(pdu) : -1, sig_len = sig ? unhex(sig) : 0;
        uint8_t out_sig[NTLM_SIG_SIZE];
        size_t a, k;
        int r;

        if (len < 0 || !at || !n || sig_len < 0)
                return -EINVAL;
        a = strtoul(at, NULL, 10);
        k = strtoul(n, NULL, 10);
        if (a > (size_t) len || k > (size_t) len - a)
                return -EINVAL;
        if (sig)
                r = ntlm_unseal_pdu(s, pdu, (size_t) len, pdu + a, k,
                                    (uint8_t *) sig, (size_t) sig_len);
        else
                r = ntlm_seal_pdu(s, pdu, (size_t) len, pdu + a, k, out_sig);
        if (r < 0)
                return r;
        hex((uint8_t *) pdu, (size_t) len);
        if (!sig) {
                putchar(' ');
                hex(out_sig, sizeof(out_sig));
        }
        putchar('\n');
        return 0;
}

int main(void)
{
        static char line[1 << 16];
        struct ntlm_server *s;
        int r = ntlm_server_new("Server", lookup, NULL, &s);

        setvbuf(stdout, NULL, _IOLBF, 0);
        for (int step = 0; r == 0 && fgets(line, sizeof(line), stdin); step++) {
                uint8_t *out = NULL;
                size_t out_len = 0;
                long len;

                if (step >= 2) {
                        r = pdu(ntlm_server_session(s), line);
                        continue;
                }
                line[strcspn(line, "\n")] = '\0';
                len = unhex(line);
                r = len < 0 ? -EINVAL : ntlm_server_step(s, line, (size_t) len, &out, &out_len);
                if (r == 0 && out)
                        hex(out, out_len), putchar('\n');
                else if (r == 0)
                        printf("OK %s\n", ntlm_server_user(s));
                free(out);
        }
        if (r < 0)
                printf("ERR %d\n", r);
        ntlm_server_free(s);
        return r < 0;
}
