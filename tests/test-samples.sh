#!/bin/sh
# The samples as a user builds them: installs the SDK, ctrpp and perflibd
# into a scratch DESTDIR, copies samples/ out of the tree, compiles each
# manifest with the installed ctrpp and each sample with plain cc and
# `pkg-config perflib` (the commands of samples/README.md), then runs
# test-samples on those copies: the providers against the installed
# library, the plugin in the installed perflibd.
set -eu
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perflib-samples.XXXXXX")
# A root perflibd runs plugins as nobody, whose hosts must reach the runtime directory.
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for dir in sdk ctrpp server-glue; do
        make -s -C "$top_builddir/$dir" install DESTDIR="$tmp/root" >>"$tmp/install.log" 2>&1 ||
                { cat "$tmp/install.log" >&2; fail "make install in $dir"; }
done
pcdir=$(find "$tmp/root" -name perflib.pc -printf '%h\n' | head -n 1)
[ -n "$pcdir" ] || fail "perflib.pc not installed"
prefix=$(sed -n 's/^prefix=//p' "$pcdir/perflib.pc")
# pkg-config as a user runs it, with the scratch root standing in for /.
export PKG_CONFIG_PATH="$pcdir"
pkgconfig() { command pkg-config --define-variable=prefix="$tmp/root$prefix" "$@"; }
libdir=$(pkgconfig --variable=libdir perflib)
PATH="$tmp/root$prefix/bin:$PATH"
export PATH
[ "$(command -v ctrpp)" = "$tmp/root$prefix/bin/ctrpp" ] || fail "ctrpp not installed"
perflibd=$(find "$tmp/root" -name perflibd -type f -perm -u+x | head -n 1)
[ -n "$perflibd" ] || fail "perflibd not installed"

cp -R "$top_srcdir/samples/common" "$top_srcdir/samples/usermode" \
        "$top_srcdir/samples/kernelmode" "$top_srcdir/samples/plugin" "$tmp/"
chmod -R u+w "$tmp/common" "$tmp/usermode" "$tmp/kernelmode" "$tmp/plugin"
# Only the sources: whatever an in-tree build left there is not the user's.
rm -f "$tmp"/*/*.h.tmp "$tmp"/usermode/example-usermode.h "$tmp"/usermode/*_strings.c \
        "$tmp"/kernelmode/example-kernelmode.h "$tmp"/kernelmode/*_strings.c \
        "$tmp"/plugin/sample-plugin.h "$tmp"/plugin/*_strings.c

cc=${CC:-cc}
san=${SAN_CFLAGS:-}
cflags="-Wall -Wextra -Werror $san $(pkgconfig --cflags perflib)"
libs=$(pkgconfig --libs perflib)

# The commands of samples/README.md, in each sample's directory.
(cd "$tmp/usermode" &&
        ctrpp example-usermode.man >/dev/null 2>"$tmp/ctrpp.log" &&
        $cc $cflags -o usermode-provider usermode-provider.c example-usermode_strings.c \
                ../common/sample-common.c -I../common $libs -lm) ||
        { cat "$tmp/ctrpp.log" >&2; fail "building samples/usermode"; }
(cd "$tmp/kernelmode" &&
        ctrpp example-kernelmode.man >/dev/null 2>"$tmp/ctrpp.log" &&
        $cc $cflags -o kernelmode-provider kernelmode-provider.c example-kernelmode_strings.c \
                ../common/sample-common.c -I../common $libs -lm) ||
        { cat "$tmp/ctrpp.log" >&2; fail "building samples/kernelmode"; }
(cd "$tmp/plugin" &&
        ctrpp -Werror sample-plugin.man >/dev/null &&
        $cc $cflags -shared -fPIC -fvisibility=hidden -o sample-plugin.so sample-plugin.c \
                sample-plugin_strings.c $libs -lm) ||
        fail "building samples/plugin"

# A plugin exports its entry point and its self-description, nothing else.
exported=$(nm -D --defined-only "$tmp/plugin/sample-plugin.so" | awk '$2 ~ /^[TDRVW]$/ {print $3}' | sort)
[ "$(echo $exported)" = "SamplePlugin_Description perflib_plugin_entry_v1" ] ||
        fail "sample-plugin.so exports: $exported"

# The consumer, once libpcq is installed (pcq.pc); test_consumer skips otherwise.
consumer="$tmp/consumer/pcq-consumer"
if pkgconfig --exists pcq; then
        cp -R "$top_srcdir/samples/consumer" "$tmp/" && chmod -R u+w "$tmp/consumer"
        (cd "$tmp/consumer" &&
                $cc $cflags $(pkgconfig --cflags pcq) -o pcq-consumer pcq-consumer.c \
                        $(pkgconfig --libs pcq)) ||
                fail "building samples/consumer"
fi

SAMPLES_USERMODE="$tmp/usermode/usermode-provider" \
SAMPLES_KERNELMODE="$tmp/kernelmode/kernelmode-provider" \
SAMPLES_PLUGIN="$tmp/plugin/sample-plugin.so" \
SAMPLES_CONSUMER="$consumer" \
PERFLIBD="$perflibd" \
SAMPLES_LD_LIBRARY_PATH="$libdir" \
        ./test-samples || fail "the samples built out of tree"
echo "PASS: samples built with the installed ctrpp and pkg-config perflib, and run"
