/* SPDX-License-Identifier: MIT */
/*
 * np-relay.h: \PIPE\winreg carries MS-RRP beside PerflibV2; with
 * --samba-winreg, a pipe whose first bind is to MS-RRP is passed whole to
 * Samba's own winreg server (samba-dcerpcd's <ncalrpc dir>/np/winreg), so
 * that the remote registry Samba's users rely on keeps working.  That
 * server speaks smbd's protocol too (samba-np.h): it is sent smbd's
 * handshake as smbd sent it, then every message both ways, unchanged.
 * Internal to perflibd.
 */
#ifndef PERFLIBD_NP_RELAY_H
#define PERFLIBD_NP_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the PDU (len bytes) is a bind whose first context is MS-RRP's. */
bool np_is_rrp_bind(const uint8_t *pdu, size_t len);

/*
 * Connects to Samba's server at path and replays the handshake (req,
 * req_len bytes, as smbd sent it), within timeout_ms: 0 and *ret_fd (the
 * caller's), or -errno (-EPROTO: it answered with an error or at another
 * level).
 */
int np_relay_open(const char *path, const uint8_t *req, size_t req_len, int timeout_ms,
                  int *ret_fd);

/*
 * Copies bytes both ways between a and b until either closes or neither
 * sends for idle_ms (0: no limit); first (first_len bytes) goes to b
 * before anything else.  0 when one side closed, -ETIMEDOUT, -errno.
 */
int np_relay_run(int a, int b, const uint8_t *first, size_t first_len, int idle_ms);

#endif /* PERFLIBD_NP_RELAY_H */
