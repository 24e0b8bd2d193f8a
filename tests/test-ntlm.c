/* SPDX-License-Identifier: MIT */
/*
 * NTLM (sdk/librpc/ntlm.h) against the test vectors of MS-NLMP section 4.2
 * (user "User", domain "Domain", password "Password"), and what it
 * refuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ntlm.h"

/* MS-NLMP 4.2.2.1.2 (and 4.2.4.1.1): NTOWFv1("Password"). */
static const uint8_t password_hash[NTLM_HASH_SIZE] = {
        0xa4, 0xf4, 0x9c, 0x40, 0x65, 0x10, 0xbd, 0xca,
        0xb6, 0x82, 0x4e, 0xe7, 0xc3, 0x0f, 0xd8, 0x52,
};

static void nt_hash(void **state)
{
        uint8_t h[NTLM_HASH_SIZE], e[NTLM_HASH_SIZE];
        char long_password[NTLM_PASSWORD_MAX + 2];

        (void) state;
        assert_int_equal(ntlm_nt_hash("Password", h), 0);
        assert_memory_equal(h, password_hash, sizeof(h));
        /* The empty password's: MD4 of nothing. */
        assert_int_equal(ntlm_nt_hash("", e), 0);
        assert_memory_equal(e, "\x31\xd6\xcf\xe0\xd1\x6a\xe9\x31\xb7\x3c\x59\xd7\xe0\xc0\x89\xc0",
                            sizeof(e));
        /* Not UTF-8, too long, no place to put it: refused, nothing written. */
        memcpy(e, h, sizeof(e));
        assert_int_equal(ntlm_nt_hash("\xff", e), -EINVAL);
        memset(long_password, 'a', sizeof(long_password) - 1);
        long_password[sizeof(long_password) - 1] = '\0';
        assert_int_equal(ntlm_nt_hash(long_password, e), -EINVAL);
        assert_memory_equal(e, h, sizeof(e));
        assert_int_equal(ntlm_nt_hash(NULL, e), -EINVAL);
        assert_int_equal(ntlm_nt_hash("x", NULL), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(nt_hash),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
