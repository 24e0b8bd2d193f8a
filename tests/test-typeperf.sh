#!/bin/sh
# typeperf's command line against a real perflibd with private directories
# (no root): usage errors and their exit status, -cf parsing, -q/-qx
# listing exactly the installed (lodctr'd spec example) and live
# (typeperf-provider) counters, the CSV, TSV and JSON layouts parsed field
# by field, -o/-y, SIGINT and SIGTERM leaving complete files, unreachable
# hosts (the exact "cannot connect" sentences) and bad paths (with "did
# you mean"), a named instance that is not live and a wildcard that
# matches nothing, two perflibd hosts in one run, a host that refuses the
# user (as root only) and a host that goes away mid-run.  The values
# themselves are test-typeperf-e2e's.
set -u
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
tp="$top_builddir/tools/typeperf"
PY=${PYTHON:-python3}
tmp=$(mktemp -d "${PERFLIB_TEST_TMPDIR:-${TMPDIR:-/tmp}}/typeperf.XXXXXX")
# A root perflibd runs plugins as nobody, whose hosts must reach the runtime directory.
chmod 755 "$tmp"
failures=0
checks=0
provider_pid='' perflibd_pid='' bg_pid='' provider2_pid='' perflibd2_pid=''

# shellcheck disable=SC2317 # (run by the trap)
cleanup() {
        for pid in $bg_pid $provider_pid $perflibd_pid $provider2_pid $perflibd2_pid; do
                kill "$pid" 2>/dev/null
        done
        wait 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if ! "$PY" -c 'import csv, json' 2>/dev/null; then
        echo "SKIP: no $PY to parse the output with"
        exit 77
fi

# fail, run, expect, same, check, values; wait_for, free_port
. "$top_srcdir/tests/typeperf-lib.sh"

# ---- usage errors: no server needed ----
for h in --help -h '-?' '/?'; do
        run 0 "$h"
        expect "$tmp/out" "Usage: typeperf"
done
run 0 --version
expect "$tmp/out" "typeperf (perflib-linux)"
run 1
expect "$tmp/err" "no counter path given"
run 1 '\A\B' --bogus
expect "$tmp/err" "unknown option '--bogus'"
run 1 '\A\B' -si
expect "$tmp/err" "needs an argument"
for bad in 0 abc 1:60 1:2:3:4 -5 1.; do
        run 1 '\A\B' -si "$bad"
        expect "$tmp/err" "invalid sample interval"
done
for bad in 0 -3 x 1.5; do
        run 1 '\A\B' -sc "$bad"
        expect "$tmp/err" "invalid sample count"
done
run 1 '\A\B' -f BIN
expect "$tmp/err" "unsupported format 'BIN'"
run 1 -q '\A\B'
expect "$tmp/err" "take no counter path"
run 1 -q -qx
run 1 '\A\B' --yes=1
expect "$tmp/err" "takes no argument"
run 2 'no backslash'
expect "$tmp/err" "bad counter path 'no backslash'"

# -cf problems are counter problems (2), named by file and line.
run 2 -cf "$tmp/missing.txt"
expect "$tmp/err" "$tmp/missing.txt"
printf '# only a comment\n\n' >"$tmp/empty.txt"
run 2 -cf "$tmp/empty.txt"
expect "$tmp/err" "no counter path in the file"
printf '\\A\\B\n# fine\nnot a path\n' >"$tmp/bad.txt"
run 2 -cf "$tmp/bad.txt"
expect "$tmp/err" "$tmp/bad.txt:3: bad counter path 'not a path'"

# ---- a server, an installed manifest, a live provider ----
mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins"
export PERFLIB_RUNTIME_DIR="$tmp/run"
unset PERFLIB_SOCKET PERFLIB_LISTEN_TCP PERFLIB_REGISTRY_DIR PERFLIB_PLUGIN_DIR
# TCP serves only accounts: every perflibd here reads this one, typeperf logs
# on from the environment (test-typeperf-auth.sh tests -u and refusals).
export PERFLIB_ACCOUNTS="$tmp/accounts" PERFLIB_USER=alice PERFLIB_PASSWORD=Password
unset PERFLIB_AUTH
printf 'Password\n' | "$top_builddir/server-glue/perflib-passwd" alice >/dev/null ||
        { echo "FAIL: perflib-passwd"; exit 1; }
"$top_builddir/server-glue/lodctr" --registry-dir "$tmp/registry" \
        "/M:$top_srcdir/tests/ctrpp/spec/example-usermode.man" >"$tmp/lodctr.log" 2>&1 ||
        { echo "FAIL: lodctr"; exit 1; }
"$top_builddir/tests/typeperf-provider" --workers 2 >"$tmp/provider.out" 2>&1 &
provider_pid=$!
wait_for 'grep -qs ^ready "$tmp/provider.out"' 100 || { echo "FAIL: provider"; exit 1; }
port=$(free_port)
"$top_builddir/server-glue/perflibd" --registry-dir "$tmp/registry" --plugin-dir "$tmp/plugins" \
        --listen-tcp "127.0.0.1:$port" >"$tmp/perflibd.log" 2>&1 &
perflibd_pid=$!
if ! wait_for '"$tp" -q "Typeperf Test" >/dev/null 2>&1' 100; then
        echo "FAIL: typeperf never reached perflibd:"
        "$tp" -q "Typeperf Test"
        cat "$tmp/perflibd.log"
        exit 1
fi
host=$(uname -n)

# ---- -q / -qx: exactly the installed and the live counters ----
test_paths='\Typeperf Test\Ticks/sec
\Typeperf Test\Hit Ratio
\Typeperf Test\Bytes/Op
\Typeperf Test\Uptime'
workers_q='\Typeperf Workers(*)\Queue Length'
workers_qx='\Typeperf Workers(w1)\Queue Length
\Typeperf Workers(w2)\Queue Length'
installed_q='\My LogicalDisk(*)\My Free Megabytes
\My LogicalDisk(*)\My Avg. Disk sec/Transfer
\My System Objects\Process Count
\My System Objects\Thread Count
\My System Objects\System Elapsed Time'

run 0 -q "Typeperf Test"
same "$tmp/out" "$test_paths" "-q Typeperf Test"
run 0 -qx "Typeperf Test"
same "$tmp/out" "$test_paths" "-qx Typeperf Test"
run 0 -q "Typeperf Workers"
same "$tmp/out" "$workers_q" "-q Typeperf Workers"
run 0 -qx "Typeperf Workers"
same "$tmp/out" "$workers_qx" "-qx Typeperf Workers"
run 0 --query-instances="Typeperf Workers"
same "$tmp/out" "$workers_qx" "--query-instances="
# A globalAggregate set is single-instance to its readers, as on Windows:
# one path (its value, the total over the providers' instances, below).
run 0 -q "Typeperf Pool"
same "$tmp/out" '\Typeperf Pool\Size' "-q Typeperf Pool"
run 0 -qx "Typeperf Pool"
same "$tmp/out" '\Typeperf Pool\Size' "-qx Typeperf Pool"
run 0 -q
same "$tmp/out" "$test_paths
$workers_q
\Typeperf Pool\Size
$installed_q" "-q"
run 0 -q "My LogicalDisk"
same "$tmp/out" '\My LogicalDisk(*)\My Free Megabytes
\My LogicalDisk(*)\My Avg. Disk sec/Transfer' "-q My LogicalDisk"
# An installed counterset with no provider has no instance to list.
run 0 -qx "My LogicalDisk"
same "$tmp/out" "" "-qx My LogicalDisk"
# A near miss gets the name meant; a name near none gets no suggestion.
run 2 -q "No Such Object"
expect "$tmp/err" "typeperf: no counterset named 'No Such Object' on the local machine"
checks=$((checks + 1))
grep -q "did you mean" "$tmp/err" && fail "-q No Such Object: a suggestion for a name near none"
run 2 -q "Typeperf Tset"
expect "$tmp/err" \
        "typeperf: no counterset named 'Typeperf Tset' on the local machine; did you mean 'Typeperf Test'?"
run 0 -q "Typeperf Workers" -o "$tmp/list.txt"
same "$tmp/list.txt" "$workers_q" "-q -o"

# ---- bad paths and hosts ----
run 2 '\No Such Object\Counter' -sc 1
expect "$tmp/err" "No Such Object"
run 2 '\Typeperf Test\No Such Counter' -sc 1
expect "$tmp/err" "No Such Counter"
run 2 '\Typeperf Tset\Hit Ratio' -sc 1
expect "$tmp/err" "typeperf: \\Typeperf Tset\\Hit Ratio: no counterset named 'Typeperf Tset' on the local machine; did you mean 'Typeperf Test'?"
run 2 '\Typeperf Test\Hit Raito' -sc 1
expect "$tmp/err" "typeperf: \\Typeperf Test\\Hit Raito: counterset 'Typeperf Test' has no counter named 'Hit Raito'; did you mean 'Hit Ratio'?"
run 2 '\Typeperf Test\Ticks/sec' '\No Such Object\Counter' -sc 1 -o "$tmp/never.csv"
checks=$((checks + 1))
[ -e "$tmp/never.csv" ] && fail "a bad path left an output file behind"
# Every "cannot connect" names what was tried, the error and what to do.
run 3 '\Typeperf Test\Ticks/sec' -s "unix:$tmp/no-such.sock" -sc 1
expect "$tmp/err" "typeperf: cannot connect to perflibd at $tmp/no-such.sock: No such file or directory; start perflibd with --socket=$tmp/no-such.sock, or name the socket the running one uses"
run 3 '\Typeperf Test\Ticks/sec' -s 127.0.0.1:1 -sc 1
expect "$tmp/err" "typeperf: cannot connect to perflibd on 127.0.0.1 port 1: Connection refused; start perflibd there with --listen-tcp=ADDRESS:1 (or PERFLIB_LISTEN_TCP), or give the port it listens on as HOST:PORT"
mkdir -p "$tmp/empty-run"
tp_as="env PERFLIB_RUNTIME_DIR=$tmp/empty-run"
run 3 '\Typeperf Test\Ticks/sec' -sc 1
expect "$tmp/err" "typeperf: cannot connect to the local perflibd at $tmp/empty-run/perflibd.sock (in \$PERFLIB_RUNTIME_DIR): No such file or directory; start perflibd with this PERFLIB_RUNTIME_DIR, or set PERFLIB_RUNTIME_DIR to the runtime directory of the running one (its --runtime-dir)"
# A socket nobody listens on (a perflibd that died), found under
# $XDG_RUNTIME_DIR with PERFLIB_RUNTIME_DIR unset.
mkdir -p "$tmp/xdg/perflib"
"$PY" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
        "$tmp/xdg/perflib/perflibd.sock"
if [ -e /run/perflib/perflibd.sock ]; then
        echo "SKIP: /run/perflib/perflibd.sock exists: the default is taken"
else
        tp_as="env -u PERFLIB_RUNTIME_DIR XDG_RUNTIME_DIR=$tmp/xdg"
        run 3 -q
        expect "$tmp/err" "typeperf: cannot connect to the local perflibd at $tmp/xdg/perflib/perflibd.sock (in \$XDG_RUNTIME_DIR/perflib, PERFLIB_RUNTIME_DIR being unset and /run/perflib holding no socket): Connection refused; no perflibd listens on it any more (one stopped and left its socket behind): start perflibd"
fi
tp_as=''
run 3 '\\127.0.0.1:1\Typeperf Test\Ticks/sec' -sc 1

# ---- layouts, parsed ----

h="\\\\$host"
cols="$h\\Typeperf Test\\Hit Ratio|$h\\Typeperf Workers(w1)\\Queue Length|$h\\Typeperf Workers(w2)\\Queue Length"
for fmt in CSV TSV JSON; do
        run 0 '\Typeperf Test\Hit Ratio' '\Typeperf Workers(*)\Queue Length' \
                '\Typeperf Workers(w9)\Queue Length' -si 0.2 -sc 3 -f "$fmt"
        IFS='|'
        # shellcheck disable=SC2086 # (split on | on purpose)
        check "$fmt" "$tmp/out" 3 $cols
        unset IFS
        values "$tmp/out" "$fmt" 1 37.5
        values "$tmp/out" "$fmt" 2 1
        values "$tmp/out" "$fmt" 3 2
        # A named instance that does not exist is left out, as Windows does, with a warning.
        expect "$tmp/err" 'typeperf: warning: \Typeperf Workers(w9)\Queue Length left out: no instance '"'w9'"' of counterset '"'Typeperf Workers'"' is live'
done
# Alone, it leaves no valid counter: Windows' words, status 2, no file.
run 2 '\Typeperf Workers(w9)\Queue Length' -si 0.2 -sc 1 -o "$tmp/never.csv"
expect "$tmp/err" "typeperf: Error: No valid counters."
checks=$((checks + 1))
[ -e "$tmp/never.csv" ] && fail "a missing instance left an output file behind"
# A near miss names the live instance meant.
run 2 '\Typeperf Workers(ww1)\Queue Length' -si 0.2 -sc 1
expect "$tmp/err" "typeperf: warning: \\Typeperf Workers(ww1)\\Queue Length left out: no instance 'ww1' of counterset 'Typeperf Workers' is live; did you mean 'w1'?"
run 0 '\Typeperf Test\Hit Ratio' -si 0.2 --sample-count=2 --format=json
check JSON "$tmp/out" 2 "$h\\Typeperf Test\\Hit Ratio"

# -cf: comments, blank lines, CRLF, a byte order mark, white space.
printf '\357\273\277# counters\r\n\r\n  \\Typeperf Test\\Hit Ratio  \r\n\t\\Typeperf Workers(w2)\\Queue Length\n' \
        >"$tmp/list.cf"
run 0 -cf "$tmp/list.cf" -si 0.2 -sc 1
check CSV "$tmp/out" 1 "$h\\Typeperf Test\\Hit Ratio" "$h\\Typeperf Workers(w2)\\Queue Length"
values "$tmp/out" CSV 2 2
# Windows style options in any case and place, -s naming this host over TCP.
run 0 -SC 1 '\Typeperf Test\Hit Ratio' -Si 00:00.2 -s "127.0.0.1:$port"
check CSV "$tmp/out" 1 "\\\\127.0.0.1:$port\\Typeperf Test\\Hit Ratio"
values "$tmp/out" CSV 1 37.5
# The globalAggregate set's one value: p1 + p2, no instance in the path.
run 0 '\Typeperf Pool\Size' -si 0.2 -sc 1
check CSV "$tmp/out" 1 "$h\\Typeperf Pool\\Size"
values "$tmp/out" CSV 1 30

# ---- -o and -y ----
out="$tmp/samples.csv"
run 0 '\Typeperf Test\Hit Ratio' -si 0.2 -sc 2 -o "$out"
check CSV "$out" 2 "$h\\Typeperf Test\\Hit Ratio"
checks=$((checks + 1))
[ -s "$tmp/out" ] && fail "-o: standard output is not empty"
before=$(cksum <"$out")
run 4 '\Typeperf Test\Hit Ratio' -si 0.2 -sc 1 -o "$out"
expect "$tmp/err" "use -y to overwrite"
checks=$((checks + 1))
[ "$(cksum <"$out")" = "$before" ] || fail "a refused -o changed the file"
run 0 '\Typeperf Test\Hit Ratio' -si 0.2 -sc 1 -o "$out" -y
check CSV "$out" 1 "$h\\Typeperf Test\\Hit Ratio"
run 4 '\Typeperf Test\Hit Ratio' -sc 1 -o "$tmp/no/such/dir.csv"
expect "$tmp/err" "cannot create"
# A reader that goes away is an output error.
( "$tp" '\Typeperf Test\Hit Ratio' -si 0.1 2>/dev/null; echo $? >"$tmp/rc" ) | head -n 2 >/dev/null
checks=$((checks + 1))
[ "$(cat "$tmp/rc")" = 4 ] || fail "closed pipe: exit status $(cat "$tmp/rc"), want 4"

# ---- signals: the file ends complete ----
# stop SIGNAL WANT-STATUS MIN-LINES INTERVAL
stop() {
        rm -f "$out"
        "$tp" '\Typeperf Test\Ticks/sec' '\Typeperf Workers(*)\Queue Length' -si "$4" -o "$out" \
                2>"$tmp/err" &
        bg_pid=$!
        min=$3
        # shellcheck disable=SC2016 # (expanded by wait_for's eval)
        wait_for '[ -f "$out" ] && [ "$(wc -l <"$out")" -ge "$min" ]' 100 ||
                fail "$1: fewer than $min lines after 10 s"
        kill -"$1" "$bg_pid"
        wait "$bg_pid"
        status=$?
        bg_pid=''
        checks=$((checks + 1))
        [ "$status" -eq "$2" ] || fail "$1: exit status $status, want $2"
        n=$(($(wc -l <"$out") - 1))
        check CSV "$out" "$n" "$h\\Typeperf Test\\Ticks/sec" \
                "$h\\Typeperf Workers(w1)\\Queue Length" "$h\\Typeperf Workers(w2)\\Queue Length"
}
stop INT 0 4 0.1
stop TERM 0 3 0.1
# Before the first sample: 5, and the header alone.
stop INT 5 1 30

# ---- a wildcard that matches nothing ----
# It adds no column and a warning; the other counters are collected.
run 0 '\Typeperf Workers(nosuch*)\Queue Length' '\Typeperf Test\Hit Ratio' -si 0.2 -sc 2
check CSV "$tmp/out" 2 "$h\\Typeperf Test\\Hit Ratio"
values "$tmp/out" CSV 1 37.5
expect "$tmp/err" 'warning: \Typeperf Workers(nosuch*)\Queue Length matches no counter now'
run 0 '\Typeperf Workers(w*)\Queue Length' '\Typeperf Workers(nosuch*)\Queue Length' -si 0.2 -sc 1 \
        -f JSON
check JSON "$tmp/out" 1 "$h\\Typeperf Workers(w1)\\Queue Length" "$h\\Typeperf Workers(w2)\\Queue Length"
values "$tmp/out" JSON 2 2
expect "$tmp/err" 'matches no counter now'
# With nothing else left there is nothing to collect: 2, and no file.
run 2 '\Typeperf Workers(nosuch*)\Queue Length' -si 0.2 -sc 1 -o "$tmp/never.csv"
expect "$tmp/err" "typeperf: Error: No valid counters."
checks=$((checks + 1))
[ -e "$tmp/never.csv" ] && fail "a wildcard matching nothing left an output file behind"

# ---- a second host: its own provider (three workers) and perflibd ----
# Only members of group root may query it on its Unix socket.
mkdir -p "$tmp/run2"
PERFLIB_RUNTIME_DIR="$tmp/run2" "$top_builddir/tests/typeperf-provider" --workers 3 \
        >"$tmp/provider2.out" 2>&1 &
provider2_pid=$!
# shellcheck disable=SC2016 # (expanded by wait_for's eval)
wait_for 'grep -qs ^ready "$tmp/provider2.out"' 100 || { echo "FAIL: provider 2"; exit 1; }
port2=$(free_port)
PERFLIB_RUNTIME_DIR="$tmp/run2" "$top_builddir/server-glue/perflibd" --registry-dir "$tmp/registry" \
        --plugin-dir "$tmp/plugins" --listen-tcp "127.0.0.1:$port2" --group=root \
        >"$tmp/perflibd2.log" 2>&1 &
perflibd2_pid=$!
# shellcheck disable=SC2016 # (expanded by wait_for's eval)
if ! wait_for '"$tp" -q "Typeperf Test" -s "127.0.0.1:$port2" >/dev/null 2>&1' 100; then
        echo "FAIL: typeperf never reached the second perflibd:"
        cat "$tmp/perflibd2.log"
        exit 1
fi
h1="\\\\127.0.0.1:$port"
h2="\\\\127.0.0.1:$port2"

# ---- several hosts in one run ----
# Paths naming their host, and -s for those that name none.
run 0 "$h1\\Typeperf Workers(*)\\Queue Length" '\Typeperf Workers(*)\Queue Length' \
        "$h1\\Typeperf Test\\Hit Ratio" -s "127.0.0.1:$port2" -si 0.2 -sc 2
check CSV "$tmp/out" 2 "$h1\\Typeperf Workers(w1)\\Queue Length" \
        "$h1\\Typeperf Workers(w2)\\Queue Length" "$h2\\Typeperf Workers(w1)\\Queue Length" \
        "$h2\\Typeperf Workers(w2)\\Queue Length" "$h2\\Typeperf Workers(w3)\\Queue Length" \
        "$h1\\Typeperf Test\\Hit Ratio"
values "$tmp/out" CSV 4 2
values "$tmp/out" CSV 5 3
values "$tmp/out" CSV 6 37.5
# w3 exists on the second host only: the first host's is left out.
run 0 "$h1\\Typeperf Workers(w3)\\Queue Length" "$h2\\Typeperf Workers(w3)\\Queue Length" \
        -si 0.2 -sc 1 -f TSV
check TSV "$tmp/out" 1 "$h2\\Typeperf Workers(w3)\\Queue Length"
values "$tmp/out" TSV 1 3
expect "$tmp/err" "no instance 'w3' of counterset 'Typeperf Workers' is live"
# One host that cannot be reached fails the run before any output.
run 3 "$h2\\Typeperf Test\\Hit Ratio" '\\127.0.0.1:1\Typeperf Test\Hit Ratio' -sc 1 \
        -o "$tmp/never.csv"
checks=$((checks + 1))
[ -e "$tmp/never.csv" ] && fail "an unreachable host left an output file behind"

# ---- a host that refuses the user ----
# nobody is neither root, nor perflibd's user, nor in group root.
as_nobody() {
        setpriv --reuid=65534 --regid=65534 "$@"
}
sock2="unix:$tmp/run2/perflibd.sock"
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
        echo "SKIP: a refused user needs root and setpriv"
elif ! chmod go+rx "$tmp" "$tmp/run2" ||
        ! as_nobody --clear-groups "$tp" --version >/dev/null 2>&1; then
        echo "SKIP: user nobody cannot run $tp"
else
        # Root may.
        run 0 '\Typeperf Test\Hit Ratio' -s "$sock2" -si 0.2 -sc 1
        tp_as="as_nobody --clear-groups"
        run 3 '\Typeperf Test\Hit Ratio' -s "$sock2" -si 0.2 -sc 1 -o "$tmp/never.csv"
        expect "$tmp/err" "typeperf: cannot connect to perflibd at $tmp/run2/perflibd.sock: Access is denied; perflibd answers only root, the user it runs as ($(id -un)) and members of its --group: run as one of them, or have user $(id -un 65534 2>/dev/null || echo 'uid 65534') added to that group"
        checks=$((checks + 1))
        [ -e "$tmp/never.csv" ] && fail "a refused user left an output file behind"
        run 3 -q "Typeperf Test" -s "$sock2"
        expect "$tmp/err" "Access is denied"
        run 3 -qx -s "$sock2"
        expect "$tmp/err" "Access is denied"
        # The same user in the group is let in.
        tp_as="as_nobody --groups=0"
        run 0 '\Typeperf Workers(*)\Queue Length' -s "$sock2" -si 0.2 -sc 1
        check CSV "$tmp/out" 1 "\\\\$sock2\\Typeperf Workers(w1)\\Queue Length" \
                "\\\\$sock2\\Typeperf Workers(w2)\\Queue Length" \
                "\\\\$sock2\\Typeperf Workers(w3)\\Queue Length"
        tp_as=''
fi

# ---- a host that goes away mid-run ----
# lost MIN-LINES SIGNAL: perflibd 2 killed once the file has MIN-LINES lines
lost() {
        rm -f "$out"
        # A call gives up after 10 s: the wait for the exit is bounded.
        timeout -s KILL 120 "$tp" "$h1\\Typeperf Test\\Hit Ratio" \
                "$h2\\Typeperf Workers(*)\\Queue Length" -si 1 -o "$out" 2>"$tmp/err" &
        bg_pid=$!
        min=$1
        # shellcheck disable=SC2016 # (expanded by wait_for's eval)
        wait_for '[ -f "$out" ] && [ "$(wc -l <"$out")" -ge "$min" ]' 300 ||
                fail "lost: fewer than $min lines after 30 s"
        kill -"$2" "$perflibd2_pid"
        wait "$perflibd2_pid"
        perflibd2_pid=''
        wait "$bg_pid"
        status=$?
        bg_pid=''
        checks=$((checks + 1))
        [ "$status" -eq 6 ] || fail "lost host: exit status $status, want 6"
        expect "$tmp/err" "collecting from 127.0.0.1:$port2 failed"
        n=$(($(wc -l <"$out") - 1))
        checks=$((checks + 1))
        [ "$n" -ge $((min - 1)) ] || fail "lost host: $n sample lines, want $((min - 1)) or more"
        check CSV "$out" "$n" "$h1\\Typeperf Test\\Hit Ratio" \
                "$h2\\Typeperf Workers(w1)\\Queue Length" "$h2\\Typeperf Workers(w2)\\Queue Length" \
                "$h2\\Typeperf Workers(w3)\\Queue Length"
        # Restarted for the next round, on a new port: no wait for the old one.
        port2=$(free_port)
        h2="\\\\127.0.0.1:$port2"
        PERFLIB_RUNTIME_DIR="$tmp/run2" "$top_builddir/server-glue/perflibd" \
                --registry-dir "$tmp/registry" --plugin-dir "$tmp/plugins" \
                --listen-tcp "127.0.0.1:$port2" >"$tmp/perflibd2.log" 2>&1 &
        perflibd2_pid=$!
        # shellcheck disable=SC2016 # (expanded by wait_for's eval)
        wait_for '"$tp" -q "Typeperf Test" -s "127.0.0.1:$port2" >/dev/null 2>&1' 100 ||
                { fail "perflibd 2 did not come back"; cat "$tmp/perflibd2.log" >&2; }
}
lost 3 KILL
lost 3 TERM
# Before the first sample line: the header alone.
lost 1 KILL

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
