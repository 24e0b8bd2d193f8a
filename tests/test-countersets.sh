#!/bin/sh
# SPDX-License-Identifier: MIT
#
# More countersets than the IDL's EnumerateCounterSet can carry: a manifest
# of N countersets (300 by default, 4,096 with PERFLIB_LONG_TESTS=1),
# installed with lodctr into a private registry and served by a real
# perflibd.  Our client enumerates every one of them through perflibd's
# documented extension of dwInSize (perflibd(8)), typeperf lists and
# browses the last one, and a client that keeps to the IDL's range(0, 256)
# (impacket, when installed) is told ERROR_NOT_ENOUGH_MEMORY with the
# count, as Windows would answer it.
set -u
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
tp="$top_builddir/tools/typeperf"
PY=${PYTHON:-python3}
n=300
[ "${PERFLIB_LONG_TESTS:-0}" = 1 ] && n=4096
tmp=$(mktemp -d "${PERFLIB_TEST_TMPDIR:-${TMPDIR:-/tmp}}/countersets.XXXXXX")
# A root perflibd runs plugins as nobody, whose hosts must reach the runtime directory.
chmod 755 "$tmp"
perflibd_pid=''
failures=0

# shellcheck disable=SC2317 # (run by the trap)
cleanup() {
        [ -n "$perflibd_pid" ] && kill "$perflibd_pid" 2>/dev/null
        wait 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "PASS: $*"; }

# Waits up to $2 tenths of a second for the command string $1 to succeed.
wait_for() {
        i=0
        while ! eval "$1"; do
                i=$((i + 1))
                [ "$i" -ge "$2" ] && return 1
                sleep 0.1
        done
}

# The manifest: countersets "Many 0" .. "Many N-1", one counter each, with
# GUIDs that differ in their last twelve hex digits.
manifest() {
        cat <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events">
  <instrumentation>
    <counters xmlns="http://schemas.microsoft.com/win/2005/12/counters" schemaVersion="2.0">
      <provider providerName="ManySets" symbol="ManySets" providerType="userMode"
                applicationIdentity="many.exe"
                providerGuid="{5e1f0a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b}">
EOF
        i=0
        while [ "$i" -lt "$n" ]; do
                printf '        <counterSet guid="{7d3e9c10-2b4a-4c6d-9e8f-%012x}" symbol="Many%d"\n' "$i" "$i"
                printf '                    uri="Test.Many.Set%d" name="Many %d" description="Set %d."\n' "$i" "$i" "$i"
                printf '                    instances="single">\n'
                printf '          <counter id="1" symbol="MANY%d_COUNT" uri="Test.Many.Set%d.Count"\n' "$i" "$i"
                printf '                   name="Count" description="A count." type="perf_counter_rawcount"\n'
                printf '                   detailLevel="standard"/>\n'
                printf '        </counterSet>\n'
                i=$((i + 1))
        done
        cat <<'EOF'
      </provider>
    </counters>
  </instrumentation>
</instrumentationManifest>
EOF
}

manifest >"$tmp/many.man"
mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins"
if ! "$top_builddir/server-glue/lodctr" --registry-dir "$tmp/registry" "/M:$tmp/many.man" \
        >"$tmp/lodctr.log" 2>&1; then
        echo "FAIL: lodctr refused a manifest of $n countersets:"
        cat "$tmp/lodctr.log"
        exit 1
fi

port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export PERFLIB_RUNTIME_DIR="$tmp/run"
unset PERFLIB_SOCKET PERFLIB_LISTEN_TCP PERFLIB_REGISTRY_DIR PERFLIB_PLUGIN_DIR PERFLIB_ACCOUNTS
# impacket logs on over TCP (MS-PCQ 2.1) as this account.
echo 'Many-countersets-9' | "$top_builddir/server-glue/perflib-passwd" -f "$tmp/accounts" many \
        >/dev/null || fail "perflib-passwd"
"$top_builddir/server-glue/perflibd" --registry-dir "$tmp/registry" --plugin-dir "$tmp/plugins" \
        --listen-tcp "127.0.0.1:$port" --accounts "$tmp/accounts" >"$tmp/perflibd.log" 2>&1 &
perflibd_pid=$!
if ! wait_for '"$tp" -q "Many 0" >/dev/null 2>&1' 100; then
        echo "FAIL: typeperf never reached perflibd:"
        cat "$tmp/perflibd.log"
        exit 1
fi

# Every counterset, each once: -q lists every counter path there is.
"$tp" -q >"$tmp/all" 2>"$tmp/err" || fail "typeperf -q: $(cat "$tmp/err")"
got=$(grep -c '^\\Many [0-9]*\\Count$' "$tmp/all")
if [ "$got" -eq "$n" ]; then
        pass "typeperf -q lists all $n countersets"
else
        fail "typeperf -q lists $got of the $n countersets"
fi
last=$((n - 1))
if "$tp" -q "Many $last" >"$tmp/one" 2>"$tmp/err" && grep -qxF "\\Many $last\\Count" "$tmp/one"; then
        pass "the last counterset, Many $last, is browsed by name"
else
        fail "typeperf -q 'Many $last': $(cat "$tmp/one" "$tmp/err")"
fi

# A client that keeps to the IDL: dwInSize 256 is answered with the count.
if /usr/bin/python3 -c 'import impacket' 2>/dev/null; then
        if (cd "$top_srcdir/tests/interop" && /usr/bin/python3 - "$port" "$n" <<'EOF'
import sys
from impacket.dcerpc.v5 import transport
from impacket.dcerpc.v5.rpcrt import RPC_C_AUTHN_LEVEL_PKT_PRIVACY, RPC_C_AUTHN_WINNT
import perflibv2 as p

port, n = int(sys.argv[1]), int(sys.argv[2])
t = transport.DCERPCTransportFactory('ncacn_ip_tcp:127.0.0.1[%d]' % port)
t.set_connect_timeout(10)
t.set_credentials('many', 'Many-countersets-9', 'PERFLIB')
dce = t.get_dce_rpc()
dce.set_auth_type(RPC_C_AUTHN_WINNT)
dce.set_auth_level(RPC_C_AUTHN_LEVEL_PKT_PRIVACY)
dce.connect()
dce.bind(p.MSRPC_UUID_PERFLIBV2)
r = p.PerflibV2EnumerateCounterSet()
r['szMachine'] = '\0'
r['dwInSize'] = 256
r = dce.request(r, checkError=False)
ok = r['ErrorCode'] == p.ERROR_NOT_ENOUGH_MEMORY and r['pdwRtnSize'] == n and r['pdwOutSize'] == 0
print('ErrorCode 0x%x pdwRtnSize %d pdwOutSize %d' % (r['ErrorCode'], r['pdwRtnSize'], r['pdwOutSize']))
sys.exit(0 if ok else 1)
EOF
        ) >"$tmp/idl.log" 2>&1; then
                pass "an IDL-bound client (impacket, dwInSize 256) gets ERROR_NOT_ENOUGH_MEMORY and $n"
        else
                fail "impacket with dwInSize 256: $(cat "$tmp/idl.log")"
        fi
else
        echo "note: no impacket for /usr/bin/python3; the IDL-bound client check is skipped"
fi

if [ "$failures" -ne 0 ]; then
        echo "perflibd's log:"
        cat "$tmp/perflibd.log"
        exit 1
fi
exit 0
