#!/usr/bin/env bash
# typeperf -s HOST:PORT -u USER against a real perflibd listening on TCP
# with an accounts file (perflib-passwd): the right password reads a live
# counter's known value, with SPNEGO (the default) and NTLM, and with the
# user written USER, DOMAIN\USER and USER@DOMAIN; a wrong password, an
# unknown user and no user at all are each refused with exit status 3 and
# "Access is denied"; the password is asked on the terminal without echo
# when PERFLIB_PASSWORD is unset, and its absence without a terminal is
# said; the Unix socket still serves without credentials.  bash: VAR=value
# before a function call holds for that call alone.
set -u
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
tp="$top_builddir/tools/typeperf"
PY=${PYTHON:-python3}
tmp=$(mktemp -d "${PERFLIB_TEST_TMPDIR:-${TMPDIR:-/tmp}}/typeperf-auth.XXXXXX")
chmod 755 "$tmp"
failures=0
checks=0
provider_pid='' perflibd_pid=''
password='correct horse'

# shellcheck disable=SC2317 # (run by the trap)
cleanup() {
        for pid in $provider_pid $perflibd_pid; do
                kill "$pid" 2>/dev/null
        done
        wait 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if ! "$PY" -c 'import json, pty' 2>/dev/null; then
        echo "SKIP: no $PY to parse the output with"
        exit 77
fi

# fail, run, expect, same, check, values; wait_for, free_port
. "$top_srcdir/tests/typeperf-lib.sh"
# Without a controlling terminal, so that nothing can be asked.
tp_as="setsid -w"

# hit_ratio FILE: FILE is one JSON sample of \Typeperf Test\Hit Ratio, 37.5 (typeperf-provider's)
hit_ratio() {
        check JSON "$1" 1 '\\127.0.0.1:'"$port"'\Typeperf Test\Hit Ratio'
        values "$1" JSON 1 37.5
}

# ---- perflibd on TCP with one account, and a live provider ----
mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins"
export PERFLIB_RUNTIME_DIR="$tmp/run"
unset PERFLIB_SOCKET PERFLIB_LISTEN_TCP PERFLIB_REGISTRY_DIR PERFLIB_PLUGIN_DIR PERFLIB_ACCOUNTS
unset PERFLIB_USER PERFLIB_PASSWORD PERFLIB_AUTH
printf '%s\n' "$password" | "$top_builddir/server-glue/perflib-passwd" -f "$tmp/accounts" alice \
        >"$tmp/passwd.log" 2>&1 || { echo "FAIL: perflib-passwd"; cat "$tmp/passwd.log"; exit 1; }
"$top_builddir/tests/typeperf-provider" --workers 1 >"$tmp/provider.out" 2>&1 &
provider_pid=$!
wait_for 'grep -qs ^ready "$tmp/provider.out"' 100 || { echo "FAIL: provider"; exit 1; }
port=$(free_port)
"$top_builddir/server-glue/perflibd" --registry-dir "$tmp/registry" --plugin-dir "$tmp/plugins" \
        --listen-tcp "127.0.0.1:$port" --accounts "$tmp/accounts" >"$tmp/perflibd.log" 2>&1 &
perflibd_pid=$!
if ! wait_for '"$tp" -q "Typeperf Test" >/dev/null 2>&1' 100; then
        echo "FAIL: typeperf never reached perflibd:"
        cat "$tmp/perflibd.log"
        exit 1
fi
server="127.0.0.1:$port"
hit='\Typeperf Test\Hit Ratio'
sample="-si 0.2 -sc 1 -f JSON"

# ---- the right password, every way of naming the user, both mechanisms ----
export PERFLIB_PASSWORD="$password"
# shellcheck disable=SC2086 # ($sample: options on purpose)
for user in alice 'PERFLIB\alice' alice@PERFLIB; do
        run 0 "$hit" -s "$server" -u "$user" $sample
        hit_ratio "$tmp/out"
done
# shellcheck disable=SC2086
PERFLIB_AUTH=ntlm run 0 "$hit" -s "$server" -u alice $sample
hit_ratio "$tmp/out"
# shellcheck disable=SC2086
PERFLIB_AUTH=spnego run 0 "$hit" -s "$server" -u alice $sample
hit_ratio "$tmp/out"
# PERFLIB_USER stands for -u, for every libpcq program.
# shellcheck disable=SC2086
PERFLIB_USER=alice run 0 "$hit" -s "$server" $sample
hit_ratio "$tmp/out"
run 0 -q "Typeperf Test" -s "$server" -u alice
expect "$tmp/out" '\Typeperf Test\Hit Ratio'

# ---- refusals: exit status 3, and the line says access was denied ----
for auth in ntlm spnego; do
        # shellcheck disable=SC2086
        PERFLIB_AUTH=$auth PERFLIB_PASSWORD=wrong run 3 "$hit" -s "$server" -u alice $sample
        expect "$tmp/err" "typeperf: cannot connect to perflibd on 127.0.0.1 port $port as alice"
        expect "$tmp/err" "Access is denied; the server does not know user alice or the password is wrong"
        # shellcheck disable=SC2086
        PERFLIB_AUTH=$auth run 3 "$hit" -s "$server" -u mallory $sample
        expect "$tmp/err" "as mallory"
        expect "$tmp/err" "Access is denied"
done
# shellcheck disable=SC2086
run 3 "$hit" -s "$server" $sample
expect "$tmp/err" "Access is denied; perflibd serves TCP only to clients that authenticate"
checks=$((checks + 1))
[ -s "$tmp/out" ] && fail "a refused run wrote samples"

# ---- a mechanism that is not one, and Kerberos without a ticket ----
# shellcheck disable=SC2086
PERFLIB_AUTH=bogus run 3 "$hit" -s "$server" -u alice $sample
expect "$tmp/err" "PERFLIB_AUTH is 'bogus': want ntlm, spnego or kerberos"
# shellcheck disable=SC2086
PERFLIB_AUTH=kerberos KRB5CCNAME=FILE:$tmp/no-ccache run 3 "$hit" -s "$server" $sample
expect "$tmp/err" "no Kerberos ticket to log on to host@127.0.0.1 with: run kinit"

# ---- the password asked on the terminal, without echo ----
unset PERFLIB_PASSWORD
# shellcheck disable=SC2086
run 3 "$hit" -s "$server" -u alice $sample
expect "$tmp/err" "no terminal to ask the password of alice on: set PERFLIB_PASSWORD"
# pty PASSWORD: typeperf -u alice on a pty, answering the prompt; its output in $tmp/pty
pty() {
        "$PY" - "$tp" "$1" "$hit" -s "$server" -u alice -si 0.2 -sc 1 -f JSON >"$tmp/pty" <<'EOF'
import os, pty, signal, sys
prog, answer, args = sys.argv[1], sys.argv[2], sys.argv[3:]
signal.alarm(60)    # a prompt that never comes fails the test, not hangs it
pid, fd = pty.fork()
if pid == 0:
    os.execv(prog, [prog] + args)
seen = b""
while b"Password for alice on 127.0.0.1:" not in seen:
    seen += os.read(fd, 1024)
os.write(fd, answer.encode() + b"\n")
while True:
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode(errors="replace"))
sys.exit(os.WEXITSTATUS(status))
EOF
}
pty "$password"
status=$?
checks=$((checks + 1))
[ "$status" -eq 0 ] || { fail "asked on a pty: exit status $status"; sed 's/^/    /' "$tmp/pty" >&2; }
expect "$tmp/pty" '"values"'
checks=$((checks + 1))
grep -q -F "$password" "$tmp/pty" && fail "the password was echoed"
pty wrong
status=$?
checks=$((checks + 1))
[ "$status" -eq 3 ] || fail "wrong password on a pty: exit status $status, want 3"
expect "$tmp/pty" "Access is denied"

# ---- the Unix socket serves as before, with no credentials ----
# shellcheck disable=SC2086
run 0 "$hit" $sample
values "$tmp/out" JSON 1 37.5
# shellcheck disable=SC2086
PERFLIB_USER=alice run 0 "$hit" $sample
values "$tmp/out" JSON 1 37.5

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
