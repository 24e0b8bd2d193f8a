#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Processor Information and Thread, read through a real perflibd and
# typeperf, against sysstat (mpstat -P ALL, pidstat -t) and procps (ps -L)
# over the same seconds, while this script makes the load it measures: one
# CPU kept busy, and a process of three threads of known names, nice and
# states.  Exit 77 (SKIP) only when one of those tools is missing.
set -euo pipefail
export LC_ALL=C        # sysstat's decimal point and column layout

top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
perflibd_bin=$top_builddir/server-glue/perflibd
typeperf_bin=$top_builddir/tools/typeperf
N=3                     # seconds (samples) each measurement window lasts

for t in mpstat pidstat ps taskset nice python3 timeout; do
        command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t is missing"; exit 77; }
done
tmp=$(mktemp -d "$top_builddir/tests/cpudetail-interop.XXXXXX")
chmod 755 "$tmp"        # a root perflibd runs plugins as nobody
pids=()
cleanup() {
        for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
        for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
        # KEEP_TMP=1 keeps it, perflibd.log and the tools' output, for a look.
        [ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
start_bg() { "$@" & pids+=($!); }

failures=0
# check NAME OURS THEIRS ABS: |ours - theirs| <= ABS, both numbers.
check() {
        if awk -v a="$2" -v b="$3" -v t="$4" 'BEGIN {
                if (a !~ /^-?[0-9.]+$/ || b !~ /^-?[0-9.]+$/) exit 1
                d = a - b; exit !(d <= t && -d <= t) }'; then
                echo "PASS: $1: typeperf $2, reference $3 (tolerance $4)"
        else
                echo "FAIL: $1: typeperf $2, reference $3 (tolerance $4)"
                failures=$((failures + 1))
        fi
}

# col FILE HEADER: the mean of the typeperf CSV column whose header ends with HEADER.
col() {
        python3 - "$1" "$2" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
c = [i for i, h in enumerate(rows[0]) if h.endswith(sys.argv[2])]
v = [float(r[c[0]]) for r in rows[1:] if len(c) == 1 and r[c[0]].strip()]
print(sum(v) / len(v) if v else "missing")
EOF
}

# The values of one column, in order, space-separated.
states() {
        python3 - "$1" "$2" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
c = [i for i, h in enumerate(rows[0]) if h.endswith(sys.argv[2])]
print(' '.join('%g' % float(r[c[0]]) for r in rows[1:] if len(c) == 1 and r[c[0]].strip()))
EOF
}

# states_ok "2 5 2" "2 5 running": every sample one of the listed states,
# and with "running", at least one sample 2.
states_ok() {
        local v seen_run=no
        [ -n "$1" ] || return 1
        for v in $1; do
                case " $2 " in *" $v "*) ;; *) return 1 ;; esac
                [ "$v" = 2 ] && seen_run=yes
        done
        case " $2 " in *" running "*) [ "$seen_run" = yes ] ;; *) return 0 ;; esac
}

mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins"
for so in procinfo thread; do
        ln -s "$top_builddir/providers/$so/.libs/$so.so" "$tmp/plugins/$so.so"
done
export PERFLIB_RUNTIME_DIR=$tmp/run
start_bg "$perflibd_bin" -r "$tmp/run" -R "$tmp/registry" -p "$tmp/plugins" 2>"$tmp/perflibd.log"
for _ in $(seq 100); do
        [ -S "$tmp/run/perflibd.sock" ] && break
        sleep 0.05
done
[ -S "$tmp/run/perflibd.sock" ] || { cat "$tmp/perflibd.log"; echo "FAIL: perflibd did not start"; exit 1; }
for _ in $(seq 100); do
        "$typeperf_bin" -q 2>/dev/null | grep -qF '\Thread(' && break
        sleep 0.1
done

# ---- Processor Information: every CPU against mpstat, the last one kept busy ----
cpus=$(awk '/^cpu[0-9]/ { sub("cpu", "", $1); print $1 }' /proc/stat)
busy=$(echo "$cpus" | tail -n1)
node_of() {
        local d
        for d in /sys/devices/system/node/node[0-9]*; do
                [ -d "$d/cpu$1" ] && { echo "${d##*node}"; return; }
        done
        echo 0
}
paths=('\Processor Information(_Total)\% Processor Time')
for c in $cpus; do
        paths+=("\\Processor Information($(node_of "$c"),$c)\\% Processor Time")
done
start_bg timeout $((N + 3)) taskset -c "$busy" sh -c 'while :; do :; done'
sleep 0.5
"$typeperf_bin" "${paths[@]}" -si 1 -sc $N >"$tmp/cpu.csv" &
tp=$!
mpstat -P ALL 1 $N >"$tmp/mpstat.txt"
wait $tp
# Per-CPU percentages over windows a few ms apart, jiffy granularity and
# the other work on the machine: 10 points.
check 'Processor Information(_Total) % Processor Time vs mpstat all' \
        "$(col "$tmp/cpu.csv" '(_Total)\% Processor Time')" \
        "$(awk '/^Average:/ && $2 == "all" { print 100 - $NF }' "$tmp/mpstat.txt")" 10
for c in $cpus; do
        check "Processor Information($(node_of "$c"),$c) % Processor Time vs mpstat CPU $c" \
                "$(col "$tmp/cpu.csv" ",$c)\\% Processor Time")" \
                "$(awk -v c="$c" '/^Average:/ && $2 == c { print 100 - $NF }' "$tmp/mpstat.txt")" 10
done
# One NODE,_Total per node and NODE,CPU per CPU, as Windows names them.
"$typeperf_bin" -qx 'Processor Information' >"$tmp/names.txt"
want=$( (echo _Total; for c in $cpus; do n=$(node_of "$c"); echo "$n,$c"; echo "$n,_Total"; done) | sort -u)
have=$(sed -n 's/^\\Processor Information(\(.*\))\\% Processor Time$/\1/p' "$tmp/names.txt" | sort -u)
if [ "$want" = "$have" ]; then
        echo "PASS: Processor Information instances: $(echo $have)"
else
        echo "FAIL: Processor Information instances: $(echo $have), expected $(echo $want)"
        failures=$((failures + 1))
fi
# The frequency: cpufreq's kHz, else /proc/cpuinfo's MHz, averaged; 10 %
# for a governor that moves it between the two reads.
mhz=$(cat /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq 2>/dev/null |
      awk '{ s += $1 / 1000; n++ } END { if (n) print s / n }' || true)
[ -n "$mhz" ] || mhz=$(awk -F: '/^cpu MHz/ { s += $2; n++ } END { if (n) print s / n }' /proc/cpuinfo)
if [ -n "$mhz" ]; then
        "$typeperf_bin" '\Processor Information(_Total)\Processor Frequency' -sc 1 >"$tmp/freq.csv"
        check 'Processor Information(_Total) Processor Frequency vs cpufreq or cpuinfo MHz' \
                "$(col "$tmp/freq.csv" 'Processor Frequency')" "$mhz" "$(awk -v m="$mhz" 'BEGIN { print m / 10 }')"
else
        echo "SKIP: no frequency on this machine (no cpufreq, no cpu MHz)"
fi

# ---- Thread: a process of three threads, niced: busy, ticking 100 times a second, asleep ----
python=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
ln -s "$python" "$tmp/interopthr"      # comm is the name exec was given
start_bg nice -n 5 "$tmp/interopthr" -c '
import threading, time
def tick():
    while True:
        time.sleep(0.01)
threading.Thread(target=tick, daemon=True).start()
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
while True:
    pass'
proc=$!
# The interpreter starts slowly on a loaded machine, and typeperf takes the
# instances that exist when it starts: first its three threads, then ours.
for _ in $(seq 200); do
        [ "$(ps -o nlwp= -p "$proc" 2>/dev/null | tr -d ' ')" = 3 ] && break
        sleep 0.1
done
for _ in $(seq 50); do
        "$typeperf_bin" -qx Thread 2>/dev/null | grep -qF '\Thread(interopthr/2)\ID Thread' && break
        sleep 0.1
done
tp_paths=()
for i in 0 1 2; do
        for ctr in 'ID Thread' 'ID Process' '% Processor Time' 'Priority Base' 'Thread State' \
                   'Context Switches/sec'; do
                tp_paths+=("\\Thread(interopthr/$i)\\$ctr")
        done
done
"$typeperf_bin" "${tp_paths[@]}" -si 1 -sc $N >"$tmp/thr.csv" &
tp=$!
pidstat -t -w -p "$proc" 1 $N >"$tmp/pidstat-w.txt" &
pw=$!
pidstat -t -p "$proc" 1 $N >"$tmp/pidstat.txt"
wait $tp $pw
ps -L -o tid=,nice=,stat= -p "$proc" >"$tmp/ps.txt"
# Windows numbers a process's threads in the order it lists them: ps -L's order.
i=0
while read -r tid ni stat; do
        check "Thread(interopthr/$i) ID Thread vs ps -L tid" "$(col "$tmp/thr.csv" "/$i)\\ID Thread")" "$tid" 0
        check "Thread(interopthr/$i) ID Process vs \$!" "$(col "$tmp/thr.csv" "/$i)\\ID Process")" "$proc" 0
        check "Thread(interopthr/$i) Priority Base vs 20 - ps nice" \
                "$(col "$tmp/thr.csv" "/$i)\\Priority Base")" "$((20 - ni))" 0
        # pidstat's %CPU of the thread over nearly the same seconds: 15 points.
        check "Thread(interopthr/$i) % Processor Time vs pidstat -t %CPU" \
                "$(col "$tmp/thr.csv" "/$i)\\% Processor Time")" \
                "$(awk -v t="$tid" '/%CPU/ && !c { for (k = 1; k <= NF; k++) { if ($k == "TID") d = k; if ($k == "%CPU") c = k } }
                        /^Average:/ && $d == t { print $c }' "$tmp/pidstat.txt")" 15
        # pidstat -w's switches a second over nearly the same seconds; the
        # ticker's 100 a second move with the load: 25 % and 5.
        check "Thread(interopthr/$i) Context Switches/sec vs pidstat -w -t cswch/s + nvcswch/s" \
                "$(col "$tmp/thr.csv" "/$i)\\Context Switches/sec")" \
                "$(awk -v t="$tid" '/cswch/ && !c { for (k = 1; k <= NF; k++) { if ($k == "TID") d = k; if ($k == "cswch/s") c = k } }
                        /^Average:/ && $d == t { print $c + $(c + 1) }' "$tmp/pidstat-w.txt")" \
                "$(awk -v t="$tid" '/cswch/ && !c { for (k = 1; k <= NF; k++) { if ($k == "TID") d = k; if ($k == "cswch/s") c = k } }
                        /^Average:/ && $d == t { print 5 + 0.25 * ($c + $(c + 1)) }' "$tmp/pidstat-w.txt")"
        # Waiting (5) in every sample for the sleeper; the busy main thread
        # Running (2), or waiting (5) for the interpreter's lock while the
        # ticker holds it on a loaded machine: running at least once, and
        # never a state it cannot be in.  The ticker is either at any time.
        case $i in
        0) want="2 5 running" ;;
        2) want="5" ;;
        *) want="" ;;
        esac
        if [ -n "$want" ]; then
                got=$(states "$tmp/thr.csv" "/$i)\\Thread State")
                if states_ok "$got" "$want"; then
                        echo "PASS: Thread(interopthr/$i) Thread State: samples $got (ps: $stat)"
                else
                        echo "FAIL: Thread(interopthr/$i) Thread State: samples $got, want $want (ps: $stat)"
                        failures=$((failures + 1))
                fi
        fi
        i=$((i + 1))
done <"$tmp/ps.txt"
[ "$i" -eq 3 ] || { echo "FAIL: ps -L listed $i threads, not 3"; failures=$((failures + 1)); }

if [ $failures -gt 0 ]; then
        echo "$failures check(s) failed"
        exit 1
fi
echo "all checks passed"
