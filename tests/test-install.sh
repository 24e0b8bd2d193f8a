#!/bin/sh
# Installs the build into a scratch DESTDIR and checks what a user gets:
# `pkg-config --cflags --libs perflib` alone builds Windows provider code
# (as C and C++), the program runs against the installed library, and the
# library exports exactly the API plus the private reader node.
set -eu
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perflib-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

make -s -C "$top_builddir/sdk" install DESTDIR="$tmp/root" >"$tmp/install.log" 2>&1 ||
        { cat "$tmp/install.log" >&2; fail "make install"; }
pcdir=$(find "$tmp/root" -name perflib.pc -printf '%h\n' | head -n 1)
[ -n "$pcdir" ] || fail "perflib.pc not installed"
prefix=$(sed -n 's/^prefix=//p' "$pcdir/perflib.pc")
export PKG_CONFIG_PATH="$pcdir"
pc() { pkg-config --define-variable=prefix="$tmp/root$prefix" "$@" perflib; }
cflags=$(pc --cflags)
libs=$(pc --libs)
libdir=$(pc --variable=libdir)
for h in perflib.h winperf.h perflib-wintypes.h perflib-windows.h perflib-description.h; do
        [ -f "$tmp/root$prefix/include/perflib/$h" ] || fail "$h not installed"
done
[ ! -e "$tmp/root$prefix/include/perflib/reader.h" ] || fail "internal header installed"
# The plugin directory pkg-config names is the one perflibd loads by default.
plugindir=$(pkg-config --variable=plugindir perflib)
"$top_builddir/server-glue/perflibd" --help | grep -qF "default $plugindir)" ||
        fail "pkg-config plugindir $plugindir is not perflibd's default"
# Every limit its --help lists parses, each into its own setting (--help
# comes last, so a value refused before it fails the run).
"$top_builddir/server-glue/perflibd" --bind-timeout=2 --idle-timeout=0 --max-clients=8 \
        --max-clients-per-user=2 --max-request=64K --request-memory=1M --max-queries=4 \
        --max-query-items=16 --max-segment-size=1G --max-mapped=300M \
        --max-countersets-per-user=3 --state-check=0 --retry-min=3000 --retry-max=4000 \
        --scan-wait=0 --query-memory=2M --help >/dev/null ||
        fail "perflibd refused one of its own limit options"
for o in --bind-timeout=1Q --max-mapped=0 --max-queries=0 --max-countersets-per-user=-1 \
         --retry-min=0 --retry-min=3000 --scan-wait=1s --state-check=3600001 --query-memory=1K; do
        "$top_builddir/server-glue/perflibd" "$o" --help >/dev/null 2>&1 &&
                fail "perflibd accepted $o"
done

src="$top_srcdir/tests/data/windows-provider.c"
export PERFLIB_RUNTIME_DIR="$tmp/run"
san=${SAN_CFLAGS:-}
${CC:-cc} -std=c11 -Wall -Wextra -Werror $san $cflags "$src" -o "$tmp/prov-c" $libs || fail "C build"
LD_LIBRARY_PATH="$libdir" "$tmp/prov-c" | grep -q 'windows-style provider: ok' || fail "C run"
${CXX:-c++} -x c++ -std=c++11 -Wall -Wextra -Werror $san $cflags "$src" -o "$tmp/prov-cxx" $libs ||
        fail "C++ build"
LD_LIBRARY_PATH="$libdir" "$tmp/prov-cxx" | grep -q 'windows-style provider: ok' || fail "C++ run"

# Only the versioned API and the private reader node are exported.
so=$(ls "$libdir"/libperflib.so.* | head -n 1)
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRV]$/ {print $3}' | sed 's/@.*//' | grep -v '^PERFLIB_' | sort)
unexpected=$(printf '%s\n' $exported | grep -v -E '^(Perf[A-Za-z0-9]+|GetLastError|SetLastError|pl_[a-z_]+)$' || true)
[ -z "$unexpected" ] || fail "unexpected exports: $unexpected"
printf '%s\n' $exported | grep -q '^PerfIncrementULongLongCounterValue$' || fail "API not exported"
objdump -T "$so" | grep -q 'PERFLIB_1 *PerfStartProvider$' || fail "PerfStartProvider not versioned PERFLIB_1"
objdump -T "$so" | grep -q 'PERFLIB_1\.1 *pl_set_provider_description$' ||
        fail "pl_set_provider_description not versioned PERFLIB_1.1"
internal=$(printf '%s\n' $exported | grep -E '^pl_' | grep -v -E '^pl_(set_provider_description|runtime_dir|runtime_server_dir|runtime_make_users|reader_[a-z_]+|snapshot_free|scan|scan_stamp|collect_timeout_ms)$' || true)
[ -z "$internal" ] || fail "internal symbols leak: $internal"

# The consumer library: pcq.h alone builds strict C11 and C++, and libpcq
# exports the pcq_ API only.
[ -f "$pcdir/pcq.pc" ] || fail "pcq.pc not installed"
pcq() { pkg-config --define-variable=prefix="$tmp/root$prefix" "$@" pcq; }
cat >"$tmp/consumer.c" <<'EOC'
#include <pcq.h>
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
        struct pcq_path p;
        char *s;

        if (pcq_path_parse("\\\\h\\Obj(i#1)\\C", &p, NULL) != ERROR_SUCCESS)
                return 1;
        s = pcq_path_format(&p);
        pcq_path_done(&p);
        if (!s)
                return 1;
        printf("consumer: %s\n", s);
        free(s);
        return 0;
}
EOC
${CC:-cc} -std=c11 -Wall -Wextra -Werror -pedantic $san $(pcq --cflags) "$tmp/consumer.c" \
        -o "$tmp/consumer" $(pcq --libs) || fail "pcq.h C build"
LD_LIBRARY_PATH="$libdir" "$tmp/consumer" | grep -qF 'consumer: \\h\Obj(i#1)\C' || fail "pcq run"
${CXX:-c++} -x c++ -std=c++11 -Wall -Wextra -Werror $san $(pcq --cflags) "$tmp/consumer.c" \
        -o "$tmp/consumer-cxx" $(pcq --libs) || fail "pcq.h C++ build"
so=$(ls "$libdir"/libpcq.so.* | head -n 1)
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRV]$/ {print $3}' | sed 's/@.*//' | grep -v '^PCQ_' | sort)
unexpected=$(printf '%s\n' $exported | grep -v -E '^pcq_[a-z0-9_]+$' || true)
[ -z "$unexpected" ] || fail "libpcq: unexpected exports: $unexpected"
printf '%s\n' $exported | grep -q '^pcq_query_collect$' || fail "libpcq: API not exported"
printf '%s\n' $exported | grep -q -E '^pcq_utf|^pv2_' && fail "libpcq: internal symbols leak"
echo "PASS: install, pkg-config, C and C++ build, exports (perflib and pcq)"
