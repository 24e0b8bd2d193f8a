#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Interop: Samba's gensec (a Kerberos client nobody here wrote) against our
# acceptor, in a throwaway realm (krb5-kdc.sh); interop/krb5_samba.py
# drives krb5-peer.  Exit 77 (SKIP) without python3-samba or MIT's KDC.
set -u
PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
build="${top_builddir:-$(pwd)/..}"

if ! "$PY" -c 'import samba.gensec' 2>/dev/null; then
        echo "test-krb5-samba: SKIP: $PY has no samba (apt install python3-samba)"
        exit 77
fi
. "$here/krb5-kdc.sh"
krb5_kdc_start
"$PY" "$here/interop/krb5_samba.py" "$build/tests/krb5-peer"
