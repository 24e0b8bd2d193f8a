#!/bin/sh
# Every rule ctrpp enforces has a manifest in tests/ctrpp/bad/ whose
# comments say what must be reported and where:
#   <!-- expect: LINE: error: TEXT -->   (or warning:)
# ctrpp must print "MANIFEST:LINE:COL: error: ...TEXT...", exit 1 and write
# nothing when there is an error; exit 0 and write its outputs when there
# are only warnings, and fail with -Werror.  <!-- expect-no: TEXT --> says
# TEXT must appear nowhere in what ctrpp prints.
set -u
top_builddir=${top_builddir:-..}
top_srcdir=${top_srcdir:-..}
ctrpp="$top_builddir/ctrpp/ctrpp"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctrpp-diag.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
checked=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect_line MANIFEST STDERR LINE SEVERITY TEXT
expect_line() {
        if ! grep -F -- "$1:$3:" "$2" | grep -F -- " $4: " | grep -q -F -- "$5"; then
                fail "$(basename "$1"): no '$4' at line $3 containing '$5'; got:"
                sed 's/^/    /' "$2" >&2
        fi
}

# run_ctrpp MANIFEST DIR [ARGS...]: runs in DIR; stderr to DIR.err, status to $status
run_ctrpp() {
        man=$1 dir=$2
        shift 2
        rm -rf "$dir" && mkdir -p "$dir"
        (cd "$dir" && "$ctrpp" "$@" "$man") >"$dir.out" 2>"$dir.err"
        status=$?
}

for man in "$top_srcdir"/tests/ctrpp/bad/*.man; do
        name=$(basename "$man" .man)
        run_ctrpp "$man" "$tmp/$name"
        errors=$(grep -c '<!-- expect: [0-9]*: error:' "$man")
        grep -o '<!-- expect: [0-9]*: [a-z]*: .* -->' "$man" |
        sed 's/^<!-- expect: \([0-9]*\): \([a-z]*\): \(.*\) -->$/\1 \2 \3/' >"$tmp/$name.expect"
        while read -r line sev text; do
                checked=$((checked + 1))
                expect_line "$man" "$tmp/$name.err" "$line" "$sev" "$text"
        done <"$tmp/$name.expect"
        grep -o '<!-- expect-no: .* -->' "$man" | sed 's/^<!-- expect-no: \(.*\) -->$/\1/' |
        while read -r text; do
                if grep -q -F -- "$text" "$tmp/$name.err"; then
                        echo "FAIL: $name: '$text' printed:" >&2
                        sed 's/^/    /' "$tmp/$name.err" >&2
                        echo x
                fi
        done >"$tmp/$name.unwanted"
        checked=$((checked + $(grep -c -F -- '<!-- expect-no:' "$man")))
        failures=$((failures + $(wc -l <"$tmp/$name.unwanted")))
        if [ "$errors" -gt 0 ]; then
                [ "$status" -eq 1 ] || fail "$name: exit status $status, want 1"
                [ -z "$(ls -A "$tmp/$name")" ] || fail "$name: wrote $(ls "$tmp/$name") despite errors"
        else
                [ "$status" -eq 0 ] || fail "$name: exit status $status with only warnings"
                [ -n "$(ls -A "$tmp/$name")" ] || fail "$name: wrote nothing"
                run_ctrpp "$man" "$tmp/$name-werror" -Werror
                [ "$status" -eq 1 ] || fail "$name: -Werror: exit status $status, want 1"
                grep -q ' error: ' "$tmp/$name-werror.err" || fail "$name: -Werror printed no error"
                [ -z "$(ls -A "$tmp/$name-werror")" ] || fail "$name: -Werror still wrote files"
        fi
done
echo "$checked diagnostics checked, $failures failures"
[ "$failures" -eq 0 ]
