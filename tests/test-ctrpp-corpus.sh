#!/bin/sh
# ctrpp accepts what Microsoft's ctrpp accepts: both example manifests of
# the spec, every manifest of the corpus (tests/ctrpp/corpus/SOURCES.md) and
# our own good/ manifests compile with exit status 0 and no error, and what
# they generate compiles as C and as C++ with -Wall -Wextra -Werror against
# the SDK headers alone.  Manifests whose counters are laid out by
# <structs> need the provider's own struct declarations, so for those only
# the compile of the resource file is checked.
#
# The project's shared corpus, when it is beside the checkout (as in CI) or
# named by $CTRPP_SHARED_CORPUS, is compiled too: it also holds the one
# manifest whose licence kept it out of tests/ctrpp/corpus.
set -u
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
ctrpp="$top_builddir/ctrpp/ctrpp"
cc=${CC:-cc}
cxx=${CXX:-c++}
inc="-I$top_srcdir/sdk/include/perflib"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctrpp-corpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
n=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

compile() {
        # compile NAME DIR FILE LANG
        if [ "$4" = c ]; then
                $cc -std=c11 -Wall -Wextra -Werror ${SAN_CFLAGS:-} $inc -I"$2" -c "$3" -o "$3.o" 2>"$3.log"
        else
                $cxx -x c++ -std=c++11 -Wall -Wextra -Werror ${SAN_CFLAGS:-} $inc -I"$2" -c "$3" -o "$3.o" 2>"$3.log"
        fi || { fail "$1: $(basename "$3") does not compile as $4:"; sed 's/^/    /' "$3.log" >&2; }
}

shared=${CTRPP_SHARED_CORPUS:-$top_srcdir/../shared/corpus/manifests}
if [ -d "$shared" ]; then
        echo "also compiling the shared corpus in $shared"
else
        echo "no shared corpus at $shared; compiling the copies in tests/ctrpp only"
        shared=
fi

for man in "$top_srcdir"/tests/ctrpp/spec/*.man "$top_srcdir"/tests/ctrpp/corpus/*.man \
           "$top_srcdir"/tests/ctrpp/good/*.man ${shared:+"$shared"/*.man}; do
        name=$(basename "$man" .man) out=$(basename "$man" .man)
        case $man in "$shared"/*) [ -n "$shared" ] && name=shared-$name ;; esac
        dir="$tmp/$name"
        mkdir -p "$dir"
        n=$((n + 1))
        if ! (cd "$dir" && "$ctrpp" "$man") >"$dir.out" 2>"$dir.err"; then
                fail "$name: ctrpp failed:"
                sed 's/^/    /' "$dir.err" >&2
                continue
        fi
        if grep -q ' error: ' "$dir.err"; then
                fail "$name: errors reported with exit status 0"
        fi
        [ -s "$dir/$out.h" ] && [ -s "$dir/${out}_strings.c" ] || { fail "$name: outputs missing"; continue; }
        compile "$name" "$dir" "$dir/${out}_strings.c" c
        if grep -q 'field' "$man"; then
                continue
        fi
        printf '#include "%s.h"\nint main(void) { return 0; }\n' "$out" >"$dir/use.c"
        cp "$dir/use.c" "$dir/use.cc"
        compile "$name" "$dir" "$dir/use.c" c
        compile "$name" "$dir" "$dir/use.cc" c++
done
echo "$n manifests compiled, $failures failures"
[ "$failures" -eq 0 ]
