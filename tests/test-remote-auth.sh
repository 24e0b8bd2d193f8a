#!/bin/sh
# SPDX-License-Identifier: MIT
#
# perflibd over TCP serves only clients that log on at packet privacy
# (MS-PCQ 2.1): tests/interop/auth_attacks.py, with impacket (a client
# nobody here wrote), tries every refusal the issue lists (no
# authentication, PKT_CONNECT, PKT_INTEGRITY, a wrong password, an unknown
# user, a flipped byte in a sealed stub, a truncated verifier, a lying
# auth_length, a replay), each followed by a good client; then the log
# must name the peer of each failure and slow their answers (100 ms, then
# 200 ms), and the accounts file must be reread when perflib-passwd
# changes it while perflibd runs.
#
# Exit 77 (SKIP) when /usr/bin/python3 has no impacket.
#
# wait_for's commands are single-quoted on purpose (evaluated on each try):
# shellcheck disable=SC2016
set -u

PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
build="${top_builddir:-$(pwd)/..}"
perflibd="$build/server-glue/perflibd"
passwd="$build/server-glue/perflib-passwd"
attacks="$here/interop/auth_attacks.py"

# shellcheck source=test-lib.sh disable=SC1091
. "$here/test-lib.sh"

say() { printf '%s\n' "test-remote-auth: $*"; }

if ! "$PY" -c 'import impacket.dcerpc.v5.rpcrt' 2>/dev/null; then
        say "SKIP: $PY has no impacket (Debian: apt install python3-impacket)"
        exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/remote-auth.XXXXXX") || exit 1
chmod 755 "$tmp" || exit 1
mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins"
unset PERFLIB_LISTEN_TCP PERFLIB_ACCOUNTS
perflibd_pid=''
# shellcheck disable=SC2317 # (run by the trap)
cleanup() {
        [ -n "$perflibd_pid" ] && kill "$perflibd_pid" 2>/dev/null
        wait 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM


user=alice pass='Right-horse-7'
printf '%s\n' "$pass" | "$passwd" -f "$tmp/accounts" "$user" >/dev/null || exit 1
port=$(free_port)
start_perflibd_tcp "$port" --runtime-dir "$tmp/run" || exit 1

rc=0
(cd "$here/interop" && timeout 300 "$PY" "$attacks" 127.0.0.1 "$port" "$user" "$pass") || rc=1

# What the log must say: each failure with its peer, the answers slowed.
expect() {
        if grep -q -e "$1" "$tmp/perflibd.log"; then
                say "PASS: the log says: $2"
        else
                say "FAIL: the log does not say: $2"
                rc=1
        fi
}
expect 'access denied to 127\.0\.0\.1: wrong password or unknown user (NTLM); answering in 100 ms' \
        'a wrong password, its peer, answered after 100 ms'
expect 'access denied to 127\.0\.0\.1: .*answering in 200 ms' \
        'a second failure from the same peer waits 200 ms'
expect 'refused 127\.0\.0\.1: an unauthenticated bind' 'an unauthenticated bind'
expect 'refused 127\.0\.0\.1: auth level 5' 'PKT_INTEGRITY refused'
expect 'refused 127\.0\.0\.1: auth level 2' 'PKT_CONNECT refused'
expect 'refused 127\.0\.0\.1: a request tampered with or replayed' 'a tampered request'
expect '127\.0\.0\.1 logged on as alice (NTLM)' 'a good logon, with its user'

# The accounts are reread when they change: the old password stops working.
new='Other-horse-8'
printf '%s\n' "$new" | "$passwd" -f "$tmp/accounts" "$user" >/dev/null || rc=1
(cd "$here/interop" && "$PY" "$attacks" 127.0.0.1 "$port" "$user" "$pass" logon)
old_rc=$?
(cd "$here/interop" && "$PY" "$attacks" 127.0.0.1 "$port" "$user" "$new" logon)
new_rc=$?
if [ "$old_rc" = 3 ] && [ "$new_rc" = 0 ]; then
        say "PASS: after perflib-passwd, the old password is denied and the new one served"
else
        say "FAIL: after perflib-passwd: old password $old_rc (want 3), new $new_rc (want 0)"
        rc=1
fi
# A deleted account is gone at once.
"$passwd" -f "$tmp/accounts" -x "$user" >/dev/null || rc=1
(cd "$here/interop" && "$PY" "$attacks" 127.0.0.1 "$port" "$user" "$new" logon)
del_rc=$?
if [ "$del_rc" = 3 ]; then
        say "PASS: a deleted account is denied"
else
        say "FAIL: a deleted account: $del_rc (want 3)"
        rc=1
fi

if ! kill -0 "$perflibd_pid" 2>/dev/null; then
        say "FAIL: perflibd died"
        rc=1
fi
kill "$perflibd_pid" 2>/dev/null
wait "$perflibd_pid"
perflibd_rc=$?
perflibd_pid=
if [ "$perflibd_rc" != 0 ] && [ "$perflibd_rc" != 143 ]; then
        say "FAIL: perflibd exited with $perflibd_rc on SIGTERM"
        rc=1
fi
if [ "$rc" != 0 ]; then
        say "perflibd's log:"
        sed 's/^/    /' "$tmp/perflibd.log"
fi
if [ "$rc" = 0 ]; then
        say "PASS"
else
        say "FAIL"
fi
exit "$rc"
