#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Interop: Samba's raw DCE/RPC test harness (python3-samba's
# samba.tests.dcerpc.raw_testcase, with Samba's gensec doing NTLMSSP and
# SPNEGO) binds to a real perflibd over TCP at packet privacy and calls
# EnumerateCounterSet; see tests/interop/samba_raw.py for what each case
# checks.  interop-provider publishes 3 countersets for it to count.
#
# Exit 77 (SKIP) when /usr/bin/python3 has no samba or impacket module.
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

say() { printf '%s\n' "test-samba-raw: $*"; }

if ! "$PY" -c 'import samba.tests.dcerpc.raw_testcase, impacket.ntlm' 2>/dev/null; then
        say "SKIP: $PY lacks samba or impacket (Debian: apt install python3-samba python3-impacket)"
        exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/samba-raw.XXXXXX") || exit 1
chmod 755 "$tmp" || exit 1
mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins"
export PERFLIB_RUNTIME_DIR="$tmp/run"
unset PERFLIB_LISTEN_TCP PERFLIB_ACCOUNTS PERFLIB_REGISTRY_DIR PERFLIB_PLUGIN_DIR
provider_pid='' perflibd_pid=''
# shellcheck disable=SC2317 # (run by the trap)
cleanup() {
        for pid in $perflibd_pid $provider_pid; do
                kill "$pid" 2>/dev/null
        done
        wait 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

export SERVER=127.0.0.1 DOMAIN=PERFLIB REALM=PERFLIB.TEST USERNAME=samba PASSWORD='Samba-raw-5'
export PERFLIB_COUNTERSETS=3
printf '%s\n' "$PASSWORD" | "$passwd" -f "$tmp/accounts" "$USERNAME" >/dev/null || exit 1
# Samba's loadparm wants a configuration file; its defaults are what we need.
printf '[global]\n' >"$tmp/smb.conf"
export SMB_CONF_PATH="$tmp/smb.conf"

"$provider" >"$tmp/provider.log" 2>&1 &
provider_pid=$!
if ! wait_for 'grep -q "interop-provider: ready" "$tmp/provider.log"' 100; then
        say "FAIL: interop-provider did not start:"
        cat "$tmp/provider.log"
        exit 1
fi
PERFLIB_PORT=$(free_port)
export PERFLIB_PORT
start_perflibd_tcp "$PERFLIB_PORT" || exit 1

rc=0
(cd "$here/interop" && timeout 300 "$PY" samba_raw.py) || rc=1
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
