#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Interop: impacket, a DCE/RPC client nobody here wrote, talks PerflibV2
# ([MS-PCQ]) to a real perflibd over TCP on 127.0.0.1, logged on with NTLM
# at packet privacy as MS-PCQ 2.1 requires, and tshark, given the password,
# must decrypt and decode the capture as PerflibV2 with no malformed packet.
#
#   1. tests/interop/selftest.py: our impacket NDR definitions against NDR
#      worked out by hand from the IDL (no server needed);
#   2. interop-provider publishes known values; perflibd serves them from
#      temporary runtime, registry and plugin directories;
#   3. tests/interop/pcq_session.py runs every opnum and checks the answers,
#      while dumpcap captures on lo; then (not captured: they are malformed
#      on purpose) requests that must be refused, and a query whose provider
#      is SIGKILLed midway;
#   4. the capture of the session is decoded by tshark.
#
# Exit 77 (SKIP) when /usr/bin/python3 has no impacket or perflibd is not
# built.  Capturing needs CAP_NET_RAW; without it step 4 is skipped with a
# message, the rest still counts.
#
# wait_for's commands are single-quoted on purpose (evaluated on each try):
# shellcheck disable=SC2016
set -u

PY=/usr/bin/python3
# No __pycache__ in the source tree (it may be read-only under distcheck).
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
interop="$here/interop"
build="${top_builddir:-$(pwd)/..}"
# INTEROP_PERFLIBD: another server to run instead (interop/mock_perflibd.py
# checks the harness itself).
perflibd="${INTEROP_PERFLIBD:-$build/server-glue/perflibd}"
provider="$build/tests/interop/interop-provider"
passwd="$build/server-glue/perflib-passwd"

# shellcheck source=test-lib.sh disable=SC1091
. "$here/test-lib.sh"

say() { printf '%s\n' "test-interop-impacket: $*"; }

if ! "$PY" -c 'import impacket.dcerpc.v5.rpcrt' 2>/dev/null; then
        say "SKIP: $PY has no impacket (Debian: apt install python3-impacket)"
        exit 77
fi

# 1. Offline: the NDR definitions themselves.
if ! "$PY" "$interop/selftest.py"; then
        say "FAIL: the NDR self-test failed"
        exit 1
fi

if [ ! -x "$perflibd" ]; then
        say "SKIP: $perflibd is not built (the self-test above passed)"
        exit 77
fi
if [ ! -x "$provider" ]; then
        say "FAIL: $provider is not built"
        exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/interop.XXXXXX") || exit 1
# A root perflibd runs plugins as nobody, whose hosts must reach the runtime directory.
chmod 755 "$tmp" || exit 1
mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins"
export PERFLIB_RUNTIME_DIR="$tmp/run" PERFLIB_REGISTRY_DIR="$tmp/registry" \
       PERFLIB_PLUGIN_DIR="$tmp/plugins"
unset PERFLIB_LISTEN_TCP PERFLIB_ACCOUNTS
# The account the session logs on with.
export PERFLIB_TEST_USER=interop PERFLIB_TEST_PASSWORD='Interop-pass.7'
if [ -z "${INTEROP_PERFLIBD:-}" ]; then
        printf '%s\n' "$PERFLIB_TEST_PASSWORD" |
                "$passwd" -f "$tmp/accounts" "$PERFLIB_TEST_USER" >/dev/null || exit 1
else
        # The stand-in server takes no accounts: it is spoken to without.
        unset PERFLIB_TEST_USER PERFLIB_TEST_PASSWORD
        : >"$tmp/accounts"
fi

provider_pid='' perflibd_pid='' cap_pid=''
# shellcheck disable=SC2317 # (run by the trap)
cleanup() {
        for pid in $cap_pid $perflibd_pid $provider_pid; do
                kill "$pid" 2>/dev/null
        done
        wait 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM


port=$(free_port)

# 2. The provider, then the server.
"$provider" >"$tmp/provider.log" 2>&1 &
provider_pid=$!
if ! wait_for 'grep -q "interop-provider: ready" "$tmp/provider.log"' 100; then
        say "FAIL: interop-provider did not start:"
        cat "$tmp/provider.log"
        exit 1
fi

start_perflibd_tcp "$port" --runtime-dir "$tmp/run" || exit 1

# 3 and 4: capture the session.
cap="$tmp/session.pcapng"
captured=0
if command -v dumpcap >/dev/null 2>&1 && command -v tshark >/dev/null 2>&1; then
        dumpcap -q -i lo -f "tcp port $port" -w "$cap" >"$tmp/dumpcap.log" 2>&1 &
        cap_pid=$!
        if wait_for 'grep -q "Capturing on" "$tmp/dumpcap.log" || ! kill -0 $cap_pid 2>/dev/null' 100 &&
           kill -0 "$cap_pid" 2>/dev/null; then
                captured=1
        else
                say "capture skipped: dumpcap cannot capture on lo here (needs CAP_NET_RAW):"
                sed 's/^/    /' "$tmp/dumpcap.log"
                cap_pid=
        fi
else
        say "capture skipped: dumpcap/tshark not installed"
fi

rc=0
say "session: $PY pcq_session.py 127.0.0.1 $port"
# Bounded: a server that stops answering must fail the test, not hang it.
(cd "$interop" && timeout 300 "$PY" pcq_session.py 127.0.0.1 "$port") || rc=1
if [ "$captured" = 1 ]; then
        # Give dumpcap a moment to write the last segments, then stop it.
        sleep 0.5
        kill -INT "$cap_pid" 2>/dev/null
        wait "$cap_pid" 2>/dev/null
        cap_pid=
fi
(cd "$interop" && timeout 120 "$PY" pcq_session.py 127.0.0.1 "$port" robustness) || rc=1
# Then the provider dies mid-query (SIGKILL); the server must carry on.
if [ -n "${INTEROP_PERFLIBD:-}" ]; then
        say "provider-gone phase skipped: $perflibd does not watch providers"
        kill -KILL "$provider_pid"
else
        say "provider gone: $PY pcq_session.py 127.0.0.1 $port provider-gone $provider_pid"
        (cd "$interop" && timeout 60 "$PY" pcq_session.py 127.0.0.1 "$port" \
                provider-gone "$provider_pid") || rc=1
fi

if ! kill -0 "$perflibd_pid" 2>/dev/null; then
        say "FAIL: perflibd died during the session"
        rc=1
fi
# SIGTERM must stop perflibd cleanly: exit 0 (or death by that very signal,
# which systemd also counts as clean); anything else, e.g. a sanitizer's
# report, fails the test.  The provider was killed above (SIGKILL, 137).
kill "$perflibd_pid" 2>/dev/null
wait "$perflibd_pid"
perflibd_rc=$?
perflibd_pid=
kill "$provider_pid" 2>/dev/null
wait "$provider_pid"
provider_rc=$?
provider_pid=
say "perflibd exited with status $perflibd_rc on SIGTERM"
if [ "$perflibd_rc" != 0 ] && [ "$perflibd_rc" != 143 ]; then
        say "FAIL: perflibd's exit status is not a clean stop"
        rc=1
fi
if [ "$provider_rc" != 137 ]; then
        say "FAIL: interop-provider exited with status $provider_rc, not by SIGKILL:"
        sed 's/^/    /' "$tmp/provider.log"
        rc=1
fi
if [ "$rc" != 0 ]; then
        say "perflibd's log:"
        sed 's/^/    /' "$tmp/perflibd.log"
fi

if [ "$captured" = 1 ]; then
        decode="-d tcp.port==$port,dcerpc"
        # Given the password, tshark decrypts the sealed stubs (none for the stand-in).
        [ -n "${PERFLIB_TEST_PASSWORD:-}" ] &&
                decode="$decode -o ntlmssp.nt_password:$PERFLIB_TEST_PASSWORD"
        # shellcheck disable=SC2086
        tshark -r "$cap" $decode -V >"$tmp/decoded.txt" 2>&1
        frames=$(grep -c '^Frame [0-9]' "$tmp/decoded.txt")
        bad=$(grep -c -e 'Malformed' -e 'Expert Info (Error' "$tmp/decoded.txt")
        if [ "$bad" != 0 ]; then
                say "FAIL: tshark finds $bad malformed/error item(s) in $frames frames:"
                # shellcheck disable=SC2086
                tshark -r "$cap" $decode -Y '_ws.malformed || _ws.expert.severity >= error' \
                        -O dcerpc 2>/dev/null | head -80
                rc=1
        else
                say "PASS: tshark decodes $frames frames with nothing malformed"
        fi
        if [ -n "${PERFLIB_TEST_PASSWORD:-}" ]; then
                # Sealed: only the password lets tshark read the stubs.
                decrypted=$(grep -c 'Decrypted stub data' "$tmp/decoded.txt")
                if [ "$decrypted" -gt 0 ]; then
                        say "PASS: tshark, given the password, decrypts $decrypted sealed stubs"
                else
                        say "FAIL: tshark decrypts no sealed stub with the password"
                        rc=1
                fi
        fi
        # shellcheck disable=SC2086
        tshark -r "$cap" $decode -Y 'dcerpc.cn_bind_to_uuid == da5a86c5-12c2-4943-ab30-7f74a813d853' \
                -T fields -e frame.number >"$tmp/bind.txt" 2>&1
        if [ -s "$tmp/bind.txt" ]; then
                say "PASS: tshark sees the bind to PerflibV2 da5a86c5-12c2-4943-ab30-7f74a813d853"
        else
                say "FAIL: tshark sees no bind to the PerflibV2 interface"
                rc=1
        fi
        # shellcheck disable=SC2086
        tshark -r "$cap" $decode -Y 'dcerpc.pkt_type == 0' -T fields -e dcerpc.opnum \
                2>/dev/null | sort -n | uniq -c >"$tmp/opnums.txt"
        for op in 0 1 2 3 4 5 6 7; do
                if awk -v op="$op" '$2 == op { found = 1 } END { exit !found }' "$tmp/opnums.txt"; then
                        say "PASS: tshark sees DCE/RPC requests for opnum $op"
                else
                        say "FAIL: tshark sees no DCE/RPC request for opnum $op"
                        rc=1
                fi
        done
        # shellcheck disable=SC2086
        responses=$(tshark -r "$cap" $decode -Y 'dcerpc.pkt_type == 2' 2>/dev/null | wc -l)
        # shellcheck disable=SC2086
        faults=$(tshark -r "$cap" $decode -Y 'dcerpc.pkt_type == 3' 2>/dev/null | wc -l)
        say "capture: $responses response(s), $faults fault(s) (expected: the closed handle)"
fi

if [ "$rc" = 0 ]; then
        say "PASS"
else
        say "FAIL"
fi
exit "$rc"
