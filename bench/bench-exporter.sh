#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench-exporter.sh: what a scrape of perflib-exporter costs, beside
# prometheus-node-exporter's on the same machine in the same run:
#   1. perflibd with the Linux providers of the build tree (a private
#      runtime directory), perflib-exporter and node_exporter on loopback;
#      ROUNDS scrapes of each, one after the other, p50 and p99 of curl's
#      time_total and the number of series;
#   2. exporter-provider with 50,000 more worker instances (100,000 series
#      and a few), perflib-exporter's scrape time and its peak resident
#      size (VmHWM) after the scrapes.
# Prints "name: value unit" lines; the targets are for people (the issue's:
# no slower than node_exporter, under 200 ms and 64 MiB for 100,000
# series), nothing fails on a timing.  Use a build without sanitizers.
#
# Usage: bench/bench-exporter.sh [BUILD_DIR]   (default build; ROUNDS=50)
set -eu
srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$srcdir/build}" && pwd)
rounds=${ROUNDS:-50}
node_exporter=${NODE_EXPORTER:-/usr/bin/prometheus-node-exporter}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-exporter.XXXXXX")
# The plugin hosts run as another user: they need to reach the runtime directory.
chmod 755 "$tmp"
pids=()

cleanup() {
        for pid in "${pids[@]}"; do
                kill "$pid" 2>/dev/null || true
        done
        wait 2>/dev/null || true
        rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_port() {
        for _ in $(seq 200); do
                (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
                sleep 0.05
        done
        echo "bench-exporter: nothing listens on $1" >&2
        exit 1
}

# scrapes NAME URL: ROUNDS scrapes after two to warm up; p50, p99 and series.
scrapes() {
        local name=$1 url=$2
        curl -sS -o "$tmp/body" "$url"
        curl -sS -o "$tmp/body" "$url"
        for _ in $(seq "$rounds"); do
                curl -sS -o /dev/null -w '%{time_total}\n' "$url"
        done | sort -n >"$tmp/times"
        printf '%s-series: %d\n' "$name" "$(grep -vc '^#' "$tmp/body")"
        awk -v n="$name" '{ t[NR] = $1 } END {
                printf "%s-scrape-p50: %.2f ms\n", n, t[int((NR + 1) / 2)] * 1000
                printf "%s-scrape-p99: %.2f ms\n", n, t[int(NR * 0.99 + 0.999)] * 1000 }' "$tmp/times"
}

start_perflibd() {
        rm -rf "$tmp/run"
        mkdir -p "$tmp/run" "$tmp/registry"
        "$build/server-glue/perflibd" --registry-dir "$tmp/registry" --plugin-dir "$1" \
                2>>"$tmp/perflibd.log" &
        pids+=($!)
        for _ in $(seq 100); do
                [ -S "$tmp/run/perflibd.sock" ] && return 0
                sleep 0.05
        done
        echo "bench-exporter: perflibd did not start" >&2
        exit 1
}

export PERFLIB_RUNTIME_DIR=$tmp/run
export PERFLIB_PLUGIN_HOST=$build/server-glue/plugins/perflib-plugin-host
export PERFLIB_PLUGIN_CONFIG=$srcdir/server-glue/plugins.conf
unset PERFLIB_SOCKET PERFLIB_REGISTRY_DIR PERFLIB_PLUGIN_DIR

echo "# bench-exporter: $rounds scrapes each, curl's time_total, $(nproc) CPUs"

# ---- 1. the Linux providers, beside node_exporter ----
mkdir -p "$tmp/plugins"
for so in "$build"/providers/*/.libs/*.so; do
        ln -s "$so" "$tmp/plugins/"
done
start_perflibd "$tmp/plugins"
sleep 2         # the plugin hosts start and publish
port=$(free_port)
"$build/exporter/perflib-exporter" --web.listen-address="127.0.0.1:$port" --log.level=warn &
pids+=($!)
wait_port "$port"
scrapes linux-providers "http://127.0.0.1:$port/metrics"
if [ -x "$node_exporter" ]; then
        nport=$(free_port)
        "$node_exporter" --web.listen-address="127.0.0.1:$nport" 2>"$tmp/node.log" &
        pids+=($!)
        wait_port "$nport"
        scrapes node-exporter "http://127.0.0.1:$nport/metrics"
else
        echo "# no $node_exporter: no comparison"
fi
for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
done
wait 2>/dev/null || true
pids=()

# ---- 2. 100,000 series ----
mkdir -p "$tmp/none"
start_perflibd "$tmp/none"
"$build/tests/exporter-provider" --workers 50000 >"$tmp/provider.out" &
pids+=($!)
port=$(free_port)
"$build/exporter/perflib-exporter" --web.listen-address="127.0.0.1:$port" --log.level=warn &
exporter_pid=$!
pids+=("$exporter_pid")
wait_port "$port"
for _ in $(seq 300); do
        [ "$(curl -sS "http://127.0.0.1:$port/metrics" | grep -c '^perflib_exporter_workers')" -gt 100000 ] &&
                break
        sleep 0.1
done
scrapes 100000-series "http://127.0.0.1:$port/metrics"
awk '/^VmHWM/ { printf "100000-series-rss-peak: %.1f MiB\n", $2 / 1024 }' "/proc/$exporter_pid/status"
