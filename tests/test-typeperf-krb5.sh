#!/usr/bin/env bash
# typeperf -s HOST:PORT with PERFLIB_AUTH=kerberos against a real perflibd
# given a keytab (--keytab), with tickets from a test MIT KDC
# (tests/krb5-kdc.sh): our own client logs on with the ticket alone (no
# user, no password), through SPNEGO, and reads a live counter's known
# value; without a ticket, with a principal that is no account, with a
# service the KDC does not know and against a perflibd without a keytab it
# exits 3 with "Access is denied" or says what is missing, and writes no
# sample.  bash: VAR=value before a function call holds for that call.
set -u
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
tp="$top_builddir/tools/typeperf"
perflibd="$top_builddir/server-glue/perflibd"
PY=${PYTHON:-python3}
failures=0
checks=0
provider_pid='' perflibd_pid=''

# krb5_kdc_start, krb5_kdc_stop
. "$top_srcdir/tests/krb5-kdc.sh"
# fail, run, expect, check, values; wait_for, free_port
. "$top_srcdir/tests/typeperf-lib.sh"

krb5_kdc_start
tmp=$KRB5_TEST_DIR/typeperf
mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins" || exit 1
chmod 755 "$KRB5_TEST_DIR" "$tmp" || exit 1
# shellcheck disable=SC2317 # (run by the trap)
stop() {
        for pid in $perflibd_pid; do
                kill "$pid" 2>/dev/null
                wait "$pid" 2>/dev/null
        done
        perflibd_pid=''
}
# shellcheck disable=SC2317 # (run by the trap)
cleanup() {
        stop
        for pid in $provider_pid; do
                kill "$pid" 2>/dev/null
                wait "$pid" 2>/dev/null
        done
        krb5_kdc_stop
}
trap cleanup EXIT
trap 'exit 1' INT TERM
tp_as="setsid -w"

export PERFLIB_RUNTIME_DIR="$tmp/run"
unset PERFLIB_SOCKET PERFLIB_LISTEN_TCP PERFLIB_REGISTRY_DIR PERFLIB_PLUGIN_DIR PERFLIB_ACCOUNTS
unset PERFLIB_KEYTAB PERFLIB_USER PERFLIB_PASSWORD
# The ticket is all: the client is not to need anything else.
export PERFLIB_AUTH=kerberos PERFLIB_KRB5_SERVICE=$KRB5_TEST_SERVICE

# start [--keytab FILE]: perflibd on TCP with the accounts file, into $port
start() {
        port=$(free_port)
        start_perflibd_tcp "$port" "$@" || exit 1
        server="127.0.0.1:$port"
}

# refused WHY...: the last run exited 3, said each WHY, and wrote no sample
refused() {
        for why in "$@"; do
                expect "$tmp/err" "$why"
        done
        checks=$((checks + 1))
        [ -s "$tmp/out" ] && fail "a refused run wrote samples"
}

printf 'not used\n' | "$top_builddir/server-glue/perflib-passwd" -f "$tmp/accounts" \
        "$KRB5_TEST_USER" >"$tmp/passwd.log" 2>&1 || { echo "FAIL: perflib-passwd"; exit 1; }
"$top_builddir/tests/typeperf-provider" --workers 1 >"$tmp/provider.out" 2>&1 &
provider_pid=$!
wait_for 'grep -qs ^ready "$tmp/provider.out"' 100 || { echo "FAIL: provider"; exit 1; }
start --keytab "$KRB5_KTNAME"
hit='\Typeperf Test\Hit Ratio'
sample="-si 0.2 -sc 1 -f JSON"

# ---- the ticket logs on, through SPNEGO, and the value is read ----
# shellcheck disable=SC2086 # ($sample: options on purpose)
run 0 "$hit" -s "$server" $sample
check JSON "$tmp/out" 1 '\\127.0.0.1:'"$port"'\Typeperf Test\Hit Ratio'
values "$tmp/out" JSON 1 37.5
expect "$tmp/perflibd.log" "$KRB5_TEST_USER"
# A user and password given beside are not what logs on: the ticket is,
# and -u without a terminal does not stop to ask for a password.
# shellcheck disable=SC2086
PERFLIB_USER=nobody PERFLIB_PASSWORD=wrong run 0 "$hit" -s "$server" $sample
values "$tmp/out" JSON 1 37.5
# shellcheck disable=SC2086
run 0 "$hit" -s "$server" -u nobody $sample
values "$tmp/out" JSON 1 37.5

# ---- no ticket: said before any connection ----
# shellcheck disable=SC2086
KRB5CCNAME=FILE:$tmp/no-such-ccache run 3 "$hit" -s "$server" $sample
refused "no Kerberos ticket to log on to $KRB5_TEST_SERVICE with: run kinit"

# ---- a service the KDC does not know: said before anything is sent ----
# shellcheck disable=SC2086
PERFLIB_KRB5_SERVICE=host@nosuch.perflib.test run 3 "$hit" -s "$server" $sample
refused "no Kerberos ticket for host@nosuch.perflib.test could be had"

# ---- a principal that is no account: refused, and logged by name ----
"$top_builddir/server-glue/perflib-passwd" -f "$tmp/accounts" -x "$KRB5_TEST_USER" \
        >"$tmp/passwd.log" 2>&1 || { echo "FAIL: perflib-passwd -x"; exit 1; }
# shellcheck disable=SC2086
run 3 "$hit" -s "$server" $sample
refused "Access is denied; the server refused the Kerberos ticket"
checks=$((checks + 1))
if ! grep -q "access denied to 127.0.0.1: $KRB5_TEST_USER, not an account" "$tmp/perflibd.log"; then
        fail "perflibd did not log the refused principal:"
        sed 's/^/    /' "$tmp/perflibd.log" >&2
fi

# ---- a perflibd without a keytab offers NTLM alone ----
printf 'not used\n' | "$top_builddir/server-glue/perflib-passwd" -f "$tmp/accounts" \
        "$KRB5_TEST_USER" >"$tmp/passwd.log" 2>&1 || { echo "FAIL: perflib-passwd"; exit 1; }
stop
start
# shellcheck disable=SC2086
run 3 "$hit" -s "$server" $sample
refused "Access is denied; the server refused the Kerberos ticket"

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
