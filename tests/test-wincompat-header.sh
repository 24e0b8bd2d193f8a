#!/bin/sh
# perflib-windows.h, the optional <windows.h>-level names (issue 19, point 6):
# Windows-style code in the form of ctrpp.exe's output (data/wincompat/)
# builds with -Wall -Wextra -Werror and runs, as C and as C++, two units per
# program sharing the selectany variables; C++ builds with <iostream>,
# <string> and <vector> before and after the header, and with __in/__out
# requested (PERFLIB_WINDOWS_SAL_IN_OUT) when they come first; a program's
# own definitions of the names are kept.
set -eu
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perflib-wincompat.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The build tree's perflib.pc (perflib-uninstalled.pc), as perflib-env.sh
# gives it to users.
export PKG_CONFIG_PATH="$top_builddir/sdk/libperflib"
cflags=$(pkg-config --cflags perflib)
libs=$(pkg-config --libs perflib)
export PERFLIB_RUNTIME_DIR="$tmp/run"
data="$top_srcdir/tests/data/wincompat"
san=${SAN_CFLAGS:-}
warn="-Wall -Wextra -Werror"

cc_() { ${CC:-cc} -std=c11 $warn $san $cflags -I"$data" "$@"; }
cxx_() { ${CXX:-c++} -std=c++11 $warn $san $cflags -I"$data" "$@"; }

# name, then the compiler and its arguments: build, run, expect the line.
build_run() {
        name=$1
        shift
        "$@" -o "$tmp/$name" $libs || fail "$name: build"
        "$tmp/$name" >"$tmp/$name.out" 2>&1 || { cat "$tmp/$name.out" >&2; fail "$name: run"; }
        grep -qx 'wincompat: ok' "$tmp/$name.out" || fail "$name: no ok line"
}

build_run c cc_ "$data/main.c" "$data/other.c"
build_run cxx-std-first cxx_ -DSTD_FIRST "$data/main.cpp" -x c++ "$data/other.c"
build_run cxx-std-after cxx_ "$data/main.cpp" -x c++ "$data/other.c"
build_run cxx-sal-in-out cxx_ -DSTD_FIRST -DPERFLIB_WINDOWS_SAL_IN_OUT "$data/main.cpp" \
        -x c++ "$data/other.c"
grep -qx 'wincompat: c++ units built' "$tmp/cxx-std-first.out" || fail "C++ standard library output"

cc_ -c "$data/prior.c" -o "$tmp/prior.o" || fail "the program's own definitions"

# The header alone, in both languages, needs nothing else included first.
printf '#include <perflib-windows.h>\n' >"$tmp/alone.c"
cc_ -c "$tmp/alone.c" -o "$tmp/alone.o" || fail "perflib-windows.h alone, C"
cxx_ -x c++ -c "$tmp/alone.c" -o "$tmp/alone-cxx.o" || fail "perflib-windows.h alone, C++"
echo "perflib-windows.h: C and C++ builds ok"
