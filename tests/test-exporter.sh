#!/usr/bin/env bash
# perflib-exporter against a real perflibd (Unix socket, its own runtime
# directory) and exporter-provider's known values: every family checked
# against the rules by prometheus_client's text and OpenMetrics parsers
# (exporter-check.py) and by promtool; gzip, 404, 405, HEAD and the
# landing page; --collect.total, --collect.exclude and --counters; a slow
# client cut off at --web.timeout, 1 MiB of headers refused, a third
# connection from one address over --web.max-connections-per-address=2; the provider
# going and coming back fails no scrape; perflibd stopped (SIGSTOP) or
# killed gives perflib_exporter_up 0 within the deadline, and back gives 1;
# a real Prometheus scraping every second computes rate() of a counter
# within 5 % of the provider's known rate.
set -u
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
exporter="$top_builddir/exporter/perflib-exporter"
perflibd="$top_builddir/server-glue/perflibd"
PY=/usr/bin/python3
check="$PY $top_srcdir/tests/exporter-check.py"
RATE=1000
tmp=$(mktemp -d "${PERFLIB_TEST_TMPDIR:-${TMPDIR:-/tmp}}/exporter.XXXXXX")
failures=0
provider_pid='' perflibd_pid='' exporter_pid='' other_pid='' prometheus_pid=''

# shellcheck disable=SC2317 # (run by the trap)
cleanup() {
        for pid in $prometheus_pid $other_pid $exporter_pid $provider_pid $perflibd_pid; do
                kill "$pid" 2>/dev/null
        done
        wait 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if ! "$PY" -c 'import prometheus_client.parser, prometheus_client.openmetrics.parser' 2>/dev/null ||
   ! command -v curl >/dev/null || ! command -v promtool >/dev/null ||
   ! command -v prometheus >/dev/null; then
        echo "SKIP: needs $PY with prometheus_client, curl, promtool and prometheus"
        exit 77
fi
# wait_for, free_port, port_open
. "$top_srcdir/tests/test-lib.sh"

fail() {
        echo "FAIL: $*"
        failures=$((failures + 1))
}

start_perflibd() {
        "$perflibd" --registry-dir "$tmp/registry" --plugin-dir "$tmp/plugins" \
                >>"$tmp/perflibd.log" 2>&1 &
        perflibd_pid=$!
        wait_for '[ -S "$tmp/run/perflibd.sock" ]' 100 || { fail "perflibd did not start"; exit 1; }
}

# start_exporter PORT ARGS...: the exporter's PID in $! (log: $tmp/exporter-PORT.log)
start_exporter() {
        _p=$1
        shift
        "$exporter" --web.listen-address="127.0.0.1:$_p" "$@" >"$tmp/exporter-$_p.log" 2>&1 &
        if ! wait_for 'port_open $_p' 100; then
                fail "the exporter did not listen on $_p:"
                sed 's/^/    /' "$tmp/exporter-$_p.log"
                exit 1
        fi
}

# Stops $other_pid with SIGTERM: it exits 0 (and under ASan, leaks nothing).
stop_other() {
        kill "$other_pid"
        wait "$other_pid" || fail "exporter $other_pid: exit status $? on SIGTERM"
        other_pid=''
}

# scrape PORT FILE [CURL ARGS...]: the body into FILE, headers into FILE.h
scrape() {
        _p=$1 _f=$2
        shift 2
        curl -sS -m 10 -D "$_f.h" -o "$_f" "$@" "http://127.0.0.1:$_p/metrics"
}

mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins"
export PERFLIB_RUNTIME_DIR="$tmp/run"
unset PERFLIB_SOCKET PERFLIB_LISTEN_TCP PERFLIB_REGISTRY_DIR PERFLIB_PLUGIN_DIR

"$top_builddir/tests/exporter-provider" --rate $RATE >"$tmp/provider.out" 2>&1 &
provider_pid=$!
wait_for 'grep -qs ^ready "$tmp/provider.out"' 100 || { fail "exporter-provider"; exit 1; }
start_perflibd
port=$(free_port)
start_exporter "$port"
exporter_pid=$!
if ! wait_for 'scrape $port "$tmp/first" && grep -qs "^perflib_exporter_workers" "$tmp/first"' 100; then
        fail "the provider's countersets never showed:"
        cat "$tmp/first" "$tmp/exporter-$port.log"
        exit 1
fi

# ---- every family, in both syntaxes ----
scrape "$port" "$tmp/text"
scrape "$port" "$tmp/om" -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5'
grep -qi '^content-type: text/plain; version=0.0.4' "$tmp/text.h" || fail "text: $(cat "$tmp/text.h")"
grep -qi '^content-type: application/openmetrics-text' "$tmp/om.h" || fail "OpenMetrics: $(cat "$tmp/om.h")"
[ "$(tail -n 1 "$tmp/om")" = "# EOF" ] || fail "OpenMetrics does not end with # EOF"
$check families "$tmp/text" "$tmp/om" || failures=$((failures + 1))

# ---- promtool: no parse error, no lint but those the naming rule forces ----
# (perflib-exporter(1) lists them: a counter's unit that is not a base unit
# comes from its name, as "Events/sec" gives events_sec.)
promtool check metrics <"$tmp/text" >"$tmp/promtool.out" 2>&1
if grep -v -e 'metric names should not contain abbreviated units' -e '^$' "$tmp/promtool.out" | grep -q .; then
        fail "promtool check metrics:"
        sed 's/^/    /' "$tmp/promtool.out"
fi

# ---- gzip, HEAD, 404, 405, the landing page ----
scrape "$port" "$tmp/gz" -H 'Accept-Encoding: gzip'
grep -qi '^content-encoding: gzip' "$tmp/gz.h" || fail "no Content-Encoding: gzip"
grep -qi '^vary:.*accept-encoding' "$tmp/gz.h" || fail "no Vary: Accept-Encoding"
gzip -dc <"$tmp/gz" >"$tmp/gunzipped" 2>/dev/null && grep -q '^perflib_exporter_up 1' "$tmp/gunzipped" ||
        fail "the gzipped answer does not unzip to the metrics"
code() { curl -s -m 10 -o "$tmp/body" -w '%{http_code}' "$@"; }
[ "$(code "http://127.0.0.1:$port/nothing")" = 404 ] || fail "/nothing is not 404"
[ "$(code -X POST "http://127.0.0.1:$port/metrics")" = 405 ] || fail "POST is not 405"
[ "$(code -I "http://127.0.0.1:$port/metrics")" = 200 ] || fail "HEAD is not 200"
[ "$(code "http://127.0.0.1:$port/")" = 200 ] && grep -q 'href="/metrics"' "$tmp/body" ||
        fail "the landing page does not link /metrics"

# ---- --collect.total, --collect.exclude, --counters ----
p2=$(free_port)
start_exporter "$p2" --collect.total --collect.exclude='^Exporter Te' --web.telemetry-path=/m
other_pid=$!
curl -sS -m 10 -o "$tmp/total" "http://127.0.0.1:$p2/m"
$check total "$tmp/total" || failures=$((failures + 1))
grep -q '^perflib_exporter_test_' "$tmp/total" && fail "--collect.exclude left Exporter Test in"
stop_other
printf '# the workers of one name\n\n\\Exporter Workers(dup)\\Items/sec\n\\Exporter Test\\Hit Ratio\n' \
        >"$tmp/counters"
p3=$(free_port)
start_exporter "$p3" --counters="$tmp/counters" --web.timeout=2
other_pid=$!
scrape "$p3" "$tmp/narrow"
$check only "$tmp/narrow" perflib_exporter_workers_items_sec perflib_exporter_test_hit_ratio ||
        failures=$((failures + 1))
grep -q 'instance_name="alpha"' "$tmp/narrow" && fail "--counters (dup) let alpha in"
# ---- a slow client and a huge one: libmicrohttpd's deadline and memory limit ----
$check limits "$p3" 2 || failures=$((failures + 1))
kill -0 "$other_pid" 2>/dev/null || fail "the exporter died of a slow or huge client"
[ "$(grep -c '^perflib_exporter_workers_items_sec_total{' "$tmp/narrow")" = 2 ] ||
        fail "--counters (dup): want both instances named dup: $(grep items "$tmp/narrow")"
stop_other

# ---- connections from one address: the third of --web.max-connections-per-address=2 ----
p4=$(free_port)
start_exporter "$p4" --web.max-connections-per-address=2
other_pid=$!
"$PY" - "$p4" <<'EOT' || fail "a third connection from one address was served"
import socket, sys
port = int(sys.argv[1])
held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(2)]
third = socket.create_connection(("127.0.0.1", port), timeout=5)
try:
    third.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    answer = third.recv(64)
except OSError:
    answer = b""
# libmicrohttpd closes it unanswered; the two held ones count against the limit.
sys.exit(1 if answer.startswith(b"HTTP/") else 0)
EOT
# shellcheck disable=SC2016 # (evaluated by wait_for)
wait_for 'curl -sf -m 5 -o /dev/null "http://127.0.0.1:$p4/metrics"' 50 ||
        fail "served nobody once the held connections went"
stop_other

# ---- a real Prometheus: rate() within 5 % of the provider's ----
{
        pport=$(free_port)
        cat >"$tmp/prometheus.yml" <<EOT
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: perflib
    static_configs:
      - targets: ['127.0.0.1:$port']
EOT
        prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
                --web.listen-address="127.0.0.1:$pport" >"$tmp/prometheus.log" 2>&1 &
        prometheus_pid=$!
        # PERFLIB_LONG_TESTS=1: a minute of scrapes, the rate over 30 s of them.
        window=6
        [ "${PERFLIB_LONG_TESTS:-0}" = 1 ] && window=30
        query="rate(perflib_exporter_test_events_sec_total[${window}s])"
        # shellcheck disable=SC2016 # (evaluated by wait_for)
        promql='curl -sS -m 5 -o "$tmp/rate.json" "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$query" &&
                "$PY" -c "import json, sys
r = json.load(open(sys.argv[1]))[\"data\"][\"result\"]
sys.exit(0 if r and abs(float(r[0][\"value\"][1]) - $RATE) <= 0.05 * $RATE else 1)" "$tmp/rate.json"'
        # A window's worth of scrapes makes the first rate over the whole window.
        sleep $((window + 1))
        if ! wait_for "$promql" 100; then
                fail "Prometheus' $query is not $RATE within 5 %:"
                cat "$tmp/rate.json"
                tail -5 "$tmp/prometheus.log"
        fi
        kill "$prometheus_pid"
        wait "$prometheus_pid" 2>/dev/null
        prometheus_pid=''
}

# ---- the provider goes and comes back: no failed scrape, its families again ----
errors() { grep "^perflib_exporter_scrape_errors_total{counterset=\"$2\"}" "$1" | cut -d' ' -f2; }
scrape "$port" "$tmp/before"
kill "$provider_pid"
wait "$provider_pid" 2>/dev/null
# shellcheck disable=SC2016 # (evaluated by wait_for)
wait_for 'scrape $port "$tmp/gone" && ! grep -q "^perflib_exporter_workers" "$tmp/gone"' 100 ||
        fail "the provider's families outlived it"
grep -q '^perflib_exporter_up 1' "$tmp/gone" || fail "provider gone: $(grep up "$tmp/gone")"
"$top_builddir/tests/exporter-provider" --rate $RATE >"$tmp/provider.out" 2>&1 &
provider_pid=$!
wait_for 'scrape $port "$tmp/again" && grep -qs "^perflib_exporter_workers" "$tmp/again"' 100 ||
        fail "the provider's families did not come back"
for set in "Exporter Test" "Exporter Workers"; do
        [ "$(errors "$tmp/again" "$set")" = "$(errors "$tmp/before" "$set")" ] ||
                fail "$set: scrape errors $(errors "$tmp/before" "$set") -> $(errors "$tmp/again" "$set") as its provider came and went"
done

# ---- perflibd stuck: an answer within the 5 s bound of a call, up 0; then 1 ----
kill -STOP "$perflibd_pid"
start=$(date +%s)
scrape "$port" "$tmp/stuck" || fail "no answer with perflibd stuck"
[ $(($(date +%s) - start)) -le 8 ] || fail "the answer with perflibd stuck took over 8 s"
grep -q '^perflib_exporter_up 0' "$tmp/stuck" || fail "perflibd stuck: $(grep up "$tmp/stuck")"
kill -CONT "$perflibd_pid"
wait_for 'scrape $port "$tmp/unstuck" && grep -q "^perflib_exporter_up 1" "$tmp/unstuck"' 100 ||
        fail "perflibd going on: $(grep up "$tmp/unstuck")"

# ---- perflibd goes: up 0 at once; it comes back: up 1 ----
kill "$perflibd_pid"
wait "$perflibd_pid" 2>/dev/null
start=$(date +%s)
scrape "$port" "$tmp/down" || fail "no answer with perflibd gone"
[ $(($(date +%s) - start)) -le 6 ] || fail "the answer with perflibd gone took over 6 s"
grep -q '^perflib_exporter_up 0' "$tmp/down" || fail "perflibd gone: $(grep up "$tmp/down")"
kill -0 "$exporter_pid" 2>/dev/null || fail "the exporter died with perflibd"
start_perflibd
wait_for 'scrape $port "$tmp/back" && grep -q "^perflib_exporter_up 1" "$tmp/back" &&
          grep -q "^perflib_exporter_workers" "$tmp/back"' 100 ||
        fail "perflibd back: $(grep -c . "$tmp/back") lines, $(grep up "$tmp/back")"

# ---- SIGTERM stops it cleanly ----
kill -TERM "$exporter_pid"
wait "$exporter_pid"
st=$?
exporter_pid=''
[ "$st" = 0 ] || fail "SIGTERM: exit status $st"

if [ "$failures" -gt 0 ]; then
        echo "exporter log:"
        sed 's/^/    /' "$tmp/exporter-$port.log"
        exit 1
fi
echo "PASS"
