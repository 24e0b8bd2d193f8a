/* SPDX-License-Identifier: MIT */
/*
 * samba-np.h: what smbd says to the external server of a named pipe
 * (MS-PCQ's \PIPE\winreg), transport-free.  For a pipe it does not serve
 * itself, smbd (as root) connects to <external_rpc_pipe:socket_dir>/np/<pipe>,
 * sends a named_pipe_auth_req (Samba's librpc/idl/named_pipe_auth.idl, NDR)
 * carrying the SMB session's identity, waits for a named_pipe_auth_rep at
 * the same level, and from then on sends and expects each message of the
 * pipe (one DCE/RPC PDU) after a 2-byte little-endian length.
 *
 * The request is hostile input like any other: every length, count,
 * pointer and string is checked against the bytes there are.  Only level 7
 * is spoken, Samba 4.17.12's (Debian 12): the levels before it lay the
 * session out differently, and a reply at another level is refused by smbd.
 * Internal to perflibd.
 */
#ifndef PERFLIBD_SAMBA_NP_H
#define PERFLIBD_SAMBA_NP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* The level spoken, and the Samba that speaks it (for the logs). */
#define NP_AUTH_LEVEL           7u
#define NP_AUTH_LEVEL_SAMBA     "Samba 4.17.12 (Debian 12)"
/*
 * The largest request read: a real one is under 1 KiB, and a domain user
 * in a thousand groups some 40 KiB (a SID and a gid each).
 */
#define NP_AUTH_MAX_BYTES       (256u * 1024u)
/* A reply is always this long. */
#define NP_AUTH_REP_BYTES       36u
/* A message on the pipe: its length, then one PDU (frag_length is 16 bits). */
#define NP_MSG_MAX              (2u + 65535u)

/* Who smbd says the SMB client is; every string owned (np_identity_done). */
struct np_identity {
        uint32_t level;
        char *account;                  /* auth_user_info.account_name */
        char *domain;                   /* auth_user_info.domain_name, may be NULL */
        char *unix_name;                /* auth_user_info_unix.unix_name, may be NULL */
        char *client_addr;              /* the SMB client's address, may be NULL */
        int have_unix;                  /* the unix token was there */
        uint64_t uid, gid;
        uint64_t *groups;               /* n_groups supplementary gids */
        size_t n_groups;
};

/*
 * The whole length of a request from its first 4 bytes (a big-endian
 * count of the bytes after them): 0, or -EMSGSIZE past NP_AUTH_MAX_BYTES,
 * -EBADMSG when too short to be one.
 */
int np_auth_req_size(const uint8_t head[4], size_t *ret_size);

/*
 * Parses a whole request of size bytes.  0 and *ret filled (the caller's,
 * np_identity_done); -EPROTONOSUPPORT for a well-framed request at another
 * level (*ret_level tells which); -EBADMSG for anything malformed;
 * -ENOMEM.  *ret_level is set whenever the header was readable.
 */
int np_auth_req_parse(const uint8_t *buf, size_t size, struct np_identity *ret,
                      uint32_t *ret_level);
void np_identity_done(struct np_identity *id);

/* The reply at level, with status (an NTSTATUS; 0 accepts): a message-mode pipe. */
void np_auth_rep_build(uint32_t level, uint32_t status, uint8_t out[NP_AUTH_REP_BYTES]);

/*
 * Incoming messages to the PDU stream: strips the length before each
 * message from buf[0..n), in place, state kept across calls; returns the
 * bytes of payload now at buf[0..).
 */
struct np_unframe {
        uint32_t left;                  /* payload bytes still to come of this message */
        uint8_t have;                   /* bytes of the next length read (0 or 1) */
        uint8_t low;                    /* its first byte */
};
size_t np_unframe(struct np_unframe *u, uint8_t *buf, size_t n);

/*
 * Outgoing: copies the next PDU of iov[0..*n_iov) (whole PDUs back to back,
 * little-endian, as our server writes them) into msg after its length,
 * and moves *iov and *n_iov past it (changing the slice it ends in).
 * Returns the message's size, 0 when no bytes are left, -EPROTO when the
 * bytes do not hold a whole PDU there.
 */
int np_frame_next(struct iovec **iov, size_t *n_iov, uint8_t msg[NP_MSG_MAX]);

#endif /* PERFLIBD_SAMBA_NP_H */
