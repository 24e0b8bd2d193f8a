/* SPDX-License-Identifier: MIT */
/*
 * ntlm.h: NTLM (MS-NLMP) for the DCE/RPC security layer: NTLMv2 with
 * extended session security, 128-bit keys, key exchange, signing and
 * sealing, both ends.  Ours, not gss-ntlmssp's: see ntlm.c for why.
 * Internal to librpc, libpcq and perflibd.
 *
 * Functions return 0 or -errno and write ret_ parameters only on success.
 * A mechanism is driven like a GSSAPI context: feed each token the peer
 * sent to *_step, send back what it returns, until it returns 0 with no
 * token and *_session gives the keys.
 */
#ifndef PL_NTLM_H
#define PL_NTLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An NT hash (NTOWFv1): MD4 of the password in UTF-16LE. */
#define NTLM_HASH_SIZE 16
/* A message signature (NTLMSSP_MESSAGE_SIGNATURE), as DCE/RPC carries it. */
#define NTLM_SIG_SIZE 16
/* User and domain names, in bytes of UTF-8 without the NUL. */
#define NTLM_NAME_MAX 256

/*
 * The NT hash of a UTF-8 password (at most NTLM_PASSWORD_MAX bytes).
 * -EINVAL for a password that is not UTF-8 or too long.
 */
#define NTLM_PASSWORD_MAX 256
int ntlm_nt_hash(const char *password, uint8_t ret[NTLM_HASH_SIZE]);

/*
 * The keys of an established context, one direction each way: the
 * sequence numbers and RC4 states run on from message to message, so
 * every message must be processed once and in order.  After a refused
 * message the session refuses everything (its RC4 state is lost): the
 * caller closes the connection.
 */
struct ntlm_session;

/*
 * Integrity only: sign (or verify) data.  ntlm_verify returns -EBADMSG
 * for a signature that is not NTLM_SIG_SIZE bytes or does not match.
 */
int ntlm_sign(struct ntlm_session *s, const void *data, size_t len,
              uint8_t ret_sig[NTLM_SIG_SIZE]);
int ntlm_verify(struct ntlm_session *s, const void *data, size_t len,
                const uint8_t *sig, size_t sig_len);

/* Privacy: encrypt data in place and sign its plaintext, and back. */
int ntlm_seal(struct ntlm_session *s, void *data, size_t len,
              uint8_t ret_sig[NTLM_SIG_SIZE]);
int ntlm_unseal(struct ntlm_session *s, void *data, size_t len,
                const uint8_t *sig, size_t sig_len);

/*
 * Privacy for DCE/RPC with header signing: the signature covers the
 * plaintext of sign (the whole PDU) while only seal (the stub, usually
 * inside sign) is encrypted in place.  On the receiving end seal is
 * decrypted first, so sign is verified as the sender signed it.
 */
int ntlm_seal_pdu(struct ntlm_session *s, const void *sign, size_t sign_len,
                  void *seal, size_t seal_len, uint8_t ret_sig[NTLM_SIG_SIZE]);
int ntlm_unseal_pdu(struct ntlm_session *s, const void *sign, size_t sign_len,
                    void *seal, size_t seal_len, const uint8_t *sig, size_t sig_len);

/*
 * Server.  lookup gives the NT hash of an account, or -ENOENT; the domain
 * is what the client sent, for the caller to judge.  target names the
 * server in its CHALLENGE (NetBIOS and DNS names alike).
 */
typedef int (*ntlm_lookup_fn)(void *userdata, const char *user, const char *domain,
                              uint8_t ret_hash[NTLM_HASH_SIZE]);
struct ntlm_server;

/*
 * Another judge of a response, for accounts whose hash lookup does not
 * know (-ENOENT): Samba's winbind, which holds the hash and checks the
 * NTLMv2 response itself.  Given the user and domain as the client sent
 * them, our challenge and the client's NT response (the NTProofStr and
 * the blob), it writes the session base key and returns 0, or -EACCES
 * (wrong response), -ENOENT (no such account) or another -errno.
 */
typedef int (*ntlm_verify_fn)(void *userdata, const char *user, const char *domain,
                              const uint8_t challenge[8], const uint8_t *nt, size_t nt_len,
                              uint8_t ret_session_base_key[16]);

/* The caller owns *ret and frees it with ntlm_server_free. */
int ntlm_server_new(const char *target, ntlm_lookup_fn lookup, void *userdata,
                    struct ntlm_server **ret);
void ntlm_server_free(struct ntlm_server *s);
/* Asks verify (with its userdata) about the accounts lookup does not know. */
void ntlm_server_set_verify(struct ntlm_server *s, ntlm_verify_fn verify, void *userdata);

/*
 * Feeds a client token.  NEGOTIATE gives a CHALLENGE in *ret_out (the
 * caller frees it); AUTHENTICATE gives 0, *ret_out NULL, and the context
 * established.  -EACCES: wrong password, unknown user, anonymous or
 * NTLMv1 (one answer for all); -EPROTO: the client does not offer
 * NTLMv2 with 128-bit extended session security, key exchange, signing
 * and sealing; -EBADMSG: malformed or unexpected token.  Any error ends
 * the context.
 */
int ntlm_server_step(struct ntlm_server *s, const void *in, size_t in_len,
                     uint8_t **ret_out, size_t *ret_out_len);
/* Once established, else NULL.  Both belong to s. */
const char *ntlm_server_user(const struct ntlm_server *s);
struct ntlm_session *ntlm_server_session(struct ntlm_server *s);
/* Whether the AUTHENTICATE carried a MIC: SPNEGO then wants a mechListMIC. */
bool ntlm_server_mic(const struct ntlm_server *s);

/* Client, with the NT hash of the account's password. */
struct ntlm_client;

/* The caller owns *ret and frees it with ntlm_client_free. */
int ntlm_client_new(const char *user, const char *domain,
                    const uint8_t nt_hash[NTLM_HASH_SIZE], struct ntlm_client **ret);
void ntlm_client_free(struct ntlm_client *c);

/*
 * First call with no input: gives the NEGOTIATE.  Then the server's
 * CHALLENGE: gives the AUTHENTICATE, and the context is established.
 * The caller frees *ret_out.  -EPROTO for a server that does not offer
 * what we require, -EBADMSG for a malformed or unexpected token.
 */
int ntlm_client_step(struct ntlm_client *c, const void *in, size_t in_len,
                     uint8_t **ret_out, size_t *ret_out_len);
struct ntlm_session *ntlm_client_session(struct ntlm_client *c);

/*
 * The steps inside, exposed for the tests of MS-NLMP's vectors (4.2.4):
 * NTOWFv2 of UTF-8 names (-EINVAL if not UTF-8 or too long); NTProofStr
 * and the session base key from NTOWFv2, the server challenge and the
 * client's "temp" blob; the RC4 of key exchange (its own inverse); the
 * signing and sealing keys of one direction; and a session from an
 * exported session key (the caller frees it with ntlm_session_free).
 */
int ntlm_ntowfv2(const uint8_t nt_hash[NTLM_HASH_SIZE], const char *user,
                 const char *domain, uint8_t ret[16]);
void ntlm_v2_proof(const uint8_t ntowfv2[16], const uint8_t server_challenge[8],
                   const uint8_t *temp, size_t temp_len, uint8_t ret_proof[16],
                   uint8_t ret_session_base_key[16]);
void ntlm_key_exchange(const uint8_t key[16], const uint8_t in[16], uint8_t ret[16]);
void ntlm_direction_keys(const uint8_t exported_key[16], bool client_to_server,
                         uint8_t ret_sign[16], uint8_t ret_seal[16]);
int ntlm_session_new(const uint8_t exported_key[16], bool client,
                     struct ntlm_session **ret);
void ntlm_session_free(struct ntlm_session *s);

#endif /* PL_NTLM_H */
