#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/test.sh: everything CI runs, the same way on a developer machine.
#
#   1. scripts/setup.sh --enable-werror, then `make check` in ./build;
#   2. a second build with AddressSanitizer and UBSan in ./build-asan,
#      `make check` again;
#   3. short libFuzzer runs of the segment reader and of the RPC server
#      connection, when clang is present;
#   4. one summary line, "N passed, M failed" (every test of both make check
#      runs, plus each fuzz run as one test), and a non-zero exit status on any
#      failure.
#
# BUILD_DIR and ASAN_BUILD_DIR override the two build directories (relative
# paths are taken from the top of the source tree); FUZZ_SECONDS (default 20)
# the length of each fuzz run.  Extra arguments go to both configure runs.
set -uo pipefail

srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$srcdir" || exit 1

abs() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$srcdir" "$1" ;; esac; }
build_dir=$(abs "${BUILD_DIR:-build}")
asan_dir=$(abs "${ASAN_BUILD_DIR:-build-asan}")
fuzz_seconds=${FUZZ_SECONDS:-20}
jobs=$(nproc 2>/dev/null || echo 2)

passed=0
failed=0
problems=()

log() { printf '\n=== test: %s\n' "$*"; }

# Adds the "# PASS:" and "# FAIL:" (and ERROR, XPASS) counts of every
# test-suite.log under $1 to the totals.
count_results() {
        local f p x

        while IFS= read -r f; do
                p=$(sed -n 's/^# PASS: *\([0-9]*\).*/\1/p' "$f" | head -n1)
                passed=$((passed + ${p:-0}))
                for x in FAIL ERROR XPASS; do
                        p=$(sed -n "s/^# $x: *\\([0-9]*\\).*/\\1/p" "$f" | head -n1)
                        failed=$((failed + ${p:-0}))
                done
        done < <(find "$1" -name test-suite.log -type f 2>/dev/null)
}

# Prints the test-suite.log of every directory whose tests did not all pass.
show_failures() {
        local f

        while IFS= read -r f; do
                if grep -Eq '^# (FAIL|ERROR|XPASS): *[1-9]' "$f"; then
                        printf '\n----- %s -----\n' "$f"
                        cat "$f"
                fi
        done < <(find "$1" -name test-suite.log -type f 2>/dev/null)
}

# build_and_check NAME DIR CONFIGURE_ARG...
build_and_check() {
        local name=$1 dir=$2
        shift 2

        log "$name: setup ($*)"
        if ! BUILD_DIR=$dir "$srcdir/scripts/setup.sh" "$@"; then
                printf 'test: %s: the build failed\n' "$name" >&2
                problems+=("$name build")
                failed=$((failed + 1))
                return 1
        fi
        # Stale logs of an earlier run must not be counted again.
        find "$dir" -name test-suite.log -type f -delete 2>/dev/null
        log "$name: make check"
        if ! make -C "$dir" -j"$jobs" check; then
                local before=$failed

                problems+=("$name make check")
                show_failures "$dir"
                count_results "$dir"
                # make check failed but no test did: a build or harness error.
                [ "$failed" -gt "$before" ] || failed=$((failed + 1))
                return 1
        fi
        count_results "$dir"
        return 0
}

# The sources of the fuzz target: the harness plus the whole runtime, since
# the reader calls into the provider side for in-process collection.
fuzz_sources() {
        printf '%s\n' tests/fuzz-segment.c sdk/libperflib/*.c
}

# fuzz_target NAME DIR PREFIX SOURCES_FN SEED_DIR CFLAG...: builds the
# libFuzzer binary DIR/NAME-libfuzzer from the files SOURCES_FN prints, runs
# it for $fuzz_seconds seconds on the corpus DIR/PREFIXcorpus (plus SEED_DIR
# when it exists), and leaves any reproducer as DIR/PREFIX*.
fuzz_target() {
        local name=$1 dir=$2 prefix=$3 list=$4 seed_dir=$5
        local bin=$dir/$name-libfuzzer corpus=$dir/${prefix}corpus
        local srcs=() seeds=()
        shift 5

        mapfile -t srcs < <("$list")
        mkdir -p "$dir"
        log "$name: building $bin"
        # Nettle and MIT's GSS-API after the sources (librpc's NTLM and
        # Kerberos need them): ld reads in order.
        if ! clang -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=undefined $(pkg-config --cflags krb5-gssapi) \
                "$@" "${srcs[@]}" -lpthread -lnettle $(pkg-config --libs krb5-gssapi) \
                -o "$bin"; then
                problems+=("$name build")
                failed=$((failed + 1))
                return 1
        fi
        mkdir -p "$corpus"
        [ -d "$seed_dir" ] && seeds=("$seed_dir")
        log "$name: running for ${fuzz_seconds}s"
        if ! "$bin" -max_total_time="$fuzz_seconds" -rss_limit_mb=2048 \
                -artifact_prefix="$dir/$prefix" "$corpus" ${seeds[@]+"${seeds[@]}"}; then
                printf 'test: %s found a crash; reproducer under %s/%s*\n' "$name" "$dir" "$prefix" >&2
                problems+=("$name run")
                failed=$((failed + 1))
                return 1
        fi
        passed=$((passed + 1))
}

# The segment reader, into $1/fuzz-segment-libfuzzer, corpus $1/fuzz-corpus.
run_fuzz() {
        fuzz_target fuzz-segment "$1" fuzz- fuzz_sources tests/fuzz-corpus \
                -I sdk/include/perflib -I sdk/libperflib
}

# The wire's target: the harness, the fake handlers and the whole of
# sdk/librpc, built from the sources like the segment target.
fuzz_rpc_sources() {
        printf '%s\n' tests/fuzz-rpc.c tests/pv2-fake.c sdk/librpc/*.c
}

# The RPC server connection, into $1/fuzz-rpc-libfuzzer, corpus $1/fuzz-rpc-corpus.
run_fuzz_rpc() {
        fuzz_target fuzz-rpc "$1" fuzz-rpc- fuzz_rpc_sources tests/fuzz-rpc-corpus \
                -I sdk/include/perflib -I sdk/librpc -I tests
}

# smbd's named-pipe handshake and the pipe's framing (the seed: a real
# smbd's request), into $1/fuzz-np-libfuzzer, corpus $1/fuzz-np-corpus.
fuzz_np_sources() {
        printf '%s\n' tests/fuzz-np.c server-glue/daemon/samba-np.c
}

run_fuzz_np() {
        fuzz_target fuzz-np "$1" fuzz-np- fuzz_np_sources tests/fuzz-np-corpus \
                -I server-glue/daemon
}

build_and_check "build" "$build_dir" --enable-werror "$@"
# The packages are in place after the first setup.
PERFLIB_SKIP_DEPS=1 build_and_check "asan build" "$asan_dir" \
        --enable-werror --enable-sanitizers "$@"

if command -v clang >/dev/null 2>&1; then
        run_fuzz "$asan_dir"
        run_fuzz_rpc "$asan_dir"
        run_fuzz_np "$asan_dir"
else
        log "fuzz: clang not found, skipped"
fi

echo
if [ ${#problems[@]} -gt 0 ]; then
        printf 'test: failed:'
        printf ' [%s]' "${problems[@]}"
        printf '\n'
fi
printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ] && [ ${#problems[@]} -eq 0 ]
