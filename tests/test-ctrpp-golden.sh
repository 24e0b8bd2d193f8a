#!/bin/sh
# Golden files: what ctrpp generates for the spec's two examples and a
# representative part of the corpus (user and kernel mode, structs,
# aggregates, string tables, no namespaces), byte for byte, with the
# options each case lists.  A change to the generators shows up here as a
# diff to review; after reviewing it, regenerate with
#   CTRPP_UPDATE_GOLDEN=1 make check TESTS=test-ctrpp-golden.sh
set -u
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
ctrpp="$top_builddir/ctrpp/ctrpp"
golden="$top_srcdir/tests/ctrpp/golden"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctrpp-golden.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
n=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# check CASE MANIFEST [CTRPP-OPTION]...: every file ctrpp writes for CASE
# (named CASE.h, CASE_strings.c, CASE_counters.h) must equal its golden copy.
check() {
        name=$1 man=$top_srcdir/tests/ctrpp/$2
        shift 2
        dir=$tmp/$name
        mkdir -p "$dir"
        if ! (cd "$dir" && "$ctrpp" -o "$name.h" -rc "${name}_strings.c" "$@" "$man") \
                >"$dir.out" 2>"$dir.err"; then
                fail "$name: ctrpp failed:"
                sed 's/^/    /' "$dir.err" >&2
                return
        fi
        for f in "$dir"/*; do
                base=$(basename "$f")
                n=$((n + 1))
                if [ "${CTRPP_UPDATE_GOLDEN:-0}" = 1 ]; then
                        cp "$f" "$golden/$base"
                elif [ ! -e "$golden/$base" ]; then
                        fail "$base: no golden file (run with CTRPP_UPDATE_GOLDEN=1 to make it)"
                elif ! diff -u "$golden/$base" "$f" >"$dir.diff"; then
                        fail "$base differs from tests/ctrpp/golden/$base:"
                        sed 's/^/    /' "$dir.diff" >&2
                fi
        done
}

check usermode spec/example-usermode.man
check kernelmode spec/example-kernelmode.man
check usermode-prefixed spec/example-usermode.man -prefix My -ch usermode-prefixed_counters.h \
        -NotificationCallback
check ucs corpus/microsoft__Windows-classic-samples__ucs.cpp.man
check kcs corpus/microsoft__Windows-driver-samples__kcs.man
check xdppcw corpus/microsoft__xdp-for-windows__xdppcw.man
check node-aggregate corpus/nodejs__node__node_perfctr_provider.v0.10-aggregate.man
check ktl-um corpus/microsoft__service-fabric__KtlLoggerCounters.um.man
check vista good/vista-no-namespace.man

echo "$n generated files compared with tests/ctrpp/golden, $failures failures"
[ "$failures" -eq 0 ]
