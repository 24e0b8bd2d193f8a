/* SPDX-License-Identifier: MIT */
/*
 * NTLM's three messages, both ends (ntlm.h): MS-NLMP 2.2.1 and 3.1-3.3,
 * NTLMv2 only, with extended session security, 128-bit keys, key
 * exchange, signing and sealing, and the NT hash they start from.  The
 * keys of the established context are ntlm-session.c's.
 *
 * Ours, not gss-ntlmssp's: gss-ntlmssp 1.2 rejects impacket's 32-byte
 * NEGOTIATE unless it is padded, keeps server-side passwords in
 * plaintext (NTLM_USER_FILE) unless winbind is there, and cannot unwrap
 * DCE/RPC's header-signed privacy PDUs.  Primitives from Nettle.
 *
 * Every offset and length of a peer's message is checked against the
 * message: tokens come from the network, before any authentication.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <nettle/arcfour.h>
#include <nettle/hmac.h>
#include <nettle/md4.h>
#include <nettle/memops.h>

#include "ntlm.h"
#include "pcq-utf.h"

#define NEG_UNICODE     0x00000001u
#define NEG_REQ_TARGET  0x00000004u
#define NEG_SIGN        0x00000010u
#define NEG_SEAL        0x00000020u
#define NEG_NTLM        0x00000200u
#define NEG_ALWAYS_SIGN 0x00008000u
#define NEG_TYPE_DOMAIN 0x00010000u
#define NEG_ESS         0x00080000u
#define NEG_TARGET_INFO 0x00800000u
#define NEG_VERSION     0x02000000u
#define NEG_128         0x20000000u
#define NEG_KEY_EXCH    0x40000000u
#define NEG_56          0x80000000u

/* Anything less is LM, NTLMv1, 40 or 56-bit keys, or no privacy. */
#define NEG_REQUIRED (NEG_UNICODE | NEG_SIGN | NEG_SEAL | NEG_ESS | NEG_128 | NEG_KEY_EXCH)
/* What a client asks for, and keeps of what the server grants. */
#define CLIENT_FLAGS (NEG_REQUIRED | NEG_NTLM | NEG_REQ_TARGET | NEG_ALWAYS_SIGN | \
                      NEG_TARGET_INFO | NEG_VERSION | NEG_56)

enum { AV_EOL = 0, AV_NB_COMPUTER = 1, AV_NB_DOMAIN = 2, AV_DNS_COMPUTER = 3,
       AV_DNS_DOMAIN = 4, AV_FLAGS = 6, AV_TIMESTAMP = 7 };
#define AV_FLAG_MIC 0x2u

enum { NEGOTIATE = 1, CHALLENGE = 2, AUTHENTICATE = 3 };
#define NEGOTIATE_SIZE 32
#define CHALLENGE_HEAD 56
#define AUTH_HEAD_MIN 64        /* up to the flags */
#define AUTH_HEAD 88            /* with Version and MIC */
#define AUTH_MIC 72
/* NTProofStr, then "temp" up to its AV pairs (MS-NLMP 2.2.2.7). */
#define NT_PROOF 16
#define TEMP_HEAD 28
/* 4 bytes of MsvAvEOL, 4 of padding Windows adds. */
#define NT_RESPONSE_MIN (NT_PROOF + TEMP_HEAD + 4)
/* Ours in MS-NLMP 2.2.2.10's form: 10.0, build 17763, NTLMSSP revision 15. */
static const uint8_t version[8] = { 10, 0, 0x63, 0x45, 0, 0, 0, 15 };

static const uint8_t signature[8] = "NTLMSSP";

static uint16_t get16(const uint8_t *p)
{
        return (uint16_t) (p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static void put16(uint8_t *p, size_t v)
{
        p[0] = v & 0xff;
        p[1] = (v >> 8) & 0xff;
}

static void put32(uint8_t *p, uint32_t v)
{
        put16(p, v & 0xffff);
        put16(p + 2, v >> 16);
}

struct span {
        const uint8_t *p;
        size_t len;
};

/*
 * A field (Len, MaxLen, Offset at msg + at) must lie inside the message
 * and, when not empty, behind the header (payload_min).  *low keeps the
 * lowest payload offset seen, so the AUTHENTICATE's MIC can be placed.
 */
static int get_field(const uint8_t *msg, size_t len, size_t at, size_t payload_min,
                     size_t *low, struct span *ret)
{
        size_t n = get16(msg + at);
        uint64_t off = get32(msg + at + 4);

        if (n == 0) {
                *ret = (struct span) { NULL, 0 };
                return 0;
        }
        if (off < payload_min || off > len || n > len - off)
                return -EBADMSG;
        if (off < *low)
                *low = (size_t) off;
        *ret = (struct span) { msg + off, n };
        return 0;
}

/* Writes data at *end of msg (it may be there already) and its field at msg + at. */
static void put_field(uint8_t *msg, size_t at, size_t *end, const void *data, size_t n)
{
        put16(msg + at, n);
        put16(msg + at + 2, n);
        put32(msg + at + 4, (uint32_t) *end);
        if (n)
                memmove(msg + *end, data, n);
        *end += n;
}

static int check_head(const uint8_t *msg, size_t len, size_t min, uint32_t type)
{
        if (!msg || len < min || memcmp(msg, signature, 8) != 0 || get32(msg + 8) != type)
                return -EBADMSG;
        return 0;
}

static int random_bytes(uint8_t *p, size_t n)
{
        while (n) {
                ssize_t k = getrandom(p, n, 0);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

/*
 * UTF-8 to UTF-16LE (at most NTLM_NAME_MAX bytes in, so 2 * NTLM_NAME_MAX
 * units out); -EINVAL for anything else.  upper folds ASCII letters, as
 * NTOWFv2 wants of the user name: Windows folds all of Unicode, so a
 * non-ASCII user name must be given in the case the account has.
 */
static int to_utf16(const char *s8, bool upper, uint8_t out[4 * NTLM_NAME_MAX], size_t *ret_len)
{
        const unsigned char *s = (const unsigned char *) s8;
        size_t n = 0;

        if (!s8 || strlen(s8) > NTLM_NAME_MAX)
                return -EINVAL;
        while (*s) {
                uint16_t u[2];
                uint32_t c;
                size_t k;

                s += pcq_utf8_next(s, &c);
                if (c == PCQ_UTF_INVALID)
                        return -EINVAL;
                if (upper && c >= 'a' && c <= 'z')
                        c -= 'a' - 'A';
                k = pcq_utf16_encode(c, u);
                for (size_t i = 0; i < k; i++, n += 2)
                        put16(out + n, u[i]);
        }
        *ret_len = n;
        return 0;
}

/* What an account file keeps and NTLM starts from: MD4 of UTF-16LE. */
int ntlm_nt_hash(const char *password, uint8_t ret[NTLM_HASH_SIZE])
{
        _Static_assert(NTLM_PASSWORD_MAX <= NTLM_NAME_MAX, "to_utf16 bounds passwords too");
        uint8_t utf16[4 * NTLM_NAME_MAX];
        struct md4_ctx md4;
        size_t n;

        if (!password || !ret || to_utf16(password, false, utf16, &n) < 0)
                return -EINVAL;
        md4_init(&md4);
        md4_update(&md4, n, utf16);
        md4_digest(&md4, NTLM_HASH_SIZE, ret);
        return 0;
}

/* UTF-16LE from the wire to UTF-8; -EBADMSG for odd lengths, lone surrogates, NULs. */
static int to_utf8(struct span in, char out[NTLM_NAME_MAX + 1])
{
        size_t n = 0;

        if (in.len % 2)
                return -EBADMSG;
        for (size_t i = 0; i < in.len; i += 2) {
                uint32_t c = get16(in.p + i);

                if (c >= 0xd800 && c < 0xdc00 && i + 2 < in.len &&
                    get16(in.p + i + 2) >= 0xdc00 && get16(in.p + i + 2) < 0xe000) {
                        c = 0x10000 + ((c - 0xd800) << 10) + (get16(in.p + i + 2) - 0xdc00);
                        i += 2;
                } else if (c == 0 || (c >= 0xd800 && c < 0xe000))
                        return -EBADMSG;
                if (n + 4 > NTLM_NAME_MAX)
                        return -EBADMSG;
                if (c < 0x80)
                        out[n++] = (char) c;
                else if (c < 0x800) {
                        out[n++] = (char) (0xc0 | c >> 6);
                        out[n++] = (char) (0x80 | (c & 0x3f));
                } else if (c < 0x10000) {
                        out[n++] = (char) (0xe0 | c >> 12);
                        out[n++] = (char) (0x80 | ((c >> 6) & 0x3f));
                        out[n++] = (char) (0x80 | (c & 0x3f));
                } else {
                        out[n++] = (char) (0xf0 | c >> 18);
                        out[n++] = (char) (0x80 | ((c >> 12) & 0x3f));
                        out[n++] = (char) (0x80 | ((c >> 6) & 0x3f));
                        out[n++] = (char) (0x80 | (c & 0x3f));
                }
        }
        out[n] = '\0';
        return 0;
}

/* Upper(user) of NTOWFv2, on UTF-16LE: ASCII only, as to_utf16. */
static void upper_user(struct span user16, uint8_t out[4 * NTLM_NAME_MAX])
{
        if (user16.len)
                memcpy(out, user16.p, user16.len);
        for (size_t i = 0; i + 1 < user16.len; i += 2)
                if (out[i] >= 'a' && out[i] <= 'z' && out[i + 1] == 0)
                        out[i] -= 'a' - 'A';
}

/* MS-NLMP 3.3.2: HMAC_MD5(NT hash, UNICODE(Upper(user) || domain)). */
static void ntowfv2_utf16(const uint8_t nt_hash[NTLM_HASH_SIZE], struct span user16,
                          struct span domain16, uint8_t ret[16])
{
        struct hmac_md5_ctx h;

        hmac_md5_set_key(&h, NTLM_HASH_SIZE, nt_hash);
        hmac_md5_update(&h, user16.len, user16.p);
        hmac_md5_update(&h, domain16.len, domain16.p);
        hmac_md5_digest(&h, 16, ret);
}

int ntlm_ntowfv2(const uint8_t nt_hash[NTLM_HASH_SIZE], const char *user,
                 const char *domain, uint8_t ret[16])
{
        uint8_t u[4 * NTLM_NAME_MAX], d[4 * NTLM_NAME_MAX];
        size_t ul, dl;

        if (!nt_hash || !ret || to_utf16(user, true, u, &ul) < 0 ||
            to_utf16(domain, false, d, &dl) < 0)
                return -EINVAL;
        ntowfv2_utf16(nt_hash, (struct span) { u, ul }, (struct span) { d, dl }, ret);
        return 0;
}

void ntlm_v2_proof(const uint8_t ntowfv2[16], const uint8_t server_challenge[8],
                   const uint8_t *temp, size_t temp_len, uint8_t ret_proof[16],
                   uint8_t ret_session_base_key[16])
{
        struct hmac_md5_ctx h;

        hmac_md5_set_key(&h, 16, ntowfv2);
        hmac_md5_update(&h, 8, server_challenge);
        hmac_md5_update(&h, temp_len, temp);
        hmac_md5_digest(&h, 16, ret_proof);
        /* NTLMv2's key exchange key is its session base key (3.4.5.1). */
        hmac_md5_update(&h, 16, ret_proof);
        hmac_md5_digest(&h, 16, ret_session_base_key);
}

void ntlm_key_exchange(const uint8_t key[16], const uint8_t in[16], uint8_t ret[16])
{
        struct arcfour_ctx rc4;

        arcfour_set_key(&rc4, 16, key);
        arcfour_crypt(&rc4, 16, ret, in);
}

/* MS-NLMP 3.1.5.1.2: HMAC_MD5(exported key, NEGOTIATE || CHALLENGE || AUTHENTICATE). */
static void mic_of(const uint8_t key[16], struct span neg, struct span chal,
                   const uint8_t *auth, size_t auth_len, uint8_t ret[16])
{
        static const uint8_t zero[16];
        struct hmac_md5_ctx h;

        hmac_md5_set_key(&h, 16, key);
        hmac_md5_update(&h, neg.len, neg.p);
        hmac_md5_update(&h, chal.len, chal.p);
        hmac_md5_update(&h, AUTH_MIC, auth);
        hmac_md5_update(&h, 16, zero);
        hmac_md5_update(&h, auth_len - AUTH_MIC - 16, auth + AUTH_MIC + 16);
        hmac_md5_digest(&h, 16, ret);
}

/*
 * Walks AV pairs (MS-NLMP 2.2.2.1) up to MsvAvEOL; -EBADMSG if one runs
 * past the end or there is no EOL.  Gives the value of want, if there.
 */
static int find_av(struct span av, uint16_t want, struct span *ret_value, size_t *ret_len)
{
        struct span found = { NULL, 0 };
        size_t i = 0;

        for (;;) {
                uint16_t id, n;

                if (av.len - i < 4)
                        return -EBADMSG;
                id = get16(av.p + i);
                n = get16(av.p + i + 2);
                if (av.len - i - 4 < n)
                        return -EBADMSG;
                if (id == AV_EOL)
                        break;
                if (id == want && !found.p)
                        found = (struct span) { av.p + i + 4, n };
                i += 4 + n;
        }
        if (ret_value)
                *ret_value = found;
        if (ret_len)
                *ret_len = i;
        return 0;
}

/* Windows' FILETIME: 100 ns since 1601, as MsvAvTimestamp carries it. */
static void filetime_now(uint8_t ret[8])
{
        struct timespec ts;
        uint64_t t;

        clock_gettime(CLOCK_REALTIME, &ts);
        t = ((uint64_t) ts.tv_sec + 11644473600u) * 10000000u + (uint64_t) ts.tv_nsec / 100;
        put32(ret, (uint32_t) t);
        put32(ret + 4, (uint32_t) (t >> 32));
}

/* ---- Server ---- */

enum { WANT_NEGOTIATE, WANT_AUTHENTICATE, ESTABLISHED, FAILED };

struct ntlm_server {
        int state;
        ntlm_lookup_fn lookup;
        ntlm_verify_fn verify;          /* NULL: lookup alone */
        void *verify_userdata;
        void *userdata;
        uint8_t target16[4 * NTLM_NAME_MAX];
        size_t target16_len;
        /* Both kept for the MIC; owned here. */
        uint8_t *negotiate, *challenge;
        size_t negotiate_len, challenge_len;
        uint8_t server_challenge[8];
        char user[NTLM_NAME_MAX + 1];
        bool mic;                       /* the AUTHENTICATE carried a MIC */
        struct ntlm_session *session;
};

/* The caller owns *ret (ntlm_server_free). */
int ntlm_server_new(const char *target, ntlm_lookup_fn lookup, void *userdata,
                    struct ntlm_server **ret)
{
        struct ntlm_server *s;

        if (!lookup || !ret)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        if (to_utf16(target, false, s->target16, &s->target16_len) < 0 ||
            s->target16_len == 0 || s->target16_len > UINT16_MAX) {
                free(s);
                return -EINVAL;
        }
        s->lookup = lookup;
        s->userdata = userdata;
        *ret = s;
        return 0;
}

void ntlm_server_set_verify(struct ntlm_server *s, ntlm_verify_fn verify, void *userdata)
{
        if (!s)
                return;
        s->verify = verify;
        s->verify_userdata = userdata;
}

void ntlm_server_free(struct ntlm_server *s)
{
        if (!s)
                return;
        free(s->negotiate);
        free(s->challenge);
        ntlm_session_free(s->session);
        memset(s, 0, sizeof(*s));
        free(s);
}

const char *ntlm_server_user(const struct ntlm_server *s)
{
        return s && s->state == ESTABLISHED ? s->user : NULL;
}

struct ntlm_session *ntlm_server_session(struct ntlm_server *s)
{
        return s && s->state == ESTABLISHED ? s->session : NULL;
}

bool ntlm_server_mic(const struct ntlm_server *s)
{
        return s && s->state == ESTABLISHED && s->mic;
}

static void put_av(uint8_t *p, size_t *at, uint16_t id, const void *v, size_t n)
{
        put16(p + *at, id);
        put16(p + *at + 2, n);
        if (n)
                memcpy(p + *at + 4, v, n);
        *at += 4 + n;
}

/* The CHALLENGE (MS-NLMP 2.2.1.2), into s->challenge. */
static int build_challenge(struct ntlm_server *s, uint32_t flags)
{
        size_t t = s->target16_len, av_len = 4 * (4 + t) + 4 + 8 + 4;
        size_t len = CHALLENGE_HEAD + t + av_len, end = CHALLENGE_HEAD, at = 0;
        uint8_t *m = calloc(1, len), *av = m ? m + CHALLENGE_HEAD + t : NULL, now[8];
        int r;

        if (!m)
                return -ENOMEM;
        r = random_bytes(s->server_challenge, 8);
        if (r < 0) {
                free(m);
                return r;
        }
        filetime_now(now);
        put_av(av, &at, AV_NB_DOMAIN, s->target16, t);
        put_av(av, &at, AV_NB_COMPUTER, s->target16, t);
        put_av(av, &at, AV_DNS_DOMAIN, s->target16, t);
        put_av(av, &at, AV_DNS_COMPUTER, s->target16, t);
        put_av(av, &at, AV_TIMESTAMP, now, 8);
        put_av(av, &at, AV_EOL, NULL, 0);
        memcpy(m, signature, 8);
        put32(m + 8, CHALLENGE);
        put_field(m, 12, &end, s->target16, t);
        put32(m + 20, flags);
        memcpy(m + 24, s->server_challenge, 8);
        put_field(m, 40, &end, av, at);
        memcpy(m + 48, version, 8);
        s->challenge = m;
        s->challenge_len = len;
        return 0;
}

static int server_negotiate(struct ntlm_server *s, const uint8_t *in, size_t len)
{
        /* Old clients send only the signature, type and flags. */
        uint32_t flags, ours;
        int r = check_head(in, len, 16, NEGOTIATE);

        if (r < 0)
                return r;
        flags = get32(in + 12);
        if ((flags & NEG_REQUIRED) != NEG_REQUIRED)
                return -EPROTO;
        ours = NEG_REQUIRED | NEG_NTLM | NEG_ALWAYS_SIGN | NEG_TYPE_DOMAIN |
               NEG_TARGET_INFO | NEG_VERSION | (flags & (NEG_REQ_TARGET | NEG_56));
        s->negotiate = malloc(len);
        if (!s->negotiate)
                return -ENOMEM;
        memcpy(s->negotiate, in, len);
        s->negotiate_len = len;
        return build_challenge(s, ours);
}

/* The AUTHENTICATE's fields (MS-NLMP 2.2.1.3), every one checked. */
struct auth_msg {
        struct span nt, domain, user, key;
        uint32_t flags;
        bool has_mic;
};

static int parse_authenticate(const uint8_t *in, size_t len, struct auth_msg *a)
{
        size_t low = len;
        struct span lm, ws, av, avflags;
        int r = check_head(in, len, AUTH_HEAD_MIN, AUTHENTICATE);

        if (r < 0)
                return r;
        if (get_field(in, len, 12, AUTH_HEAD_MIN, &low, &lm) < 0 ||
            get_field(in, len, 20, AUTH_HEAD_MIN, &low, &a->nt) < 0 ||
            get_field(in, len, 28, AUTH_HEAD_MIN, &low, &a->domain) < 0 ||
            get_field(in, len, 36, AUTH_HEAD_MIN, &low, &a->user) < 0 ||
            get_field(in, len, 44, AUTH_HEAD_MIN, &low, &ws) < 0 ||
            get_field(in, len, 52, AUTH_HEAD_MIN, &low, &a->key) < 0)
                return -EBADMSG;
        a->flags = get32(in + 60);
        if ((a->flags & NEG_REQUIRED) != NEG_REQUIRED)
                return -EPROTO;
        /* Anonymous, LM or NTLMv1: all refused as one. */
        if (a->nt.len == 0 || a->nt.len == 24)
                return -EACCES;
        if (a->nt.len < NT_RESPONSE_MIN || a->nt.p[NT_PROOF] != 1 || a->key.len != 16)
                return -EBADMSG;
        av = (struct span) { a->nt.p + NT_PROOF + TEMP_HEAD, a->nt.len - NT_PROOF - TEMP_HEAD };
        if (find_av(av, AV_FLAGS, &avflags, NULL) < 0)
                return -EBADMSG;
        a->has_mic = avflags.len == 4 && (get32(avflags.p) & AV_FLAG_MIC);
        /* The MIC is at 72: the payload may not begin before its end. */
        if (a->has_mic && low < AUTH_HEAD)
                return -EBADMSG;
        return 0;
}

/* The exported session key from a proven session base key, or -EACCES: the MIC. */
static int check_mic(struct ntlm_server *s, const uint8_t *in, size_t len,
                     const struct auth_msg *a, const uint8_t base[16], uint8_t ret_key[16])
{
        uint8_t exported[16], mic[16];

        ntlm_key_exchange(base, a->key.p, exported);
        if (a->has_mic) {
                mic_of(exported, (struct span) { s->negotiate, s->negotiate_len },
                       (struct span) { s->challenge, s->challenge_len }, in, len, mic);
                if (!memeql_sec(mic, in + AUTH_MIC, 16))
                        return -EACCES;
        }
        memcpy(ret_key, exported, 16);
        return 0;
}

/* The exported session key, or -EACCES: the proof, then the MIC. */
static int check_response(struct ntlm_server *s, const uint8_t *in, size_t len,
                          const struct auth_msg *a, const uint8_t nt_hash[NTLM_HASH_SIZE],
                          uint8_t ret_key[16])
{
        uint8_t upper[4 * NTLM_NAME_MAX], key[16], proof[16], base[16];

        upper_user(a->user, upper);
        ntowfv2_utf16(nt_hash, (struct span) { upper, a->user.len }, a->domain, key);
        ntlm_v2_proof(key, s->server_challenge, a->nt.p + NT_PROOF, a->nt.len - NT_PROOF,
                      proof, base);
        if (!memeql_sec(proof, a->nt.p, NT_PROOF))
                return -EACCES;
        return check_mic(s, in, len, a, base, ret_key);
}

/* An account lookup does not know, judged by verify: 0 (*ret_key set), -ENOENT, -EACCES. */
static int check_verified(struct ntlm_server *s, const uint8_t *in, size_t len,
                          const struct auth_msg *a, const char *domain, uint8_t ret_key[16])
{
        uint8_t base[16];
        int r = s->verify(s->verify_userdata, s->user, domain, s->server_challenge, a->nt.p,
                          a->nt.len, base);

        if (r < 0)
                return r;
        return check_mic(s, in, len, a, base, ret_key);
}

static int server_authenticate(struct ntlm_server *s, const uint8_t *in, size_t len)
{
        /* Unknown users are checked against this, for one answer and one pace. */
        static const uint8_t no_hash[NTLM_HASH_SIZE];
        char domain[NTLM_NAME_MAX + 1];
        uint8_t hash[NTLM_HASH_SIZE], exported[16];
        struct auth_msg a;
        bool known;
        int r = parse_authenticate(in, len, &a);

        if (r < 0)
                return r;
        if (a.user.len > 2 * NTLM_NAME_MAX || to_utf8(a.user, s->user) < 0 ||
            to_utf8(a.domain, domain) < 0)
                return -EBADMSG;
        /* Anonymous (no user) is an unknown user. */
        r = s->user[0] ? s->lookup(s->userdata, s->user, domain, hash) : -ENOENT;
        if (r < 0 && r != -ENOENT)
                return r;
        known = r == 0;
        if (!known && s->verify && s->user[0]) {
                r = check_verified(s, in, len, &a, domain, exported);
                if (r == 0) {
                        s->mic = a.has_mic;
                        return ntlm_session_new(exported, false, &s->session);
                }
                if (r != -ENOENT && r != -EACCES)
                        return r;
        }
        r = check_response(s, in, len, &a, known ? hash : no_hash, exported);
        if (r < 0)
                return r;
        if (!known)
                return -EACCES;
        s->mic = a.has_mic;
        return ntlm_session_new(exported, false, &s->session);
}

int ntlm_server_step(struct ntlm_server *s, const void *in, size_t in_len,
                     uint8_t **ret_out, size_t *ret_out_len)
{
        int r;

        if (!s || !ret_out || !ret_out_len)
                return -EINVAL;
        if (s->state == WANT_NEGOTIATE)
                r = server_negotiate(s, in, in_len);
        else if (s->state == WANT_AUTHENTICATE)
                r = server_authenticate(s, in, in_len);
        else
                r = -EBADMSG;
        if (r < 0) {
                s->state = FAILED;
                return r;
        }
        if (s->state++ == WANT_NEGOTIATE) {
                /* A copy: the MIC needs ours as sent. */
                *ret_out = malloc(s->challenge_len);
                if (!*ret_out) {
                        s->state = FAILED;
                        return -ENOMEM;
                }
                memcpy(*ret_out, s->challenge, s->challenge_len);
                *ret_out_len = s->challenge_len;
        } else {
                *ret_out = NULL;
                *ret_out_len = 0;
        }
        return 0;
}

/* ---- Client ---- */

enum { SEND_NEGOTIATE, WANT_CHALLENGE, CLIENT_DONE, CLIENT_FAILED };

struct ntlm_client {
        int state;
        uint8_t nt_hash[NTLM_HASH_SIZE];
        uint8_t user16[4 * NTLM_NAME_MAX], domain16[4 * NTLM_NAME_MAX];
        size_t user16_len, domain16_len;
        uint8_t negotiate[NEGOTIATE_SIZE];
        struct ntlm_session *session;
};

/* The caller owns *ret (ntlm_client_free). */
int ntlm_client_new(const char *user, const char *domain,
                    const uint8_t nt_hash[NTLM_HASH_SIZE], struct ntlm_client **ret)
{
        struct ntlm_client *c;

        if (!nt_hash || !ret || !user || !*user)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        /* The user name as given: Upper() is for NTOWFv2 only. */
        if (to_utf16(user, false, c->user16, &c->user16_len) < 0 ||
            to_utf16(domain ? domain : "", false, c->domain16, &c->domain16_len) < 0) {
                free(c);
                return -EINVAL;
        }
        memcpy(c->nt_hash, nt_hash, NTLM_HASH_SIZE);
        *ret = c;
        return 0;
}

void ntlm_client_free(struct ntlm_client *c)
{
        if (!c)
                return;
        ntlm_session_free(c->session);
        memset(c, 0, sizeof(*c));
        free(c);
}

struct ntlm_session *ntlm_client_session(struct ntlm_client *c)
{
        return c && c->state == CLIENT_DONE ? c->session : NULL;
}

static int client_negotiate(struct ntlm_client *c, uint8_t **ret_out, size_t *ret_len)
{
        uint8_t *m = malloc(NEGOTIATE_SIZE);
        size_t end = NEGOTIATE_SIZE;

        if (!m)
                return -ENOMEM;
        memset(c->negotiate, 0, NEGOTIATE_SIZE);
        memcpy(c->negotiate, signature, 8);
        put32(c->negotiate + 8, NEGOTIATE);
        put32(c->negotiate + 12, CLIENT_FLAGS & ~(NEG_TARGET_INFO | NEG_VERSION | NEG_56));
        put_field(c->negotiate, 16, &end, NULL, 0);
        put_field(c->negotiate, 24, &end, NULL, 0);
        memcpy(m, c->negotiate, NEGOTIATE_SIZE);
        *ret_out = m;
        *ret_len = NEGOTIATE_SIZE;
        return 0;
}

/* The CHALLENGE's server challenge, flags and AV pairs (EOL excluded). */
struct chal_msg {
        const uint8_t *server_challenge;
        uint32_t flags;
        struct span av;
        uint8_t timestamp[8];
};

static int parse_challenge(const uint8_t *in, size_t len, struct chal_msg *ch)
{
        size_t low = len, av_len;
        struct span target, info, ts;
        int r = check_head(in, len, 48, CHALLENGE);

        if (r < 0)
                return r;
        ch->flags = get32(in + 20);
        ch->server_challenge = in + 24;
        if (get_field(in, len, 12, 48, &low, &target) < 0 ||
            get_field(in, len, 40, 48, &low, &info) < 0)
                return -EBADMSG;
        if ((ch->flags & NEG_REQUIRED) != NEG_REQUIRED || !info.len)
                return -EPROTO;
        if (find_av(info, AV_TIMESTAMP, &ts, &av_len) < 0 || (ts.p && ts.len != 8))
                return -EBADMSG;
        ch->av = (struct span) { info.p, av_len };
        if (ts.p)
                memcpy(ch->timestamp, ts.p, 8);
        else
                filetime_now(ch->timestamp);
        return 0;
}

/*
 * The NT response (MS-NLMP 3.3.2, 2.2.2.7): room for NTProofStr, then
 * "temp" with the server's AV pairs and MsvAvFlags saying a MIC follows.
 * The caller frees *ret.
 */
static int build_nt_response(const struct chal_msg *ch, uint8_t **ret, size_t *ret_len)
{
        static const uint8_t mic_flag[4] = { AV_FLAG_MIC, 0, 0, 0 };
        size_t len = NT_PROOF + TEMP_HEAD + ch->av.len + 8 + 4 + 4;
        size_t at = TEMP_HEAD + ch->av.len;
        uint8_t *nt, *t;
        int r;

        if (len > UINT16_MAX)
                return -EBADMSG;
        nt = calloc(1, len);
        if (!nt)
                return -ENOMEM;
        t = nt + NT_PROOF;
        t[0] = t[1] = 1;
        memcpy(t + 8, ch->timestamp, 8);
        r = random_bytes(t + 16, 8);
        if (r < 0) {
                free(nt);
                return r;
        }
        memcpy(t + TEMP_HEAD, ch->av.p, ch->av.len);
        put_av(t, &at, AV_FLAGS, mic_flag, 4);
        put_av(t, &at, AV_EOL, NULL, 0);
        *ret = nt;
        *ret_len = len;
        return 0;
}

/* The AUTHENTICATE, but for its MIC.  The caller frees the result. */
static uint8_t *layout_authenticate(const struct ntlm_client *c, uint32_t flags,
                                    const uint8_t *nt, size_t nt_len,
                                    const uint8_t enc_key[16], size_t *ret_len)
{
        static const uint8_t lm_zero[24];
        size_t len = AUTH_HEAD + c->domain16_len + c->user16_len + 24 + nt_len + 16;
        size_t end = AUTH_HEAD;
        uint8_t *m = calloc(1, len);

        if (!m)
                return NULL;
        memcpy(m, signature, 8);
        put32(m + 8, AUTHENTICATE);
        put_field(m, 28, &end, c->domain16, c->domain16_len);
        put_field(m, 36, &end, c->user16, c->user16_len);
        put_field(m, 44, &end, NULL, 0);
        /* With a timestamp from the server, LMv2 is all zeros (3.3.2). */
        put_field(m, 12, &end, lm_zero, sizeof(lm_zero));
        put_field(m, 20, &end, nt, nt_len);
        put_field(m, 52, &end, enc_key, 16);
        put32(m + 60, flags);
        memcpy(m + 64, version, 8);
        *ret_len = len;
        return m;
}

static int client_authenticate(struct ntlm_client *c, const uint8_t *in, size_t len,
                               uint8_t **ret_out, size_t *ret_len)
{
        uint8_t up[4 * NTLM_NAME_MAX], key[16], base[16], exported[16], enc[16], mic[16];
        uint8_t *nt = NULL, *m = NULL;
        size_t nt_len, m_len;
        struct chal_msg ch;
        int r = parse_challenge(in, len, &ch);

        if (r < 0)
                return r;
        r = build_nt_response(&ch, &nt, &nt_len);
        if (r < 0)
                return r;
        r = random_bytes(exported, 16);
        if (r < 0)
                goto fail;
        upper_user((struct span) { c->user16, c->user16_len }, up);
        ntowfv2_utf16(c->nt_hash, (struct span) { up, c->user16_len },
                      (struct span) { c->domain16, c->domain16_len }, key);
        ntlm_v2_proof(key, ch.server_challenge, nt + NT_PROOF, nt_len - NT_PROOF, nt, base);
        ntlm_key_exchange(base, exported, enc);
        m = layout_authenticate(c, ch.flags & CLIENT_FLAGS, nt, nt_len, enc, &m_len);
        r = m ? ntlm_session_new(exported, true, &c->session) : -ENOMEM;
        if (r < 0)
                goto fail;
        mic_of(exported, (struct span) { c->negotiate, NEGOTIATE_SIZE },
               (struct span) { in, len }, m, m_len, mic);
        memcpy(m + AUTH_MIC, mic, 16);
        free(nt);
        *ret_out = m;
        *ret_len = m_len;
        return 0;
fail:
        free(nt);
        free(m);
        return r;
}

int ntlm_client_step(struct ntlm_client *c, const void *in, size_t in_len,
                     uint8_t **ret_out, size_t *ret_out_len)
{
        int r;

        if (!c || !ret_out || !ret_out_len)
                return -EINVAL;
        if (c->state == SEND_NEGOTIATE && !in_len)
                r = client_negotiate(c, ret_out, ret_out_len);
        else if (c->state == WANT_CHALLENGE)
                r = client_authenticate(c, in, in_len, ret_out, ret_out_len);
        else
                r = -EBADMSG;
        c->state = r < 0 ? CLIENT_FAILED : c->state + 1;
        return r;
}
