#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Kerberos over TCP, end to end: a throwaway realm (krb5-kdc.sh), perflibd
# given the service's keytab, and Samba's DCE/RPC harness (python3-samba,
# on MIT's library) binding with Kerberos alone and in SPNEGO at packet
# privacy and calling EnumerateCounterSet, sealed and opened by Samba's
# gensec (tests/interop/samba_raw.py, PerflibKrb5).  Then the account is
# deleted while perflibd runs, and the same principal is refused.  A bad
# keytab stops perflibd at the start with a clear error.
#
# Exit 77 (SKIP) without MIT's KDC tools or python3-samba.
#
# shellcheck disable=SC2016
set -u

PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
build="${top_builddir:-$(pwd)/..}"
perflibd="$build/server-glue/perflibd"
passwd="$build/server-glue/perflib-passwd"
provider="$build/tests/interop/interop-provider"

# shellcheck source=test-lib.sh disable=SC1091
. "$here/test-lib.sh"
# shellcheck source=krb5-kdc.sh disable=SC1091
. "$here/krb5-kdc.sh"

say() { printf '%s\n' "test-remote-krb5: $*"; }

if ! "$PY" -c 'import samba.tests.dcerpc.raw_testcase' 2>/dev/null; then
        say "SKIP: $PY has no samba module (Debian: apt install python3-samba)"
        exit 77
fi
krb5_kdc_start

tmp=$KRB5_TEST_DIR/perflibd
mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins" || exit 1
chmod 755 "$KRB5_TEST_DIR" "$tmp" || exit 1
export PERFLIB_RUNTIME_DIR="$tmp/run"
unset PERFLIB_LISTEN_TCP PERFLIB_ACCOUNTS PERFLIB_KEYTAB PERFLIB_REGISTRY_DIR PERFLIB_PLUGIN_DIR
provider_pid='' perflibd_pid=''
# shellcheck disable=SC2317 # (run by the trap)
cleanup() {
        for pid in $perflibd_pid $provider_pid; do
                kill "$pid" 2>/dev/null
                wait "$pid" 2>/dev/null
        done
        krb5_kdc_stop
}
trap cleanup EXIT
trap 'exit 1' INT TERM

rc=0
# A keytab without our key: perflibd refuses to start, and says why.
if "$perflibd" --registry-dir "$tmp/registry" --plugin-dir "$tmp/plugins" \
        --listen-tcp "127.0.0.1:$(free_port)" --keytab "$tmp/none.keytab" \
        --accounts "$tmp/accounts" >"$tmp/bad.log" 2>&1; then
        say "FAIL: perflibd started with a missing keytab"
        rc=1
elif grep -q "Kerberos: cannot accept with the keytab $tmp/none.keytab" "$tmp/bad.log"; then
        say "PASS: a missing keytab stops perflibd with a clear error"
else
        say "FAIL: no clear error for a missing keytab:"
        sed 's/^/    /' "$tmp/bad.log"
        rc=1
fi

# The principal user@PERFLIB.TEST is the account "user" (our own realm).
echo 'Not-used-by-kerberos-1' | "$passwd" -f "$tmp/accounts" "$KRB5_TEST_USER" >/dev/null || exit 1
printf '[global]\nrealm = %s\nworkgroup = PERFLIB\n' "$KRB5_TEST_REALM" >"$tmp/smb.conf"
export SMB_CONF_PATH="$tmp/smb.conf" SERVER=127.0.0.1 TARGET_HOSTNAME="$KRB5_TEST_HOST" \
       DOMAIN=PERFLIB REALM="$KRB5_TEST_REALM" USERNAME="$KRB5_TEST_USER" \
       PASSWORD="$KRB5_TEST_PASSWORD" PERFLIB_COUNTERSETS=3

"$provider" >"$tmp/provider.log" 2>&1 &
provider_pid=$!
if ! wait_for 'grep -q "interop-provider: ready" "$tmp/provider.log"' 100; then
        say "FAIL: interop-provider did not start"
        exit 1
fi
PERFLIB_PORT=$(free_port)
export PERFLIB_PORT
start_perflibd_tcp "$PERFLIB_PORT" --keytab "$KRB5_KTNAME" || exit 1

(cd "$here/interop" && timeout 300 "$PY" samba_raw.py PerflibKrb5) || rc=1
if grep -q "127\.0\.0\.1 logged on as $KRB5_TEST_USER (Kerberos)" "$tmp/perflibd.log"; then
        say "PASS: the log names the principal as the account"
else
        say "FAIL: no Kerberos logon of $KRB5_TEST_USER in the log"
        rc=1
fi

# The account goes: Kerberos still vouches for the principal, perflibd refuses it.
"$passwd" -f "$tmp/accounts" -x "$KRB5_TEST_USER" >/dev/null || rc=1
(cd "$here/interop" && PERFLIB_KRB5_NO_ACCOUNT=1 timeout 60 "$PY" samba_raw.py \
        PerflibKrb5.test_not_an_account) || rc=1

if ! kill -0 "$perflibd_pid" 2>/dev/null; then
        say "FAIL: perflibd died"
        rc=1
fi
if [ "$rc" != 0 ]; then
        say "perflibd's log:"
        sed 's/^/    /' "$tmp/perflibd.log"
        say "FAIL"
else
        say "PASS"
fi
exit "$rc"
