#!/bin/sh
# lodctr and unlodctr as built, against a registry in a temporary directory
# (so no root is needed): the spec's examples and the corpus install; a
# provider or counterset GUID installed twice, an invalid manifest and bad
# command lines are refused with the documented exit status and message and
# leave the registry byte for byte as it was; unlodctr removes by /M:, /G:
# and /P: and names the provider meant when one is close; concurrent runs
# are serialised by the lock.
set -u
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
lodctr="$top_builddir/server-glue/lodctr"
unlodctr="$top_builddir/server-glue/unlodctr"
man="$top_srcdir/tests/ctrpp"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lodctr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
reg="$tmp/registry"
failures=0
checks=0
unset PERFLIB_REGISTRY_DIR

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# run WANT-STATUS PROGRAM ARGS...: output in $tmp/out and $tmp/err
run() {
        want=$1
        shift
        "$@" >"$tmp/out" 2>"$tmp/err"
        status=$?
        checks=$((checks + 1))
        if [ "$status" -ne "$want" ]; then
                fail "$(basename "$1") ${2:-} ${3:-}: exit status $status, want $want"
                sed 's/^/    /' "$tmp/err" >&2
        fi
}

# expect FILE TEXT: FILE ($tmp/out or $tmp/err) has a line containing TEXT
expect() {
        checks=$((checks + 1))
        grep -q -F -- "$2" "$1" || { fail "no '$2' in $(basename "$1"):"; sed 's/^/    /' "$1" >&2; }
}

# A checksum of every name and byte in the registry (the lock file aside).
dirsum() {
        [ -d "$reg" ] || { echo none; return; }
        (cd "$reg" && find . -type f ! -name .lock | LC_ALL=C sort | xargs -r sha256sum) | sha256sum
}

unchanged() {
        checks=$((checks + 1))
        [ "$(dirsum)" = "$1" ] || fail "$2: the registry changed"
}

installed() { ls "$reg" 2>/dev/null | grep -c '\.man$'; }

# ---- command lines ----
for prog in "$lodctr" "$unlodctr"; do
        name=$(basename "$prog")
        for h in --help -h '/?'; do
                run 0 "$prog" "$h"
                expect "$tmp/out" "Usage: $name"
        done
        run 0 "$prog" --version
        expect "$tmp/out" "$name (perflib-linux)"
        run 2 "$prog"
        expect "$tmp/err" "Try '$name --help'"
        run 2 "$prog" --bogus
        run 2 "$prog" /X:whatever
        expect "$tmp/err" "is not supported"
        run 2 "$prog" --registry-dir
done
run 2 "$lodctr" /M:a.man /M:b.man
run 2 "$lodctr" counters.ini
expect "$tmp/err" ".ini files"
run 2 "$lodctr" /M:a.man dir1 dir2
run 2 "$lodctr" /M:
run 2 "$unlodctr" /G:x /P:y
run 2 "$unlodctr" mydriver
[ ! -e "$reg" ] || fail "a usage error created the registry"

# ---- install ----
usermode="$man/spec/example-usermode.man"
ab8e='{ab8e1320-965a-4cf9-9c07-fe25378c2a23}'
run 0 "$lodctr" --registry-dir "$reg" /M:"$usermode"
expect "$tmp/out" "installed provider $ab8e"
[ "$(stat -c %a "$reg")" = 755 ] || fail "registry mode $(stat -c %a "$reg"), want 755"
cmp -s "$usermode" "$reg/$ab8e.man" || fail "$ab8e.man is not a copy of the manifest"
expect "$reg/$ab8e.info" "manifest=$(cd "$(dirname "$usermode")" && pwd -P)/example-usermode.man"
[ "$(stat -c %a "$reg/$ab8e.man")" = 644 ] || fail "$ab8e.man is not mode 644"

# The kernel-mode example has the user-mode example's GUIDs.
export PERFLIB_REGISTRY_DIR="$reg"
sum=$(dirsum)
run 1 "$lodctr" -m:"$man/spec/example-kernelmode.man"
expect "$tmp/err" "example-kernelmode.man: provider $ab8e (Counters) is already installed"
expect "$tmp/err" "example-usermode.man); uninstall it first with unlodctr /G:$ab8e"
unchanged "$sum" "duplicate provider"
run 1 "$lodctr" /M:"$usermode"
unchanged "$sum" "the same manifest twice"

# The corpus: what duplicates an installed GUID is refused, naming it.
for m in "$man"/corpus/*.man "$man"/good/*.man; do
        base=$(basename "$m")
        case $base in
        nodejs__node__node_perfctr_provider.man)
                # Its counterset is jxcore's, under another provider GUID.
                sum=$(dirsum)
                run 1 "$lodctr" /M:"$m"
                expect "$tmp/err" "counterset {3a22a8ec-297c-48ac-ab15-33ec93033fd8} (Node.js) is already installed by provider {1e2e15d7-3760-470e-8699-b9db5248edd5}"
                expect "$tmp/err" "jxcore__jxcore__node_perfctr_provider.man; uninstall it first with unlodctr"
                unchanged "$sum" "$base" ;;
        nodejs__node__node_perfctr_provider.v0.10-*)
                # The provider GUID of jxcore's, which forked it.
                sum=$(dirsum)
                run 1 "$lodctr" /M:"$m"
                expect "$tmp/err" "$base: provider {1e2e15d7-3760-470e-8699-b9db5248edd5} (Counters) is already installed"
                unchanged "$sum" "$base" ;;
        *)
                run 0 "$lodctr" /M:"$m"
                expect "$tmp/out" "from $m as $reg/" ;;
        esac
done
[ "$(installed)" -eq 16 ] || fail "$(installed) providers installed, want 16"

# Invalid manifests: the diagnostics as ctrpp prints them, nothing changed.
sum=$(dirsum)
for m in "$man"/bad/*.man; do
        grep -q '<!-- expect: [0-9]*: error:' "$m" || continue
        run 1 "$lodctr" /M:"$m"
        line=$(grep -o '<!-- expect: [0-9]*: error:' "$m" | head -n 1 | tr -dc 0-9)
        expect "$tmp/err" "$m:$line:"
        expect "$tmp/err" "lodctr: $m: "
        expect "$tmp/err" "; nothing changed"
done
# The same "did you mean" as ctrpp's, from the same validator.
run 1 "$lodctr" /M:"$man/bad/typo-counter-type.man"
expect "$tmp/err" "The value 'perf_counter_rawcont' is not one of the 38 values the schema allows; did you mean 'perf_counter_rawcount'?"
run 1 "$lodctr" /M:"$tmp/nonexistent.man"
expect "$tmp/err" "nonexistent.man: cannot read it: No such file or directory"
run 1 "$lodctr" /M:"$man/good/vista-no-namespace.man" "$tmp/no-such-dir"
expect "$tmp/err" "not an applicationIdentityDirectory"
unchanged "$sum" "invalid input"

# The applicationIdentityDirectory is kept, absolute, in the sidecar.
vista='{3c2b1a09-8765-4321-a0b1-c2d3e4f50617}'
mkdir "$tmp/app"
run 0 "$unlodctr" /G:"$vista"
run 0 "$lodctr" /M:"$man/good/vista-no-namespace.man" "$tmp/app/"
expect "$reg/$vista.info" "applicationIdentityDirectory=$(cd "$tmp/app" && pwd -P)"

# --owner names the user whose providers may publish it, as a uid; the user
# running lodctr may name itself; an unknown user installs nothing.
me=$(id -un)
run 0 "$unlodctr" /G:"$vista"
run 0 "$lodctr" --owner "$me" /M:"$man/good/vista-no-namespace.man"
expect "$reg/$vista.info" "owner=$(id -u)"
run 0 "$unlodctr" /G:"$vista"
run 1 "$lodctr" --owner=no-such-user-here /M:"$man/good/vista-no-namespace.man"
expect "$tmp/err" "no such user"
[ ! -e "$reg/$vista.man" ] || fail "--owner of an unknown user installed $vista"
run 2 "$lodctr" --owner
expect "$tmp/err" "needs a user"
run 2 "$unlodctr" --owner "$me" /G:"$vista"
run 0 "$lodctr" /M:"$man/good/vista-no-namespace.man" "$tmp/app/"

# ---- remove ----
run 0 "$unlodctr" /M:"$usermode"
expect "$tmp/out" "removed provider $ab8e"
[ ! -e "$reg/$ab8e.man" ] && [ ! -e "$reg/$ab8e.info" ] || fail "/M: left $ab8e behind"
sum=$(dirsum)
run 1 "$unlodctr" /M:"$usermode"
expect "$tmp/err" "provider $ab8e (Counters) is not installed"
run 1 "$unlodctr" /G:'{00000000-1111-2222-3333-444444444444}'
expect "$tmp/err" "{00000000-1111-2222-3333-444444444444} is not installed"
checks=$((checks + 1))
grep -q "did you mean" "$tmp/err" && fail "/G: a suggestion for a GUID near none"
# A digit mistyped: the installed GUID meant.
run 1 "$unlodctr" /G:'{3c2b1a09-8765-4321-a0b1-c2d3e4f50618}'
expect "$tmp/err" "unlodctr: provider {3c2b1a09-8765-4321-a0b1-c2d3e4f50618} is not installed (no $reg/{3c2b1a09-8765-4321-a0b1-c2d3e4f50618}.man); did you mean '$vista'?"
run 1 "$unlodctr" /G:not-a-guid
expect "$tmp/err" "'not-a-guid' is not a GUID"
run 1 "$unlodctr" /P:NoSuchProvider
expect "$tmp/err" "no installed provider is named 'NoSuchProvider' (in $reg)"
checks=$((checks + 1))
grep -q "did you mean" "$tmp/err" && fail "/P: a suggestion for a name near none"
run 1 "$unlodctr" /P:KernelCounterSample
expect "$tmp/err" "unlodctr: no installed provider is named 'KernelCounterSample' (in $reg); did you mean 'KernelCountersSample'?"
run 1 "$unlodctr" /M:"$man/bad/malformed.man"
unchanged "$sum" "failed removals"
run 0 "$unlodctr" /g:FFEEAADD-965A-4CF9-9C07-FE25378C2A23
[ ! -e "$reg/{ffeeaadd-965a-4cf9-9c07-fe25378c2a23}.man" ] || fail "/G: did not remove ucs"
run 0 "$unlodctr" /P:kernelcounterssample
[ ! -e "$reg/{d2ffffff-965a-4cf9-9c07-fe25378c2a23}.man" ] || fail "/P: did not remove kcs"
for m in "$man"/corpus/*.man "$man"/good/*.man; do
        case $(basename "$m") in
        *ucs.cpp.man|*kcs.man|nodejs__node__node_perfctr_provider.*) ;;
        *) run 0 "$unlodctr" /M:"$m" ;;
        esac
done
[ "$(installed)" -eq 0 ] || fail "$(installed) providers left, want 0"
[ -z "$(ls "$reg")" ] || fail "files left in the registry: $(ls "$reg")"

# ---- concurrency: the lock serialises runs ----
# Eight manifests with GUIDs of their own, each installed while eight more
# runs try the first one again: all eight land, the first exactly once.
for i in 0 1 2 3 4 5 6 7; do
        sed -e "s/c2d3e4f506/c2d3e4f5a$i/g" "$man/good/vista-no-namespace.man" >"$tmp/p$i.man"
done
for i in 0 1 2 3 4 5 6 7; do
        "$lodctr" /M:"$tmp/p$i.man" >/dev/null 2>"$tmp/p$i.err" &
        "$lodctr" /M:"$tmp/p0.man" >/dev/null 2>"$tmp/again$i.err" &
done
wait
checks=$((checks + 1))
[ "$(installed)" -eq 8 ] || fail "$(installed) of 8 concurrent installs landed"
refused=$(grep -l 'is already installed' "$tmp/p0.err" "$tmp"/again*.err | wc -l)
[ "$refused" -eq 8 ] || fail "p0 tried 9 times at once: $refused refusals, want 8"
for i in 0 1 2 3 4 5 6 7; do "$unlodctr" /M:"$tmp/p$i.man" >/dev/null & done
wait
[ "$(installed)" -eq 0 ] || fail "$(installed) left after concurrent removals"
ls -A "$reg" | grep -q '^\.lodctr\.' && fail "temporary files left behind"

# ---- no root needed ----
# Run as root (a container, CI), the install and removal are also done as
# nobody, in a registry nobody owns.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
        nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
        chmod 755 "$tmp"
        mkdir "$tmp/nobody" && chown 65534:65534 "$tmp/nobody"
        cp "$usermode" "$tmp/usermode.man" && chmod 644 "$tmp/usermode.man"
        run 0 $nobody "$lodctr" --registry-dir "$tmp/nobody/registry" /M:"$tmp/usermode.man"
        [ "$(stat -c %U "$tmp/nobody/registry/$ab8e.man")" != root ] || fail "nobody's install is root's"
        run 0 $nobody "$unlodctr" --registry-dir "$tmp/nobody/registry" /P:Counters
        [ ! -e "$tmp/nobody/registry/$ab8e.man" ] || fail "nobody's removal left the manifest"
fi

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
