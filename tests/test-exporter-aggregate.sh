#!/usr/bin/env bash
# perflib-exporter and a globalAggregate counterset (issue 19, point 11):
# typeperf-provider's "Typeperf Pool" has instances p1 = 10 and p2 = 20,
# which Windows shows as a single-instance set; the exporter must write one
# sample, 30, without an instance_name label, as typeperf reads it.
set -u
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
exporter="$top_builddir/exporter/perflib-exporter"
perflibd="$top_builddir/server-glue/perflibd"
PY=${PYTHON:-python3}
tmp=$(mktemp -d "${PERFLIB_TEST_TMPDIR:-${TMPDIR:-/tmp}}/exporter-aggregate.XXXXXX")
provider_pid='' perflibd_pid='' exporter_pid=''

# shellcheck disable=SC2317 # (run by the trap)
cleanup() {
        for pid in $exporter_pid $perflibd_pid $provider_pid; do
                kill "$pid" 2>/dev/null
                wait "$pid" 2>/dev/null
        done
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

command -v curl >/dev/null || { echo "SKIP: needs curl"; exit 77; }
# wait_for, free_port, port_open
. "$top_srcdir/tests/test-lib.sh"

chmod 755 "$tmp"
mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins"
export PERFLIB_RUNTIME_DIR="$tmp/run"
unset PERFLIB_SOCKET PERFLIB_LISTEN_TCP PERFLIB_REGISTRY_DIR PERFLIB_PLUGIN_DIR

"$top_builddir/tests/typeperf-provider" --workers 1 >"$tmp/provider.out" 2>&1 &
provider_pid=$!
wait_for 'grep -qs ^ready "$tmp/provider.out"' 100 || { echo "FAIL: provider"; exit 1; }
"$perflibd" --registry-dir "$tmp/registry" --plugin-dir "$tmp/plugins" >"$tmp/perflibd.log" 2>&1 &
perflibd_pid=$!
wait_for '[ -S "$tmp/run/perflibd.sock" ]' 100 || { echo "FAIL: perflibd"; exit 1; }
port=$(free_port)
"$exporter" --web.listen-address="127.0.0.1:$port" >"$tmp/exporter.log" 2>&1 &
exporter_pid=$!
wait_for 'port_open $port' 100 || { echo "FAIL: the exporter did not listen"; exit 1; }

# Both providers' instances are there before the scrape that counts.
wait_for 'curl -s "http://127.0.0.1:$port/metrics" | grep -q "^perflib_typeperf_pool_size 30$"' 50
curl -s "http://127.0.0.1:$port/metrics" >"$tmp/metrics"
samples=$(grep -c '^perflib_typeperf_pool_size' "$tmp/metrics")
if [ "$samples" = 1 ] && grep -qx 'perflib_typeperf_pool_size 30' "$tmp/metrics"; then
        echo "PASS: one sample, 30, no instance label"
else
        echo "FAIL: want exactly 'perflib_typeperf_pool_size 30', got:"
        grep 'typeperf_pool' "$tmp/metrics"
        exit 1
fi
