#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Interop: impacket's NTLM (a client nobody here wrote) against our NTLM
# server, message by message (interop/ntlm_impacket.py drives ntlm-peer).
# Exit 77 (SKIP) when /usr/bin/python3 has no impacket.
set -u
PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
build="${top_builddir:-$(pwd)/..}"

if ! "$PY" -c 'import impacket.ntlm, Cryptodome.Cipher.ARC4' 2>/dev/null; then
        echo "test-ntlm-impacket: SKIP: $PY has no impacket (apt install python3-impacket)"
        exit 77
fi
exec "$PY" "$here/interop/ntlm_impacket.py" "$build/tests/ntlm-peer"
