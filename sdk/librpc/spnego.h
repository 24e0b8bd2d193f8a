/* SPDX-License-Identifier: MIT */
/*
 * spnego.h: SPNEGO's negotiation tokens (RFC 4178, and MS-SPNG's
 * NegTokenInit2), read and written in DER, for the DCE/RPC security layer's
 * RPC_C_AUTHN_GSS_NEGOTIATE.  A small reader of our own rather than
 * libtasn1: four structures, each read once, every length checked against
 * what encloses it; fuzzed with the wire protocol's harness.  Internal to
 * librpc, libpcq and perflibd.
 *
 * What is parsed points into the caller's buffer (no copies): valid while
 * that buffer is.  Functions return 0 or -errno and write ret_ parameters
 * only on success; -EBADMSG for anything that is not the DER of the
 * structure (wrong tags, lengths past their container, indefinite or
 * non-minimal lengths, trailing bytes), -ENOTSUP for a token of another
 * mechanism than SPNEGO.
 */
#ifndef PL_SPNEGO_H
#define PL_SPNEGO_H

#include <stddef.h>
#include <stdint.h>

enum spnego_mech {
        SPNEGO_MECH_OTHER,              /* an OID we do not speak */
        SPNEGO_MECH_NTLM,               /* 1.3.6.1.4.1.311.2.2.10 */
        SPNEGO_MECH_KRB5,               /* 1.2.840.113554.1.2.2 */
        SPNEGO_MECH_MS_KRB5,            /* 1.2.840.48018.1.2.2, Windows' alias of it */
};

/* Mechanisms read from one list; the others are counted, not kept. */
#define SPNEGO_MAX_MECHS 16

/* negState of NegTokenResp; SPNEGO_STATE_ABSENT when the field is left out. */
enum spnego_state {
        SPNEGO_ACCEPT_COMPLETED = 0,
        SPNEGO_ACCEPT_INCOMPLETE = 1,
        SPNEGO_REJECT = 2,
        SPNEGO_REQUEST_MIC = 3,
        SPNEGO_STATE_ABSENT = -1,
};

struct spnego_init {
        /* The DER of mechTypes, whole: what mechListMIC is computed over. */
        const uint8_t *mech_list;
        size_t mech_list_len;
        size_t n_mechs;                 /* in the list, all of them */
        enum spnego_mech mechs[SPNEGO_MAX_MECHS];       /* the first SPNEGO_MAX_MECHS */
        const uint8_t *mech_token;      /* the optimistic token, NULL when absent */
        size_t mech_token_len;
        const uint8_t *mic;             /* mechListMIC, NULL when absent */
        size_t mic_len;
};

struct spnego_resp {
        enum spnego_state state;
        enum spnego_mech mech;          /* supportedMech; SPNEGO_MECH_OTHER when absent */
        int has_mech;
        const uint8_t *token;           /* responseToken, NULL when absent */
        size_t token_len;
        const uint8_t *mic;             /* mechListMIC, NULL when absent */
        size_t mic_len;
};

/*
 * A client's first token: the GSS-API framing ([APPLICATION 0], the SPNEGO
 * OID) around negTokenInit, or negTokenInit alone.  NegTokenInit2's
 * negHints are skipped.
 */
int spnego_parse_init(const uint8_t *buf, size_t len, struct spnego_init *ret);

/* Any later token: negTokenResp, from either side. */
int spnego_parse_resp(const uint8_t *buf, size_t len, struct spnego_resp *ret);

/*
 * A client's first token, framed: the mechanisms in preference order and
 * the optimistic token of the first (NULL: none).  *ret is malloc'd, the
 * caller's.
 */
int spnego_build_init(const enum spnego_mech *mechs, size_t n_mechs, const uint8_t *token,
                      size_t token_len, uint8_t **ret, size_t *ret_len);

/* A negTokenResp of r's present fields (state ABSENT, has_mech 0, NULLs: left out). */
int spnego_build_resp(const struct spnego_resp *r, uint8_t **ret, size_t *ret_len);

/* The DER of a MechTypeList of these mechanisms (for a client's mechListMIC). */
int spnego_build_mech_list(const enum spnego_mech *mechs, size_t n_mechs, uint8_t **ret,
                           size_t *ret_len);

#endif /* PL_SPNEGO_H */
