#!/bin/sh
# SPDX-License-Identifier: MIT
#
# MS-PCQ's own transport: PerflibV2 on \PIPE\winreg over SMB, served by
# perflibd through Debian's smbd (issue 21).  smbd runs on loopback as this
# test's own (a private smb.conf, tdbsam, every directory in a temporary
# one, a free port, external_rpc_pipe:socket_dir pointed at perflibd's
# --samba-np-dir); a throw-away unix user gets the same password in
# Samba's passdb and in perflibd's accounts file.  Then impacket's SMB
# client opens \PIPE\winreg and:
#
#   1. tests/interop/pcq_session.py walks the eight operations over the
#      pipe, logged on inside with NTLM at packet privacy, and checks every
#      answer against what interop-provider publishes;
#   2. tests/interop/samba_np.py reads \Memory\Available Bytes (the build's
#      memory provider) against /proc/meminfo, and sees PKT_INTEGRITY, no
#      DCE/RPC authentication, a wrong inner password and an inner user
#      other than the SMB user each refused, a good client served after
#      each; and over MS-RRP on the same pipe (impacket's registry client)
#      finds the same counter in HKEY_PERFORMANCE_DATA's "Global" by the
#      names of its "Counter 009";
#   2b. Samba's raw DCE/RPC harness (samba_raw.py PerflibRawPipe) binds
#      over the pipe with Samba's own SMB client, NTLMSSP and SPNEGO, checks
#      our binds and signatures, calls sealed, and sees the refusals;
#   3. perflibd's log names the refused SMB user;
#   4. with --samba-group, the SMB user is refused unless one of the groups
#      is among the unix groups smbd hands over (perflibd restarted);
#   5. the connection cap per address counts the SMB client's address
#      (--max-clients-per-user=1);
#   6. with --samba-winbind (winbindd of the test's own smb.conf), an SMB
#      user missing from the accounts file logs on inside with Samba's
#      password, and not without the option nor with a wrong password;
#      skipped when the machine runs a winbindd of its own;
#   7. with --samba-winreg, an MS-RRP pipe reaches Samba's own registry
#      (samba-dcerpcd started by the test), PerflibV2 still perflibd's;
#   8. Kerberos inside the pipe (a realm of the test's own, perflibd with
#      its keytab), the principal being the SMB user;
#   9. socket activation: systemd-socket-activate holds the pipe's socket,
#      and smbd's first open of the pipe starts perflibd, which serves it.
#
# Exit 77 (SKIP) when not root (smbd and useradd need it), or smbd,
# impacket or the build's programs are missing.
#
# wait_for's commands are single-quoted on purpose (evaluated on each try):
# shellcheck disable=SC2016
set -u

PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
interop="$here/interop"
build=$(cd "${top_builddir:-$(pwd)/..}" && pwd) || exit 1
perflibd="$build/server-glue/perflibd"
passwd="$build/server-glue/perflib-passwd"
provider="$build/tests/interop/interop-provider"
memory="$build/providers/memory/.libs/memory.so"

# shellcheck source=test-lib.sh disable=SC1091
. "$here/test-lib.sh"

say() { printf '%s\n' "test-samba-np: $*"; }
skip() { say "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "not root (smbd and a throw-away user need it)"
smbd=$(command -v smbd || echo /usr/sbin/smbd)
[ -x "$smbd" ] || skip "no smbd (Debian: apt install samba)"
command -v smbpasswd >/dev/null 2>&1 || skip "no smbpasswd (Debian: apt install samba)"
"$PY" -c 'import impacket.smbconnection' 2>/dev/null ||
        skip "$PY has no impacket (Debian: apt install python3-impacket)"
for f in "$perflibd" "$passwd" "$provider" "$memory"; do
        [ -x "$f" ] || [ -f "$f" ] || skip "$f is not built"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/samba-np.XXXXXX") || exit 1
# A root perflibd runs plugins as nobody, whose hosts must reach the runtime directory.
chmod 755 "$tmp" || exit 1
mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins" "$tmp/np-root" "$tmp/samba/private" \
        "$tmp/samba/state" "$tmp/samba/cache" "$tmp/samba/lock" "$tmp/samba/pid" \
        "$tmp/samba/ncalrpc" "$tmp/samba/log" || exit 1
ln -s "$memory" "$tmp/plugins/memory.so" || exit 1
unset PERFLIB_LISTEN_TCP PERFLIB_ACCOUNTS PERFLIB_SAMBA_NP_DIR
export PERFLIB_RUNTIME_DIR="$tmp/run"
export PERFLIB_PLUGIN_HOST="${PERFLIB_PLUGIN_HOST:-$build/server-glue/plugins/perflib-plugin-host}"

# The SMB user (unix, passdb, accounts), and an account with no SMB side.
user="plnp$$" pass='Pipe-pass.21' other=otheruser other_pass='Other-pass.21'
made_user=''
smbd_pid='' perflibd_pid='' provider_pid='' winbindd_pid='' dcerpcd_pid=''
# shellcheck disable=SC2317 # (run by the trap)
cleanup() {
        for pid in $smbd_pid $perflibd_pid $provider_pid $winbindd_pid $dcerpcd_pid; do
                kill "$pid" 2>/dev/null
        done
        wait 2>/dev/null
        # Our winbindd's socket is at the machine's default place: not left behind.
        [ -n "$winbindd_pid" ] && rm -f /run/samba/winbindd/pipe
        # smbd's children serving the user go a moment after it.
        if [ -n "$made_user" ]; then
                wait_for '! pgrep -u "$user" >/dev/null 2>&1' 50
                userdel "$user" 2>/dev/null || userdel -f "$user"
        fi
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

useradd -M -N -d /nonexistent -s /usr/sbin/nologin "$user" || exit 1
made_user=1
port=$(free_port)
# Samba's own SMB client (2b) connects to port 445 only: smbd listens there
# too, on loopback, when nothing else does.
smb_ports=$port
if ! port_open 445; then
        smb_ports="$port 445"
fi
conf="$tmp/samba/smb.conf"
cat >"$conf" <<EOF || exit 1
[global]
  server role = standalone server
  workgroup = PERFLIBTEST
  netbios name = PERFLIBNP
  passdb backend = tdbsam:$tmp/samba/private/passdb.tdb
  private dir = $tmp/samba/private
  binddns dir = $tmp/samba/private
  state directory = $tmp/samba/state
  cache directory = $tmp/samba/cache
  lock directory = $tmp/samba/lock
  pid directory = $tmp/samba/pid
  ncalrpc dir = $tmp/samba/ncalrpc
  log file = $tmp/samba/log/log.%m
  log level = 1
  smb ports = $smb_ports
  interfaces = 127.0.0.1
  bind interfaces only = yes
  disable netbios = yes
  load printers = no
  printcap name = /dev/null
  external_rpc_pipe:socket_dir = $tmp/np-root
  rpc start on demand helpers = no
EOF
printf '%s\n%s\n' "$pass" "$pass" | smbpasswd -c "$conf" -a -s "$user" >"$tmp/smbpasswd.log" 2>&1 || {
        say "FAIL: smbpasswd:"; cat "$tmp/smbpasswd.log"; exit 1; }
printf '%s\n' "$pass" | "$passwd" -f "$tmp/accounts" "$user" >/dev/null || exit 1
printf '%s\n' "$other_pass" | "$passwd" -f "$tmp/accounts" "$other" >/dev/null || exit 1

"$provider" >"$tmp/provider.log" 2>&1 &
provider_pid=$!
if ! wait_for 'grep -q "interop-provider: ready" "$tmp/provider.log"' 100; then
        say "FAIL: interop-provider did not start:"; cat "$tmp/provider.log"; exit 1
fi

# Starts perflibd serving the pipe, with more options ($@); its log is appended to.
start_perflibd() {
        "$perflibd" -r "$tmp/run" -R "$tmp/registry" -p "$tmp/plugins" --accounts "$tmp/accounts" \
                --samba-np-dir "$tmp/np-root" "$@" >>"$tmp/perflibd.log" 2>&1 &
        perflibd_pid=$!
        if ! wait_for '[ -S "$tmp/np-root/np/winreg" ] || ! kill -0 $perflibd_pid 2>/dev/null' 100 ||
           ! kill -0 "$perflibd_pid" 2>/dev/null; then
                say "FAIL: perflibd did not listen on $tmp/np-root/np/winreg:"
                cat "$tmp/perflibd.log"
                exit 1
        fi
}

stop_perflibd() {
        kill "$perflibd_pid" && wait "$perflibd_pid"
        perflibd_pid=''
}

start_perflibd
rc=0
mode=$(stat -c '%a %U' "$tmp/np-root/np/winreg")
if [ "$mode" = "600 root" ]; then
        say "PASS: the pipe's socket is root's, mode 0600"
else
        say "FAIL: the pipe's socket is $mode, not 600 root"; rc=1
fi

"$smbd" --foreground --configfile="$conf" >"$tmp/smbd.log" 2>&1 &
smbd_pid=$!
if ! wait_for 'port_open $port || ! kill -0 $smbd_pid 2>/dev/null' 100 ||
   ! kill -0 "$smbd_pid" 2>/dev/null; then
        say "FAIL: smbd did not listen on 127.0.0.1:$port:"; cat "$tmp/smbd.log"; exit 1
fi

say "session: pcq_session.py over \\PIPE\\winreg of 127.0.0.1:$port as $user"
(cd "$interop" && PERFLIB_TEST_PIPE=1 PERFLIB_TEST_USER="$user" PERFLIB_TEST_PASSWORD="$pass" \
        timeout 120 "$PY" pcq_session.py 127.0.0.1 "$port") || rc=1
(cd "$interop" && timeout 120 "$PY" samba_np.py 127.0.0.1 "$port" "$user" "$pass" \
        "$other" "$other_pass") || rc=1

# 2b. Samba's own client and raw DCE/RPC harness over the pipe: NTLMSSP and
#     SPNEGO binds (our bind_ack and signatures checked), sealed calls, and
#     the refusals, with libsmb as the SMB transport.
if [ "$smb_ports" = "$port" ]; then
        say "Samba's raw DCE/RPC harness skipped: port 445 of 127.0.0.1 is taken, and Samba's client knows no other"
elif "$PY" -c 'import samba.tests.dcerpc.raw_testcase' 2>/dev/null; then
        (cd "$interop" && PERFLIB_PIPE=1 SERVER=127.0.0.1 SMB_CONF_PATH="$conf" \
                DOMAIN=PERFLIBNP REALM=PERFLIBNP.TEST USERNAME="$user" PASSWORD="$pass" \
                PERFLIB_COUNTERSETS=4 \
                timeout 300 "$PY" samba_raw.py PerflibRawPipe) >"$tmp/raw.log" 2>&1
        if [ $? = 0 ] && grep -q '^OK' "$tmp/raw.log"; then
                say "PASS: Samba's raw DCE/RPC harness over the pipe: $(grep -c ' ok$' "$tmp/raw.log") cases"
        else
                say "FAIL: Samba's raw DCE/RPC harness over the pipe:"; cat "$tmp/raw.log"; rc=1
        fi
else
        say "Samba's raw DCE/RPC harness skipped: $PY has no samba module (apt install python3-samba)"
fi

if grep -q "refused the SMB user $user from 127\.0\.0\.1: it logged on to the pipe as $other" \
        "$tmp/perflibd.log"; then
        say "PASS: the log names the SMB user and the other inner user"
else
        say "FAIL: the log does not name the SMB user refused"; rc=1
fi
# 4. --samba-group: the user's groups (as smbd hands them over) decide.
group=$(id -gn "$user")
logon() {
        (cd "$interop" && timeout 60 "$PY" samba_np.py 127.0.0.1 "$port" "$user" "$pass" logon)
}
stop_perflibd
start_perflibd --samba-group=root
logon
st=$?
if [ "$st" = 3 ]; then
        say "PASS: --samba-group=root: the SMB user $user (group $group) is denied"
else
        say "FAIL: --samba-group=root: the SMB user $user logged on with status $st, not 3"; rc=1
fi
stop_perflibd
start_perflibd --samba-group=root --samba-group="$group"
if logon; then
        say "PASS: --samba-group=root --samba-group=$group: the SMB user is served"
else
        say "FAIL: --samba-group=root --samba-group=$group: the SMB user is not served"; rc=1
fi
if grep -q "refused the SMB user $user (uid [0-9]*) from 127\.0\.0\.1: in none of the --samba-group groups" \
        "$tmp/perflibd.log"; then
        say "PASS: the log names the SMB user outside the groups"
else
        say "FAIL: the log does not name the SMB user outside the groups"; rc=1
fi

# 5. One connection per address: smbd is root, but its clients get the caps.
stop_perflibd
start_perflibd --max-clients-per-user=1
(cd "$interop" && timeout 60 "$PY" samba_np.py 127.0.0.1 "$port" "$user" "$pass" cap-1) || rc=1
if grep -q "refusing a connection of 127\.0\.0\.1: it holds 1 already" "$tmp/perflibd.log"; then
        say "PASS: the log names the SMB client's address over its cap"
else
        say "FAIL: the log does not name the SMB client's address over its cap"; rc=1
fi

# 6. --samba-winbind: a Samba user not in the accounts file logs on inside
#    with the password Samba holds, checked by winbindd (ours, on this
#    smb.conf; libwbclient finds it at the machine's default socket).
printf '%s\n' "$other_pass" | "$passwd" -f "$tmp/accounts-other" "$other" >/dev/null || exit 1
winbindd=$(command -v winbindd || echo /usr/sbin/winbindd)
if [ ! -x "$winbindd" ]; then
        say "winbind skipped: no winbindd (apt install winbind)"
elif command -v wbinfo >/dev/null && wbinfo -p >/dev/null 2>&1; then
        say "winbind skipped: the machine runs a winbindd of its own, which this test must not replace"
else
        "$winbindd" --foreground --configfile="$conf" >"$tmp/winbindd.log" 2>&1 &
        winbindd_pid=$!
        wait_for 'wbinfo -p >/dev/null 2>&1 || ! kill -0 $winbindd_pid 2>/dev/null' 100
        stop_perflibd
        start_perflibd --accounts "$tmp/accounts-other"
        logon
        st=$?
        if [ "$st" = 3 ]; then
                say "PASS: an SMB user missing from the accounts file is denied without --samba-winbind"
        else
                say "FAIL: an SMB user missing from the accounts file logged on with status $st"; rc=1
        fi
        stop_perflibd
        start_perflibd --accounts "$tmp/accounts-other" --samba-winbind
        if logon; then
                say "PASS: --samba-winbind: the SMB user logs on with Samba's password"
        else
                say "FAIL: --samba-winbind: the SMB user is not served"; rc=1
                cat "$tmp/winbindd.log"
        fi
        (cd "$interop" && timeout 60 "$PY" samba_np.py 127.0.0.1 "$port" "$user" "$pass" logon-wrong)
        st=$?
        if [ "$st" = 3 ]; then
                say "PASS: --samba-winbind: a wrong inner password is denied"
        else
                say "FAIL: --samba-winbind: a wrong inner password got status $st, not 3"; rc=1
        fi
        kill "$winbindd_pid" && wait "$winbindd_pid"
        winbindd_pid=''
        rm -f /run/samba/winbindd/pipe
fi

# 7. --samba-winreg: a pipe that binds MS-RRP first goes to Samba's own
#    winreg server (samba-dcerpcd of this smb.conf, its sockets in its
#    ncalrpc dir), handshake replayed; PerflibV2 stays perflibd's.
dcerpcd=/usr/libexec/samba/samba-dcerpcd
if [ ! -x "$dcerpcd" ]; then
        say "--samba-winreg skipped: no $dcerpcd"
else
        "$dcerpcd" --foreground --libexec-rpcds --configfile="$conf" >"$tmp/dcerpcd.log" 2>&1 &
        dcerpcd_pid=$!
        wait_for '[ -S "$tmp/samba/ncalrpc/np/winreg" ] || ! kill -0 $dcerpcd_pid 2>/dev/null' 100
        stop_perflibd
        start_perflibd --samba-winreg="$tmp/samba/ncalrpc/np/winreg"
        (cd "$interop" && timeout 60 "$PY" samba_np.py 127.0.0.1 "$port" "$user" "$pass" winreg) ||
                { rc=1; cat "$tmp/dcerpcd.log"; }
        kill "$dcerpcd_pid" && wait "$dcerpcd_pid"
        dcerpcd_pid=''
fi

# 8. Kerberos inside the pipe, with perflibd's --keytab as a domain member
#    would give the host's: a realm of the test's own (krb5-kdc.sh) where
#    the SMB user is a principal; Samba's raw harness over the pipe binds
#    with Kerberos alone and in SPNEGO, its gensec sealing the calls.
. "$here/krb5-kdc.sh"
if [ -n "$(krb5_kdc_find_tools)" ]; then
        say "Kerberos inside the pipe skipped: no MIT KDC tools (apt install krb5-kdc krb5-admin-server)"
elif [ "$smb_ports" = "$port" ] || ! "$PY" -c 'import samba.tests.dcerpc.raw_testcase' 2>/dev/null; then
        say "Kerberos inside the pipe skipped: Samba's harness needs python3-samba and port 445"
else
        # shellcheck disable=SC2034 # (read by krb5_kdc_start)
        KRB5_TEST_USER=$user KRB5_TEST_PASSWORD=$pass
        krb5_kdc_start
        trap 'krb5_kdc_stop; cleanup' EXIT
        stop_perflibd
        start_perflibd --keytab "$KRB5_KTNAME"
        (cd "$interop" && PERFLIB_PIPE=1 SERVER=127.0.0.1 TARGET_HOSTNAME="$KRB5_TEST_HOST" \
                SMB_CONF_PATH="$conf" DOMAIN=PERFLIBNP REALM="$KRB5_TEST_REALM" USERNAME="$user" \
                PASSWORD="$pass" PERFLIB_COUNTERSETS=4 \
                timeout 300 "$PY" samba_raw.py PerflibKrb5Pipe) >"$tmp/raw-krb5.log" 2>&1
        if [ $? = 0 ] && grep -q '^OK' "$tmp/raw-krb5.log"; then
                say "PASS: Kerberos inside the pipe, Samba's harness: $(grep -c ' ok$' "$tmp/raw-krb5.log") cases"
        else
                say "FAIL: Kerberos inside the pipe, Samba's harness:"; cat "$tmp/raw-krb5.log"; rc=1
        fi
        if grep -q "logged on as $user (Kerberos" "$tmp/perflibd.log"; then
                say "PASS: perflibd logged the SMB user on by Kerberos"
        else
                say "FAIL: perflibd's log shows no Kerberos logon of $user"; rc=1
        fi
fi

# 9. The pipe's socket from systemd: the first open starts perflibd.
if command -v systemd-socket-activate >/dev/null 2>&1; then
        stop_perflibd
        set -- -E PERFLIB_PLUGIN_HOST
        [ -n "${PERFLIB_PLUGIN_CONFIG:-}" ] && set -- "$@" -E PERFLIB_PLUGIN_CONFIG
        systemd-socket-activate -l "$tmp/np-root/np/winreg" "$@" "$perflibd" -r "$tmp/run" \
                -R "$tmp/registry" -p "$tmp/plugins" --accounts "$tmp/accounts" \
                --samba-np-dir "$tmp/np-root" >>"$tmp/perflibd.log" 2>&1 &
        perflibd_pid=$!
        wait_for '[ -S "$tmp/np-root/np/winreg" ]' 100
        if logon && grep -q "winreg to Samba on .*(from systemd)" "$tmp/perflibd.log"; then
                say "PASS: socket activation: the first open of the pipe starts perflibd, served"
        else
                say "FAIL: socket activation: the pipe is not served"; rc=1
        fi
else
        say "socket activation skipped: no systemd-socket-activate"
fi

if [ "$rc" != 0 ]; then
        say "perflibd's log:"; sed 's/^/    /' "$tmp/perflibd.log"
        say "smbd's log:"; sed 's/^/    /' "$tmp/smbd.log" "$tmp"/samba/log/log.* 2>/dev/null | tail -40
fi
exit "$rc"
