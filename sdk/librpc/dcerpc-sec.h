/* SPDX-License-Identifier: MIT */
/*
 * dcerpc-sec.h: one side of a security context while it is being built,
 * whatever the mechanism (NTLM, Kerberos, SPNEGO around either), as the
 * binds of connection-oriented DCE/RPC drive it: tokens in, tokens out,
 * until it is established; then its dcerpc_auth_mech protects the PDUs.
 *
 * One owner: whoever made a struct dcerpc_sec frees it with
 * dcerpc_sec_free, which frees the mechanism's state (and the session
 * keys with it) and accepts NULL.
 */
#ifndef PCQ_DCERPC_SEC_H
#define PCQ_DCERPC_SEC_H

#include <stddef.h>
#include <stdint.h>

#include "dcerpc-auth.h"

/* What step returns besides errors. */
#define DCERPC_SEC_DONE         0       /* established: protect PDUs now */
#define DCERPC_SEC_CONTINUE     1       /* send the token, expect another */

struct dcerpc_sec_ops {
        const char *name;               /* for logs: "NTLM", "Kerberos", "SPNEGO" */
        /*
         * Takes the peer's token (NULL and 0 for an initiator's first
         * step) and gives the token to send: *ret_out is malloc'd and the
         * caller's, NULL with *ret_out_len 0 when there is none.
         * DCERPC_SEC_DONE or DCERPC_SEC_CONTINUE; -EACCES when the peer's
         * credentials are refused (wrong password, unknown user, a
         * server that failed to prove itself), -EBADMSG for a malformed
         * token, -EPROTO for one out of turn, -ENOMEM.  After an error the
         * context is dead.
         */
        int (*step)(void *ctx, const uint8_t *in, size_t in_len, uint8_t **ret_out,
                    size_t *ret_out_len);
        /* The authenticated peer's name, once established (acceptors); NULL before. */
        const char *(*peer)(void *ctx);
        /*
         * SPNEGO's mechListMIC: a MIC over data, malloc'd and the caller's,
         * and its check (-EKEYREJECTED when it does not match).  Each moves
         * the direction's sequence on, as the mechanisms' GSS_GetMIC does.
         */
        int (*get_mic)(void *ctx, const uint8_t *data, size_t len, uint8_t **ret_mic,
                       size_t *ret_mic_len);
        int (*verify_mic)(void *ctx, const uint8_t *data, size_t len, const uint8_t *mic,
                          size_t mic_len);
        /* Whether the peer's last token carried a MIC that makes mechListMIC a must. */
        int (*mic_required)(void *ctx);
        /* The protection of PDUs, and its state (borrowed from ctx), once established. */
        const struct dcerpc_auth_mech *mech;
        void *(*mech_ctx)(void *ctx);
        void (*free)(void *ctx);
};

struct dcerpc_sec {
        const struct dcerpc_sec_ops *ops;
        void *ctx;                      /* the mechanism's state, owned */
};

static inline void dcerpc_sec_free(struct dcerpc_sec *s)
{
        if (!s)
                return;
        if (s->ops && s->ops->free)
                s->ops->free(s->ctx);
        s->ctx = NULL;
        s->ops = NULL;
}

#endif /* PCQ_DCERPC_SEC_H */
