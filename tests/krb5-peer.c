/* SPDX-License-Identifier: MIT */
/*
 * krb5-peer: our Kerberos acceptor (sdk/librpc/dcerpc-krb5.h) on standard
 * input and output, one line per message, for a client nobody here wrote
 * (interop/krb5_samba.py, Samba's gensec) to drive.  Keys from
 * KRB5_KTNAME.  Lines in, lines out (bytes in hex):
 *   TOKEN HEX               -> TOKEN HEX (continue) or DONE PEER
 *   SIGSIZE LEVEL HS        -> the auth_length of a PDU at that level
 *   VERIFY LEVEL HS PDU     -> OK STUB, the PDU verified (and unsealed)
 *   SEND LEVEL HS STUB      -> PDU, a response protected at that level
 * with LEVEL 5 (integrity) or 6 (privacy) and HS 1 for header signing;
 * "ERR -errno" for anything refused, after which it exits.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcerpc.h"
#include "dcerpc-auth.h"
#include "dcerpc-krb5.h"
#include "dcerpc-sec.h"

/* Hex to bytes in place; the byte count, or -1. */
static long unhex(char *s)
{
        size_t n = s ? strlen(s) : 0;

        if (!s || n % 2)
                return -1;
        for (size_t i = 0; i < n; i += 2) {
                unsigned v;

                if (sscanf(s + i, "%2x", &v) != 1)
                        return -1;
                s[i / 2] = (char)v;
        }
        return (long)(n / 2);
}

static void put_hex(const char *tag, const uint8_t *p, size_t n)
{
        printf("%s", tag);
        for (size_t i = 0; i < n; i++)
                printf("%02x", p[i]);
        printf("\n");
}

static int token(struct dcerpc_sec *s, char *arg)
{
        long n = unhex(arg);
        uint8_t *out = NULL;
        size_t out_len = 0;

        if (n < 0)
                return -EINVAL;
        int r = s->ops->step(s->ctx, (uint8_t *)arg, (size_t)n, &out, &out_len);
        if (r == DCERPC_SEC_CONTINUE)
                put_hex("TOKEN ", out, out_len);
        else if (r == DCERPC_SEC_DONE)
                printf("DONE %s\n", s->ops->peer(s->ctx));
        free(out);
        return r < 0 ? r : 0;
}

/* The protection at LEVEL with header signing HS, from the next two words. */
static int auth_of(struct dcerpc_sec *s, struct dcerpc_auth *ret)
{
        char *level = strtok(NULL, " \n"), *hs = strtok(NULL, " \n");

        if (!level || !hs || !s->ops->mech_ctx(s->ctx))
                return -EINVAL;
        *ret = (struct dcerpc_auth){
                .mech = atoi(level) == DCERPC_AUTH_LEVEL_PRIVACY ? s->ops->mech
                                                                 : &dcerpc_krb5_integrity_mech,
                .ctx = s->ops->mech_ctx(s->ctx),
                .auth_type = DCERPC_AUTH_TYPE_KRB5,
                .auth_level = (uint8_t)atoi(level),
                .context_id = 7,
                .header_sign = atoi(hs) == 1,
        };
        return 0;
}

static int pdu(struct dcerpc_sec *s, bool send)
{
        struct dcerpc_auth a;
        struct dcerpc_auth_view v;
        uint8_t *out = NULL;
        size_t out_len = 0;
        int r = auth_of(s, &a);
        char *arg = strtok(NULL, " \n");
        long n = unhex(arg);

        if (r < 0 || n < 0)
                return -EINVAL;
        if (!send) {
                r = dcerpc_auth_verify(&a, (uint8_t *)arg, (size_t)n, &v);
                if (r == 0)
                        put_hex("OK ", (uint8_t *)arg + v.stub_off, v.stub_len);
                return r;
        }
        r = dcerpc_auth_append_call(&a, &out, &out_len, DCERPC_RESPONSE, 1, 0, 0, (uint8_t *)arg,
                                    (size_t)n, UINT16_MAX);
        if (r == 0)
                put_hex("", out, out_len);
        free(out);
        return r;
}

static int command(struct dcerpc_sec *s, char *line)
{
        char *cmd = strtok(line, " \n");
        struct dcerpc_auth a;
        int r;

        if (!cmd)
                return -EINVAL;
        if (strcmp(cmd, "TOKEN") == 0)
                return token(s, strtok(NULL, " \n"));
        if (strcmp(cmd, "VERIFY") == 0 || strcmp(cmd, "SEND") == 0)
                return pdu(s, strcmp(cmd, "SEND") == 0);
        if (strcmp(cmd, "SIGSIZE") != 0)
                return -EINVAL;
        r = auth_of(s, &a);
        if (r == 0)
                printf("%zu\n", a.mech->sig_size(a.ctx));
        return r;
}

int main(void)
{
        struct dcerpc_sec s;
        char *line = NULL;
        size_t cap = 0;
        int r = dcerpc_sec_krb5_acceptor(NULL, &s);

        if (r < 0) {
                printf("ERR %d\n", r);
                return 1;
        }
        while (r == 0 && getline(&line, &cap, stdin) > 0) {
                r = command(&s, line);
                if (r < 0)
                        printf("ERR %d\n", r);
                fflush(stdout);
        }
        free(line);
        dcerpc_sec_free(&s);
        return r < 0;
}
