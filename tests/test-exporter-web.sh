#!/usr/bin/env bash
# perflib-exporter's web-config.yml and its refusals at start: over https
# with a certificate made here, basic auth with a bcrypt hash answers 401
# (with WWW-Authenticate) to no credentials, a wrong password and an
# unknown user, and 200 to the right ones; plain http to the TLS port gets
# no answer.  --server reads a perflibd over TCP as PERFLIB_USER, and a
# wrong PERFLIB_PASSWORD gives perflib_exporter_up 0, said in the log.
# A malformed web-config.yml and a --counters file with a bad
# or unknown path stop the start with exit status 2, naming the file and
# line; a usage error is 1, a port in use 3.
set -u
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
exporter="$top_builddir/exporter/perflib-exporter"
perflibd="$top_builddir/server-glue/perflibd"
PY=/usr/bin/python3
tmp=$(mktemp -d "${PERFLIB_TEST_TMPDIR:-${TMPDIR:-/tmp}}/exporter-web.XXXXXX")
failures=0
perflibd_pid='' exporter_pid='' holder_pid=''
password='correct horse'

# shellcheck disable=SC2317 # (run by the trap)
cleanup() {
        for pid in $exporter_pid $perflibd_pid $holder_pid; do
                kill "$pid" 2>/dev/null
        done
        wait 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if ! command -v curl >/dev/null || ! command -v openssl >/dev/null ||
   ! "$PY" -W ignore -c 'import crypt; crypt.METHOD_BLOWFISH' 2>/dev/null; then
        echo "SKIP: needs curl, openssl and $PY with crypt's bcrypt"
        exit 77
fi
# wait_for, free_port, port_open
. "$top_srcdir/tests/test-lib.sh"

fail() {
        echo "FAIL: $*"
        failures=$((failures + 1))
}

# refused STATUS PATTERN ARGS...: the exporter exits with STATUS at start, saying PATTERN.
refused() {
        _st=$1 _pat=$2
        shift 2
        timeout 20 "$exporter" --web.listen-address="127.0.0.1:$(free_port)" "$@" \
                >"$tmp/refused.out" 2>&1
        _got=$?
        if [ "$_got" != "$_st" ] || ! grep -Eq -- "$_pat" "$tmp/refused.out"; then
                fail "$* exited $_got (want $_st) saying:"
                sed 's/^/    /' "$tmp/refused.out"
                echo "    (want /$_pat/)"
        fi
}

mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins"
export PERFLIB_RUNTIME_DIR="$tmp/run"
unset PERFLIB_SOCKET PERFLIB_LISTEN_TCP PERFLIB_REGISTRY_DIR PERFLIB_PLUGIN_DIR
"$perflibd" --registry-dir "$tmp/registry" --plugin-dir "$tmp/plugins" >"$tmp/perflibd.log" 2>&1 &
perflibd_pid=$!
wait_for '[ -S "$tmp/run/perflibd.sock" ]' 100 || { fail "perflibd did not start"; exit 1; }

# ---- TLS and basic auth ----
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/key.pem" -out "$tmp/cert.pem" \
        >"$tmp/openssl.log" 2>&1 || { fail "openssl:"; cat "$tmp/openssl.log"; exit 1; }
hash=$("$PY" -W ignore -c 'import crypt, sys
print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))' "$password")
cat >"$tmp/web.yml" <<EOT
# TLS and one user
tls_server_config:
  cert_file: $tmp/cert.pem
  key_file: $tmp/key.pem
basic_auth_users:
  alice: '$hash'
EOT
port=$(free_port)
"$exporter" --web.listen-address="127.0.0.1:$port" --web.config.file="$tmp/web.yml" \
        >"$tmp/exporter.log" 2>&1 &
exporter_pid=$!
wait_for 'port_open $port' 100 || { fail "no listener:"; cat "$tmp/exporter.log"; exit 1; }
url="https://127.0.0.1:$port/metrics"
get() { curl -sS -m 10 --cacert "$tmp/cert.pem" -D "$tmp/h" -o "$tmp/body" -w '%{http_code}' "$@"; }
[ "$(get "$url")" = 401 ] || fail "no credentials: not 401"
grep -qi '^www-authenticate: basic' "$tmp/h" || fail "401 without WWW-Authenticate: Basic"
[ "$(get -u alice:wrong "$url")" = 401 ] || fail "a wrong password: not 401"
[ "$(get -u mallory:"$password" "$url")" = 401 ] || fail "an unknown user: not 401"
[ "$(get "https://127.0.0.1:$port/")" = 401 ] || fail "the landing page without credentials: not 401"
[ "$(get -u alice:"$password" "$url")" = 200 ] && grep -q '^perflib_exporter_up 1' "$tmp/body" ||
        fail "the right password: not 200 with the metrics"
code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")
[ "$code" = 000 ] || fail "plain http to the TLS port answered $code"
kill -0 "$exporter_pid" 2>/dev/null || fail "the exporter died"
grep -q 'TLS on, basic auth on' "$tmp/exporter.log" || fail "the start line: $(cat "$tmp/exporter.log")"
kill "$exporter_pid"
wait "$exporter_pid" || fail "exit status $? on SIGTERM"
exporter_pid=''

# ---- --server: a remote perflibd over TCP, logged on as PERFLIB_USER ----
# (start_perflibd_tcp writes its log to $tmp/perflibd.log: keep the first's)
mv "$tmp/perflibd.log" "$tmp/perflibd-unix.log"
mkdir -p "$tmp/run2"
printf '%s\n' "$password" | "$top_builddir/server-glue/perflib-passwd" -f "$tmp/accounts" alice \
        >"$tmp/passwd.log" 2>&1 || { fail "perflib-passwd:"; cat "$tmp/passwd.log"; exit 1; }
tcp_port=$(free_port)
first_perflibd=$perflibd_pid
start_perflibd_tcp "$tcp_port" --runtime-dir "$tmp/run2" || exit 1
tcp_perflibd=$perflibd_pid
perflibd_pid="$first_perflibd $tcp_perflibd"
for pw in "$password" wrong; do
        p=$(free_port)
        PERFLIB_USER=alice PERFLIB_PASSWORD=$pw "$exporter" --web.listen-address="127.0.0.1:$p" \
                --server="127.0.0.1:$tcp_port" >"$tmp/remote.log" 2>&1 &
        exporter_pid=$!
        wait_for 'port_open $p' 100 || fail "--server: no listener"
        curl -sS -m 20 -o "$tmp/remote" "http://127.0.0.1:$p/metrics" || fail "--server: no answer"
        want=1
        [ "$pw" = wrong ] && want=0
        grep -q "^perflib_exporter_up $want" "$tmp/remote" ||
                fail "--server, password $pw: $(grep up "$tmp/remote"; cat "$tmp/remote.log")"
        kill "$exporter_pid"
        wait "$exporter_pid" || fail "--server: exit status $? on SIGTERM"
        exporter_pid=''
done
grep -q 'Access is denied\|denied' "$tmp/remote.log" || fail "--server, wrong password: not said: $(cat "$tmp/remote.log")"

# ---- refusals at start ----
printf 'tls_server_config:\n  cert_file: [%s\n  key_file: x\n' "$tmp/cert.pem" >"$tmp/bad.yml"
refused 2 "bad\.yml:[0-9]+" --web.config.file="$tmp/bad.yml"
refused 2 "nothere\.yml" --web.config.file="$tmp/nothere.yml"
printf '# counters\n\\Processor(*)\\%% Processor Time\n\n\\Bad(path\n' >"$tmp/syntax.txt"
refused 2 "syntax\.txt:4:" --counters="$tmp/syntax.txt"
printf '\n\\No Such Counterset\\Anything\n' >"$tmp/unknown.txt"
refused 2 "unknown\.txt:2:.*No Such Counterset" --counters="$tmp/unknown.txt"
refused 1 "bogus" --bogus
refused 1 "web.timeout" --web.timeout=soon
nc_port=$(free_port)
"$PY" -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(30)' "$nc_port" &
holder_pid=$!
wait_for 'port_open $nc_port' 100
refused 3 "cannot listen" --web.listen-address="127.0.0.1:$nc_port"
kill "$holder_pid"

if [ "$failures" -gt 0 ]; then
        echo "exporter log:"
        sed 's/^/    /' "$tmp/exporter.log"
        exit 1
fi
echo "PASS"
