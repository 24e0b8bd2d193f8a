#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""exporter-check.py: perflib-exporter's answers checked against its rules.

    exporter-check.py families TEXT OPENMETRICS
    exporter-check.py total TEXT
    exporter-check.py only TEXT FAMILY...
    exporter-check.py limits PORT TIMEOUT

families: TEXT (Prometheus text 0.0.4) and OPENMETRICS (1.0) parse with
prometheus_client's parsers, and each family of exporter-provider's
countersets has the name, type, help, labels and values the rules of
perflib-exporter(1) give it, the same in both syntaxes; every family name
is perflib_ and runs of [a-z0-9] joined by single underscores; the health
families are there.  total: the _Total instance is exported (with
--collect.total).  only: TEXT has exactly these perflib_ families besides
the health ones.  limits: on 127.0.0.1:PORT, a client that stops halfway
through its request is cut off within TIMEOUT seconds and a little more,
and a request with 1 MiB of headers is refused, not served.  Prints one
line per problem, exits 1 when there is any.
"""
import re
import socket
import sys
import time

from prometheus_client.openmetrics.parser import \
    text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_text

NAME = re.compile(r"^perflib_[a-z0-9]+(_[a-z0-9]+)*$")
HEALTH = {
    "perflib_exporter_up": "gauge",
    "perflib_exporter_scrape_duration_seconds": "gauge",
    "perflib_exporter_scrape_errors": "counter",
}
problems = []


def problem(text):
    problems.append(text)


def families(text, parser):
    try:
        return {f.name: f for f in parser(text)}
    except Exception as e:  # the parsers raise ValueError and more
        problem("does not parse: %s" % e)
        return {}


def samples(fam, suffix=""):
    """{frozenset of labels: value} of the samples named fam.name + suffix."""
    return {frozenset(s.labels.items()): s.value for s in fam.samples
            if s.name == fam.name + suffix}


def expect(fams, name, kind, help_text):
    fam = fams.get(name)
    if fam is None:
        problem("%s: missing (families: %s)" % (name, " ".join(sorted(fams))))
        return None
    if fam.type != kind:
        problem("%s: type %s, want %s" % (name, fam.type, kind))
    if help_text is not None and fam.documentation != help_text:
        problem("%s: help %r, want the counter's description %r"
                % (name, fam.documentation, help_text))
    return fam


def near(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


def check_value(name, got, want):
    if got is None or not near(got, want):
        problem("%s: %r, want %r" % (name, got, want))


def single(fam, suffix=""):
    v = samples(fam, suffix)
    if list(v) != [frozenset()]:
        problem("%s%s: want one sample without labels, got %r" % (fam.name, suffix, v))
        return None
    return v[frozenset()]


def check_test_set(fams):
    p = "perflib_exporter_test_"
    fam = expect(fams, p + "events_sec", "counter", "Events handled.")
    if fam and (single(fam, "_total") or 0) <= 0:
        problem(p + "events_sec_total: not counting")
    fam = expect(fams, p + "queue_length", "gauge", "Items waiting.")
    if fam:
        check_value(fam.name, single(fam), 7)
    fam = expect(fams, p + "percent_busy_time_seconds", "counter", "Time spent busy.")
    events = fams.get(p + "events_sec")
    if fam and events:
        # 0.5 s a second against events at 1000 a second: both from the same ticks.
        busy, n = single(fam, "_total"), single(events, "_total")
        # Set one after the other: a scrape may fall between, a tick apart.
        if busy is None or not n or abs(busy - n / 1000 * 0.5) > 0.0011:
            problem("%s_total: %r s, want %r s (half of the provider's time)"
                    % (fam.name, busy, n / 1000 * 0.5))
    fam = expect(fams, p + "hit_ratio", "gauge", "Lookups that hit.")
    if fam:
        check_value(fam.name, single(fam), 3 / 8)
    fam = expect(fams, p + "bytes_op", "summary", "Bytes per operation.")
    if fam:
        total, count = single(fam, "_sum"), single(fam, "_count")
        if total is None or not count or not near(total / count, 25):
            problem("%s: _sum %r / _count %r, want 25" % (fam.name, total, count))
    for name in fams:
        if name.endswith("_base") and name.startswith(p):
            problem("%s: a base counter as a family of its own" % name)


def check_workers(fams, with_total=False):
    p = "perflib_exporter_workers_"
    want = {frozenset({("instance_name", "alpha")}): 1,
            frozenset({("instance_name", "dup"), ("instance_id", "2")}): 2,
            frozenset({("instance_name", "dup"), ("instance_id", "3")}): 3}
    if with_total:
        want[frozenset({("instance_name", "_Total")})] = 6
    fam = expect(fams, p + "queue_length", "gauge", "A worker's queue.")
    if fam and samples(fam) != want:
        problem("%s: %r, want %r" % (fam.name, samples(fam), want))
    fam = expect(fams, p + "items_sec", "counter", "Items a worker took.")
    if fam and set(samples(fam, "_total")) != set(want):
        problem("%s_total: labels %r, want %r"
                % (fam.name, sorted(samples(fam, "_total")), sorted(want)))


def check_health(fams):
    for name, kind in HEALTH.items():
        fam = expect(fams, name, kind, None)
        if fam is None or name == "perflib_exporter_up":
            continue
        suffix = "_total" if kind == "counter" else ""
        sets = {dict(k).get("counterset") for k in samples(fam, suffix)}
        if not {"Exporter Test", "Exporter Workers"} <= sets:
            problem("%s: countersets %r" % (name, sets))
    up = fams.get("perflib_exporter_up")
    if up:
        check_value("perflib_exporter_up", single(up), 1)


def check_names(fams):
    for name in fams:
        if not NAME.match(name):
            problem("%s: not perflib_ and [a-z0-9] runs joined by single underscores" % name)


def same_values(text, om):
    """Both syntaxes carry the same samples (bar time moving between the two scrapes)."""
    for name, fam in text.items():
        other = om.get(name)
        if other is None:
            problem("%s: in the text but not in OpenMetrics" % name)
        elif other.type != fam.type:
            problem("%s: %s in the text, %s in OpenMetrics" % (name, fam.type, other.type))


def check_limits(port, timeout):
    slow = socket.create_connection(("127.0.0.1", port))
    slow.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    slow.settimeout(timeout + 10)
    start = time.monotonic()
    try:
        while slow.recv(4096):
            pass
    except (socket.timeout, ConnectionResetError):
        pass
    took = time.monotonic() - start
    if took > timeout + 3:
        problem("a slow client kept its connection %.1f s (--web.timeout=%d)" % (took, timeout))
    huge = socket.create_connection(("127.0.0.1", port))
    huge.settimeout(10)
    answer = b""
    try:
        huge.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " +
                     b"a" * (1 << 20) + b"\r\n\r\n")
        answer = huge.recv(4096)
    except (ConnectionResetError, BrokenPipeError, socket.timeout):
        pass
    if answer.startswith(b"HTTP/1.1 200"):
        problem("1 MiB of headers was served: %r" % answer[:40])


def main(argv):
    if len(argv) == 4 and argv[1] == "families":
        text = families(open(argv[2]).read(), parse_text)
        om = families(open(argv[3]).read(), parse_openmetrics)
        for fams in (text, om):
            check_names(fams)
            check_test_set(fams)
            check_workers(fams)
            check_health(fams)
        same_values(text, om)
    elif len(argv) == 3 and argv[1] == "total":
        check_workers(families(open(argv[2]).read(), parse_text), with_total=True)
    elif len(argv) >= 3 and argv[1] == "only":
        fams = families(open(argv[2]).read(), parse_text)
        got = {n for n in fams if n not in HEALTH}
        if got != set(argv[3:]):
            problem("families %r, want %r" % (sorted(got), sorted(argv[3:])))
    elif len(argv) == 4 and argv[1] == "limits":
        check_limits(int(argv[2]), int(argv[3]))
    else:
        print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
        return 2
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
