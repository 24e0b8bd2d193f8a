#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Kerberos through MIT GSS-API as a DCE/RPC mechanism: test-krb5 against a
# throwaway realm (krb5-kdc.sh), skipped (77) without MIT's KDC tools.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build="${top_builddir:-$(pwd)/..}"

. "$here/krb5-kdc.sh"
krb5_kdc_start
"$build/tests/test-krb5"
