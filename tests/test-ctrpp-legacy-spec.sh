#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Every counterset shape of the spec's two example manifests runs through a
# provider built on ctrpp -legacy's output and is read back by typeperf,
# with nothing installed (the generated files describe the provider):
#   - example-usermode.man (tests/ctrpp/legacy/spec-usermode-main.c): a
#     multi-instance set with a raw count and a by-reference average timer
#     and its base, and a single-instance set with a hexadecimal count and
#     an elapsed time with its own PerfTime and PerfFreq;
#   - example-kernelmode.man (spec-kernelmode-main.c): the same shapes laid
#     out by the provider's structs, the single-instance one published by
#     copying a whole struct.
# Both manifests use the same GUIDs, so the providers run one after the other.
set -u
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
ctrpp="$top_builddir/ctrpp/ctrpp"
tp="$top_builddir/tools/typeperf"
src="$top_srcdir/tests/ctrpp/legacy"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctrpp-legacy-spec.XXXXXX")
chmod 755 "$tmp"
provider_pid='' perflibd_pid=''
failures=0 checks=0

# shellcheck disable=SC2317 # (run by the trap)
cleanup() {
        exec 9>&- 2>/dev/null
        for pid in $provider_pid $perflibd_pid; do kill "$pid" 2>/dev/null; done
        wait 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

. "$top_srcdir/tests/test-lib.sh"
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# build NAME [CFLAGS...]: ctrpp -legacy of the spec's NAME.man, compiled
# with spec-NAME-main.c into $tmp/NAME/provider.
build() {
        name=$1
        shift
        mkdir "$tmp/$name"
        cp "$top_srcdir/tests/ctrpp/spec/example-$name.man" "$tmp/$name/"
        "$ctrpp" -legacy "$tmp/$name/example-$name.man" >/dev/null 2>"$tmp/ctrpp.err" ||
                { cat "$tmp/ctrpp.err" >&2; echo "FAIL: ctrpp -legacy example-$name.man"; exit 1; }
        libdir="$top_builddir/sdk/libperflib/.libs"
        # shellcheck disable=SC2086 # (flag lists)
        ${CC:-cc} -Wall -Wextra -Werror ${SAN_CFLAGS:-} -pthread \
                -I"$top_srcdir/sdk/include/perflib" -I"$top_srcdir/sdk/include" -I"$src" \
                -I"$tmp/$name" "$@" -o "$tmp/$name/provider" "$tmp/$name/example-$name.c" \
                "$src/spec-$name-main.c" -L"$libdir" -Wl,-rpath,"$(cd "$libdir" && pwd)" \
                -lperflib >"$tmp/cc.log" 2>&1 ||
                { cat "$tmp/cc.log" >&2; echo "FAIL: building the $name provider"; exit 1; }
}

# run NAME: starts $tmp/NAME/provider and waits until typeperf sees it.
run() {
        dir=$tmp/$1
        mkfifo "$dir/in"
        "$dir/provider" <"$dir/in" >"$dir/out" 2>&1 9>&- &
        provider_pid=$!
        exec 9>"$dir/in"
        wait_for 'grep -qs ^ready "$dir/out"' 100 ||
                { cat "$tmp/$1/out" >&2; echo "FAIL: the $1 provider"; exit 1; }
        wait_for '"$tp" -q "My System Objects" >/dev/null 2>&1' 100 ||
                { cat "$tmp/perflibd.log" >&2; echo "FAIL: typeperf never saw the $1 provider"; exit 1; }
}

# stop NAME: closes the provider's stdin; its PerfAutoCleanup must succeed.
stop() {
        exec 9>&-
        wait "$provider_pid" || fail "$1: the provider's PerfAutoCleanup failed: $(cat "$tmp/$1/out")"
        provider_pid=''
        wait_for '! "$tp" -q "My System Objects" >/dev/null 2>&1' 100 ||
                fail "$1: its countersets outlived the provider"
}

# sample NAME PATH...: the last row of typeperf -sc 2, values only, one per line.
sample() {
        name=$1
        shift
        "$tp" -sc 2 "$@" >"$tmp/$name/csv" 2>"$tmp/err" || fail "$name: typeperf: $(cat "$tmp/err")"
        tail -n 1 "$tmp/$name/csv" | cut -d, -f2- | tr , '\n' | tr -d '"'
}

# expect NAME WHAT VALUE LOW HIGH
expect() {
        checks=$((checks + 1))
        awk -v v="$3" -v lo="$4" -v hi="$5" 'BEGIN { exit !(v != "" && v + 0 >= lo && v + 0 <= hi) }' ||
                fail "$1: $2 is '$3', want $4 to $5"
}

build usermode
build kernelmode -include spec-kernelmode-structs.h

mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins"
export PERFLIB_RUNTIME_DIR="$tmp/run"
unset PERFLIB_SOCKET PERFLIB_LISTEN_TCP PERFLIB_REGISTRY_DIR PERFLIB_PLUGIN_DIR PERFLIB_AUTH
"$top_builddir/server-glue/perflibd" --registry-dir "$tmp/registry" --plugin-dir "$tmp/plugins" \
        >"$tmp/perflibd.log" 2>&1 &
perflibd_pid=$!

# ---- user mode ----
run usermode
"$tp" -qx "My LogicalDisk" >"$tmp/usermode/list" 2>&1
"$tp" -qx "My System Objects" >>"$tmp/usermode/list" 2>&1
for path in '\My LogicalDisk(C:)\My Free Megabytes' '\My LogicalDisk(D:)\My Avg. Disk sec/Transfer' \
        '\My System Objects\Process Count' '\My System Objects\System Elapsed Time'; do
        checks=$((checks + 1))
        grep -qxF -- "$path" "$tmp/usermode/list" || fail "usermode: typeperf -qx lists no $path"
done
# The bases, PerfTime and PerfFreq are noDisplay: never listed.
checks=$((checks + 1))
[ "$(wc -l <"$tmp/usermode/list")" -eq 7 ] || fail "usermode: typeperf -qx lists $(cat "$tmp/usermode/list")"
# defaultScale 1 shows a value times ten, as perfmon does.
# shellcheck disable=SC2046 # (one word per value)
set -- $(sample usermode '\My LogicalDisk(C:)\My Free Megabytes' '\My LogicalDisk(D:)\My Free Megabytes' \
        '\My LogicalDisk(C:)\My Avg. Disk sec/Transfer' '\My System Objects\Process Count' \
        '\My System Objects\Thread Count' '\My System Objects\System Elapsed Time')
expect usermode "C:'s free megabytes" "${1:-}" 10000 10000
expect usermode "D:'s free megabytes" "${2:-}" 20000 20000
# 1 ms a transfer, times ten; the provider's thread may add a transfer's
# time just before a sample and its count just after: one in a hundred.
expect usermode "C:'s sec/transfer" "${3:-}" 0.0097 0.0103
expect usermode "the process count" "${4:-}" 2550 2550
expect usermode "the thread count" "${5:-}" 7 7
# 42 s when the provider started, plus the seconds since, times ten.
expect usermode "the elapsed time" "${6:-}" 420 1000
stop usermode

# ---- kernel mode, laid out by structs ----
run kernelmode
# shellcheck disable=SC2046 # (one word per value)
set -- $(sample kernelmode '\My LogicalDisk(E:)\My Free Megabytes' \
        '\My LogicalDisk(E:)\My Avg. Disk sec/Transfer' '\My System Objects\Process Count' \
        '\My System Objects\Thread Count' '\My System Objects\System Elapsed Time')
expect kernelmode "E:'s free megabytes" "${1:-}" 50000 50000
# Unchanged between the samples: no transfers, no time.
expect kernelmode "E:'s sec/transfer" "${2:-}" 0 0
expect kernelmode "the process count (from the struct)" "${3:-}" 3000 3000
expect kernelmode "the thread count (from the struct)" "${4:-}" 900 900
# The struct's PerfTime is the copy's moment: exactly 42 s, times ten.
expect kernelmode "the elapsed time (from the struct)" "${5:-}" 419.99 420.01
stop kernelmode

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
