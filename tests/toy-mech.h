/* SPDX-License-Identifier: MIT */
/*
 * toy-mech.h: a DCE/RPC security mechanism for tests (toy-mech.c), weak
 * on purpose but strict like a real one: every changed byte and every
 * replayed or reordered PDU is refused.  It checks what the security
 * layer and the client give a mechanism, not cryptography.
 */
#ifndef PL_TOY_MECH_H
#define PL_TOY_MECH_H

#include <stdbool.h>
#include <stdint.h>

#include "dcerpc-auth.h"

#define TOY_SIG 8u

/* One end's state: both ends of an association start with the same key. */
struct toy {
        uint8_t key;
        uint32_t send_seq, recv_seq;
        bool fail;                      /* sign_seal refuses */
};

extern const struct dcerpc_auth_mech toy_mech;

#endif
