/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness of smbd's named-pipe handshake and the pipe's framing
 * (server-glue/daemon/samba-np.h), libFuzzer's target in scripts/test.sh
 * (seed: tests/fuzz-np-corpus, the request a real smbd 4.17.12 sent).
 *
 * The input is parsed twice as a request: as it is, and with its length
 * made to match (so that the fuzzer spends its time in the body, not in
 * the first check).  An identity that parses must name an account.  The
 * same bytes are then unframed in two reads cut where the first byte
 * says, and framed back as PDUs from slices of every 7 bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "samba-np.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse(const uint8_t *b, size_t n)
{
        struct np_identity id;
        uint32_t level;

        if (np_auth_req_parse(b, n, &id, &level) == 0) {
                if (!id.account || !id.account[0])
                        abort();
                np_identity_done(&id);
        }
}

static void unframe(const uint8_t *data, size_t size)
{
        struct np_unframe u = { 0 };
        uint8_t *b = malloc(size ? size : 1);
        size_t cut = size ? data[0] % (size + 1) : 0, n;

        if (!b)
                return;
        memcpy(b, data, size);
        n = np_unframe(&u, b, cut);
        n += np_unframe(&u, b + cut, size - cut);
        if (n > size)
                abort();
        free(b);
}

static void frame(const uint8_t *data, size_t size)
{
        static uint8_t msg[NP_MSG_MAX];
        struct iovec slices[64], *iov = slices;
        size_t n_iov = 0;
        int n;

        for (size_t at = 0; at < size && n_iov < 64; at += 7)
                slices[n_iov++] = (struct iovec){ (void *) (data + at),
                                                  size - at < 7 ? size - at : 7 };
        while ((n = np_frame_next(&iov, &n_iov, msg)) > 0)
                if (n < 18 || (size_t) n > NP_MSG_MAX)
                        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t *b;

        parse(data, size);
        if (size >= 4 && size <= NP_AUTH_MAX_BYTES && (b = malloc(size))) {
                memcpy(b, data, size);
                b[0] = (uint8_t) ((size - 4) >> 24);
                b[1] = (uint8_t) ((size - 4) >> 16);
                b[2] = (uint8_t) ((size - 4) >> 8);
                b[3] = (uint8_t) (size - 4);
                parse(b, size);
                free(b);
        }
        unframe(data, size);
        frame(data, size);
        return 0;
}
