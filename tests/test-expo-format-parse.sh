#!/bin/sh
# SPDX-License-Identifier: MIT
# The writer's output for a set of every counter type (test-expo-format
# --dump), through the parsers scrapers use: python3-prometheus-client's
# text and OpenMetrics parsers, and promtool check metrics.  Skipped (77)
# when neither is installed.
set -eu
dump="${top_builddir:-..}/tests/test-expo-format"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$dump" --dump 0.0.4 > "$tmp/text"
"$dump" --dump openmetrics > "$tmp/om"
ran=0

if /usr/bin/python3 -c 'import prometheus_client' 2>/dev/null; then
        ran=1
        /usr/bin/python3 - "$tmp/text" "$tmp/om" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_families

text = open(sys.argv[1]).read()
om = open(sys.argv[2]).read()
a = {f.name: f for f in text_string_to_metric_families(text)}
b = {f.name: f for f in om_families(om)}
# Every family both ways, with the same type and samples.
assert sorted(a) == sorted(b), (sorted(a), sorted(b))
for name, f in a.items():
    g = b[name]
    assert f.type == g.type, (name, f.type, g.type)
    sa = sorted((s.name, sorted(s.labels.items()), s.value) for s in f.samples)
    sb = sorted((s.name, sorted(s.labels.items()), s.value) for s in g.samples)
    assert sa == sb, (name, sa, sb)
want = {
    "perflib_every_type_events_sec": "counter",
    "perflib_every_type_percent_timer_seconds": "counter",
    "perflib_every_type_raw": "gauge",
    "perflib_every_type_sample_fraction": "counter",
    "perflib_every_type_sample_fraction_base": "counter",
    "perflib_every_type_avg_sec_op_seconds": "summary",
    "perflib_every_type_avg_bytes_op": "summary",
    "perflib_every_type_percent_multi_base": "gauge",
    "perflib_every_type_percent_raw_fraction": "gauge",
    "perflib_every_type_elapsed_time_seconds": "gauge",
    "perflib_exporter_up": "gauge",
    "perflib_exporter_scrape_errors": "counter",
}
for name, t in want.items():
    assert name in a and a[name].type == t, (name, a.get(name))
assert b["perflib_every_type_percent_timer_seconds"].unit == "seconds"
raw = a["perflib_every_type_raw"].samples
assert {s.labels["instance_id"] for s in raw} == {"0", "1"}, raw
assert all(s.labels["instance_name"] == 'one "1"' for s in raw), raw
assert not any("text" in n or "no_data" in n or n.endswith("_base_2") for n in a), sorted(a)
print("python3-prometheus-client: %d families parsed both ways" % len(a))
PY
fi

if command -v promtool >/dev/null 2>&1; then
        ran=1
        # Lint about words of the counters' own names ("Events/sec" ->
        # events_sec, "Sample Counter", "milliseconds") is what the naming
        # rule forces, listed in perflib-exporter(1); anything else, a
        # parse error included, fails.
        out=$(promtool check metrics < "$tmp/text" 2>&1) || true
        echo "$out"
        bad=$(echo "$out" | grep -v -e '^$' \
                -e 'metric names should not contain abbreviated units$' \
                -e "metric name should not include type '[a-z]*'$" \
                -e 'use base unit "[a-z]*" instead of "[a-z]*"$' || true)
        case "$out" in *"error while linting"*|*"parse"*) echo "promtool: parse error" >&2; exit 1;; esac
        if [ -n "$bad" ]; then
                echo "promtool: unexpected lint:" >&2
                echo "$bad" >&2
                exit 1
        fi
fi
[ "$ran" = 1 ] || exit 77
