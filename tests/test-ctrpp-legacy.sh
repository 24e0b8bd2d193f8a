#!/bin/sh
# SPDX-License-Identifier: MIT
#
# ctrpp -legacy writes what Vista's ctrpp.exe wrote (the Windows SDK 6.0
# PerflibV2SampleProvider's build): for a manifest in that sample's shape
# (tests/ctrpp/legacy/WaveProvider.man),
#   - the four files, BASE.h, BASE.c, BASE.rc and BASE_r.h, beside the
#     manifest, equal their golden copies and carry every name and form
#     a project's own code and build files use;
#   - they compile with a hand-written provider that uses them as the SDK
#     sample's main.c does (wave-main.c), with -Wall -Wextra -Werror;
#   - that provider runs against a real perflibd with nothing installed, and
#     typeperf reads its countersets by name (it describes itself) with the
#     values it published, in both counterset shapes (multiple and single);
#   - the options Windows' ctrpp forbids with -legacy, and -backcompat,
#     are refused with a message naming them.
# After reviewing a change to the generated files, regenerate them with
#   CTRPP_UPDATE_GOLDEN=1 make check TESTS=test-ctrpp-legacy.sh
set -u
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
ctrpp="$top_builddir/ctrpp/ctrpp"
tp="$top_builddir/tools/typeperf"
src="$top_srcdir/tests/ctrpp/legacy"
golden="$top_srcdir/tests/ctrpp/golden"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctrpp-legacy.XXXXXX")
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
# has FILE TEXT: FILE holds TEXT on one line
has() {
        checks=$((checks + 1))
        grep -q -F -- "$2" "$1" || fail "$(basename "$1") has no '$2'"
}

# ---- the files, beside the manifest ----
mkdir "$tmp/w"
cp "$src/WaveProvider.man" "$tmp/w/"
"$ctrpp" -legacy "$tmp/w/WaveProvider.man" >"$tmp/ctrpp.out" 2>"$tmp/ctrpp.err" ||
        { cat "$tmp/ctrpp.err" >&2; echo "FAIL: ctrpp -legacy"; exit 1; }
[ -s "$tmp/ctrpp.err" ] && fail "ctrpp -legacy warned: $(cat "$tmp/ctrpp.err")"
for f in WaveProvider.h WaveProvider.c WaveProvider.rc WaveProvider_r.h; do
        checks=$((checks + 1))
        if [ "${CTRPP_UPDATE_GOLDEN:-0}" = 1 ]; then
                cp "$tmp/w/$f" "$golden/$f"
        elif ! diff -u "$golden/$f" "$tmp/w/$f" >"$tmp/diff"; then
                fail "$f differs from tests/ctrpp/golden/$f:"
                sed 's/^/    /' "$tmp/diff" >&2
        fi
done

# Every name and form of Vista's output.
h="$tmp/w/WaveProvider.h" c="$tmp/w/WaveProvider.c"
has "$h" '#ifdef __INIT_WaveProvider_IMP'
has "$h" '#define PROVIDER_GUID_WaveProvider_1 {'
has "$h" 'GUID ProviderGuid_WaveProvider_1 = PROVIDER_GUID_WaveProvider_1;'
has "$h" 'extern GUID ProviderGuid_WaveProvider_1;'
has "$h" '#define CTRSET_GUID_WaveProvider_1_2 {'
has "$h" 'GUID CtrSetGuid_WaveProvider_1_2 = CTRSET_GUID_WaveProvider_1_2;'
has "$h" '{ CTRSET_GUID_WaveProvider_1_1, PROVIDER_GUID_WaveProvider_1, 2, PERF_COUNTERSET_MULTI_INSTANCES },'
has "$h" '} CTRSET_WaveProvider_1_2, *PCTRSET_WaveProvider_1_2;'
has "$h" 'PERF_COUNTER_INFO Ctr_WaveProvider_1_2_4;'
has "$h" 'extern CTRSET_WaveProvider_1_2 CtrSet_WaveProvider_1_2;'
has "$h" 'extern ULONG dwCtrSet_WaveProvider_1_1;'
has "$h" 'extern HANDLE hDataSource_WaveProvider_1;'
has "$h" 'ULONG PerfAutoInitialize(void);'
has "$h" 'ULONG PerfAutoCleanup(void);'
checks=$((checks + 1))
! grep -q 'static inline\|CTRPP_SELECTANY' "$h" ||
        fail "WaveProvider.h defines functions or weak variables: a kept Microsoft .c would clash"
has "$c" '#define __INIT_WaveProvider_IMP'
has "$c" '#include "WaveProvider.h"'
has "$c" 'ControlCallback_WaveProvider_1(ULONG RequestCode, PVOID pBuffer, ULONG BufferSize)'
has "$c" 'case PERF_ENUM_INSTANCES:'
has "$c" 'Status = PerfStartProvider(&ProviderGuid_WaveProvider_1, ControlCallback_WaveProvider_1,'
has "$c" 'pl_set_provider_description(hDataSource_WaveProvider_1, &WaveProvider_Description);'
has "$tmp/w/WaveProvider.rc" '#include "WaveProvider_r.h"'
has "$tmp/w/WaveProvider.rc" 'IDS_WaveProvider_00013 "Wave Summary"'
has "$tmp/w/WaveProvider.rc" 'IDS_WaveProvider_00014 "Wave Summary" // {Locked}'
has "$tmp/w/WaveProvider_r.h" '#define IDS_WaveProvider_00001          1'
has "$tmp/w/WaveProvider_r.h" '#define IDS_WaveProvider_00031         31'

# ---- refused options ----
for opt in "-o x.h" "-rc x.c" "-ch x.h" "-prefix P"; do
        checks=$((checks + 1))
        # shellcheck disable=SC2086 # (an option and its value)
        if "$ctrpp" -legacy $opt "$tmp/w/WaveProvider.man" >/dev/null 2>"$tmp/err"; then
                fail "ctrpp -legacy $opt succeeded"
        fi
        has "$tmp/err" "it cannot be used with ${opt% *}"
done
checks=$((checks + 1))
"$ctrpp" -backcompat "$tmp/w/WaveProvider.man" >/dev/null 2>"$tmp/err" && fail "-backcompat accepted"
has "$tmp/err" "option '-backcompat' is not supported"

# ---- built with a hand-written provider, as the SDK sample is ----
cc=${CC:-cc}
libdir="$top_builddir/sdk/libperflib/.libs"
# shellcheck disable=SC2086 # (flag lists)
$cc -Wall -Wextra -Werror ${SAN_CFLAGS:-} -I"$top_srcdir/sdk/include/perflib" \
        -I"$top_srcdir/sdk/include" -I"$tmp/w" -o "$tmp/wave" "$tmp/w/WaveProvider.c" \
        "$src/wave-main.c" -L"$libdir" -Wl,-rpath,"$(cd "$libdir" && pwd)" -lperflib \
        >"$tmp/cc.log" 2>&1 || { cat "$tmp/cc.log" >&2; echo "FAIL: building the provider"; exit 1; }

# The spec's user-mode example (a multi-instance counterset and a single one
# laid out by structs) compiles in this form too.
mkdir "$tmp/spec"
cp "$top_srcdir/tests/ctrpp/spec/example-usermode.man" "$tmp/spec/"
checks=$((checks + 1))
# shellcheck disable=SC2086 # (flag lists)
"$ctrpp" -legacy "$tmp/spec/example-usermode.man" >/dev/null 2>&1 &&
        $cc -Wall -Wextra -Werror ${SAN_CFLAGS:-} -I"$top_srcdir/sdk/include/perflib" \
                -I"$top_srcdir/sdk/include" -c -o "$tmp/spec/example-usermode.o" \
                "$tmp/spec/example-usermode.c" >"$tmp/cc.log" 2>&1 ||
        fail "the spec's user-mode example under -legacy: $(cat "$tmp/cc.log")"

# ---- run, and read back by typeperf with nothing installed ----
mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins"
export PERFLIB_RUNTIME_DIR="$tmp/run"
unset PERFLIB_SOCKET PERFLIB_LISTEN_TCP PERFLIB_REGISTRY_DIR PERFLIB_PLUGIN_DIR PERFLIB_AUTH
mkfifo "$tmp/in"
"$tmp/wave" <"$tmp/in" >"$tmp/wave.out" 2>&1 &
provider_pid=$!
exec 9>"$tmp/in"
wait_for 'grep -qs ^ready "$tmp/wave.out"' 100 || { cat "$tmp/wave.out" >&2; echo "FAIL: provider"; exit 1; }
# Not holding the provider's stdin open: closing fd 9 must stop it.
"$top_builddir/server-glue/perflibd" --registry-dir "$tmp/registry" --plugin-dir "$tmp/plugins" \
        >"$tmp/perflibd.log" 2>&1 9>&- &
perflibd_pid=$!
wait_for '"$tp" -q "Wave Summary" >/dev/null 2>&1' 100 ||
        { cat "$tmp/perflibd.log" >&2; echo "FAIL: typeperf never reached perflibd"; exit 1; }

"$tp" -sc 1 '\Wave Generators(gen1)\Triangle' '\Wave Generators(gen2)\Square' \
        '\Wave Summary\Sine' '\Wave Summary\Steps' >"$tmp/out" 2>"$tmp/err" ||
        fail "typeperf: $(cat "$tmp/err")"
# Steps (7) has defaultScale 1: typeperf shows it times ten.
checks=$((checks + 1))
row=$(sed -n 2p "$tmp/out" | cut -d, -f2-)
[ "$row" = '"11.000000","22.000000","42.000000","70.000000"' ] ||
        fail "typeperf read $row, want 11, 22, 42 and 70:$(cat "$tmp/out")"
"$tp" -qx "Wave Generators" >"$tmp/out" 2>"$tmp/err" || fail "typeperf -qx: $(cat "$tmp/err")"
has "$tmp/out" '\Wave Generators(gen2)\Triangle'

exec 9>&-
wait "$provider_pid" || fail "the provider's PerfAutoCleanup failed: $(cat "$tmp/wave.out")"
provider_pid=''

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
