# SPDX-License-Identifier: MIT
# Sourced by typeperf's shell tests (test-typeperf.sh, test-typeperf-auth.sh):
# running typeperf, checking its status and messages, parsing its output.
# The caller sets tp, tmp, PY, failures and checks.

# wait_for, free_port, port_open
. "$top_srcdir/tests/test-lib.sh"

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# run WANT-STATUS ARGS...: typeperf's output in $tmp/out and $tmp/err;
# $tp_as: a command that runs it (as another user)
tp_as=''
run() {
        want=$1
        shift
        # shellcheck disable=SC2086 # (a command and its arguments)
        $tp_as "$tp" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
        status=$?
        checks=$((checks + 1))
        if [ "$status" -ne "$want" ]; then
                fail "typeperf $*: exit status $status, want $want"
                sed 's/^/    /' "$tmp/err" >&2
        fi
}

# expect FILE TEXT: FILE has a line containing TEXT
expect() {
        checks=$((checks + 1))
        grep -q -F -- "$2" "$1" || { fail "no '$2' in $(basename "$1"):"; sed 's/^/    /' "$1" >&2; }
}

# same FILE EXPECTED-TEXT: the lines of FILE, sorted, are exactly those given
same() {
        checks=$((checks + 1))
        if [ -n "$2" ]; then printf '%s\n' "$2"; fi | LC_ALL=C sort >"$tmp/want"
        LC_ALL=C sort "$1" >"$tmp/got"
        cmp -s "$tmp/want" "$tmp/got" || {
                fail "$3: listing differs (- want, + got):"
                diff -u "$tmp/want" "$tmp/got" | sed 's/^/    /' >&2
        }
}

# check FORMAT FILE N COLUMNS...: FILE holds N samples of the given columns
check() {
        checks=$((checks + 1))
        "$PY" - "$@" <<'EOF' || fail "$1 layout of $2"
import csv, json, math, re, sys
fmt, path, n, cols = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
raw = open(path, newline="").read()
assert raw.endswith("\n"), "the last line is not complete"
lines = raw.split("\n")[:-1]
def num(v):
    assert re.fullmatch(r"-?[0-9]+\.[0-9]{6}", v) or v == " ", "value %r" % v
    return None if v == " " else float(v)
if fmt == "JSON":
    assert len(lines) == n, "%d lines, want %d" % (len(lines), n)
    for line in lines:
        o = json.loads(line)
        assert sorted(o) == ["timestamp", "values"], o
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d", o["timestamp"])
        assert list(o["values"]) == cols, (list(o["values"]), cols)
        for v in o["values"].values():
            assert v is None or isinstance(v, (int, float)), v
    sys.exit(0)
rows = list(csv.reader(lines, delimiter="\t" if fmt == "TSV" else ","))
assert len(rows) == n + 1, "%d rows, want %d" % (len(rows), n + 1)
assert re.fullmatch(r"\(PDH-%s 4\.0\) \([^()]+\)\(-?\d+\)" % fmt, rows[0][0]), rows[0][0]
assert rows[0][1:] == cols, (rows[0][1:], cols)
for line, row in zip(lines[1:], rows[1:]):
    assert line.startswith('"'), "unquoted: " + line
    assert len(row) == len(cols) + 1, row
    assert re.fullmatch(r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d\.\d{3}", row[0]), row[0]
    for v in row[1:]:
        num(v)
EOF
}

# values FILE FORMAT COLUMN WANT: every sample's value in COLUMN is WANT ("blank": none)
values() {
        checks=$((checks + 1))
        "$PY" - "$@" <<'EOF' || fail "values of column $3 in $1"
import csv, json, sys
path, fmt, col, want = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lines = open(path).read().splitlines()
if fmt == "JSON":
    got = [list(json.loads(l)["values"].values())[col - 1] for l in lines]
    got = ["blank" if v is None else float(v) for v in got]
else:
    rows = list(csv.reader(lines[1:], delimiter="\t" if fmt == "TSV" else ","))
    got = ["blank" if r[col] == " " else float(r[col]) for r in rows]
w = want if want == "blank" else float(want)
assert got and all(g == w for g in got), (got, want)
EOF
}
