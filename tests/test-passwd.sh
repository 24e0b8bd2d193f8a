#!/bin/sh
# perflib-passwd as built, on files in a temporary directory: adds with the
# NT hash of MS-NLMP's example ("Password"), updates, deletes, mode 0600;
# the password from standard input and, on a pty, asked twice (a wrong
# confirmation changes nothing); bad names and command lines refused with
# exit status 2; PERFLIB_ACCOUNTS and -f; concurrent runs lose no update;
# a reader during a stream of updates sees only whole files.
set -u
top_builddir=${top_builddir:-..}
passwd="$top_builddir/server-glue/perflib-passwd"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/passwd.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
acc="$tmp/accounts"
failures=0
checks=0
unset PERFLIB_ACCOUNTS
pw_hash=a4f49c406510bdcab6824ee7c30fd852

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# run WANT-STATUS STDIN ARGS...: perflib-passwd's output in $tmp/out, $tmp/err
run() {
        want=$1 input=$2
        shift 2
        printf '%s' "$input" | "$passwd" "$@" >"$tmp/out" 2>"$tmp/err"
        status=$?
        checks=$((checks + 1))
        if [ "$status" -ne "$want" ]; then
                fail "perflib-passwd $*: exit status $status, want $want"
                sed 's/^/    /' "$tmp/err" >&2
        fi
}

# has FILE TEXT: FILE has a line that is exactly TEXT
has() {
        checks=$((checks + 1))
        grep -q -x -F -- "$2" "$1" || { fail "no line '$2' in $1:"; sed 's/^/    /' "$1" >&2; }
}

hasnt() {
        checks=$((checks + 1))
        ! grep -q -i -- "$2" "$1" || fail "'$2' still in $1"
}

# ---- command lines ----
run 0 '' --help
grep -q 'Exit status' "$tmp/out" || fail "--help says nothing of the exit status"
run 0 '' --version
grep -q '^perflib-passwd (' "$tmp/out" || fail "--version: $(cat "$tmp/out")"
run 2 '' -f "$acc"
grep -q 'no user name' "$tmp/err" || fail "no user: $(cat "$tmp/err")"
run 2 '' -f "$acc" alice bob
run 2 '' --bogus alice
for bad in 'a:b' '' '#root' ' lead' 'trail ' "$(printf 'tab\tname')" \
        "$(printf '%0105d' 0)"; do
        run 2 'Password\n' -f "$acc" "$bad"
        grep -q 'invalid user name' "$tmp/err" || fail "'$bad': $(cat "$tmp/err")"
done
[ ! -e "$acc" ] || fail "a refused command created the file"

# ---- add, update, delete, from standard input ----
run 0 'Password
' -f "$acc" alice
has "$acc" "alice:$pw_hash:"
checks=$((checks + 1))
[ "$(stat -c %a "$acc")" = 600 ] || fail "mode $(stat -c %a "$acc"), want 600"
run 0 'Password' -f "$acc" bob          # no final newline
has "$acc" "bob:$pw_hash:"
run 0 'other
' -f "$acc" ALICE
# The account keeps its spelling, with the new password's hash.
checks=$((checks + 1))
grep -q -x -E 'alice:[0-9a-f]{32}:' "$acc" || fail "alice was not updated: $(cat "$acc")"
hasnt "$acc" "^alice:$pw_hash"
has "$acc" "bob:$pw_hash:"
run 1 '' -f "$acc" carol
grep -q 'no password' "$tmp/err" || fail "empty stdin: $(cat "$tmp/err")"
run 1 '
' -f "$acc" carol
grep -q 'empty password' "$tmp/err" || fail "empty line: $(cat "$tmp/err")"
run 1 "$(printf '%0257d' 0)" -f "$acc" carol
grep -q 'longer than 256' "$tmp/err" || fail "long password: $(cat "$tmp/err")"
hasnt "$acc" carol
run 0 '' -f "$acc" -x BOB
hasnt "$acc" bob
run 1 '' -f "$acc" -x bob
grep -q "no account 'bob'" "$tmp/err" || fail "delete twice: $(cat "$tmp/err")"
PERFLIB_ACCOUNTS="$tmp/env-accounts" run 0 'Password' dave
has "$tmp/env-accounts" "dave:$pw_hash:"
printf 'broken\n' >"$tmp/broken" && chmod 600 "$tmp/broken"
run 1 'Password' -f "$tmp/broken" erin
grep -q "broken:1: no ':'" "$tmp/err" || fail "broken file: $(cat "$tmp/err")"

# ---- the terminal: asked twice without echo ----
if command -v python3 >/dev/null; then
        # pty PASSWORD CONFIRMATION USER: perflib-passwd on a pty, its status
        pty() {
                python3 - "$passwd" "$acc" "$@" <<'EOF'
import os, pty, signal, sys
prog, acc, first, second, user = sys.argv[1:]
signal.alarm(60)    # a prompt that never comes fails the test, not hangs it
pid, fd = pty.fork()
if pid == 0:
    os.execv(prog, [prog, "-f", acc, user])
def expect(what):
    seen = b""
    while what not in seen:
        seen += os.read(fd, 1024)
    return seen
expect(b"New password: ")
os.write(fd, first.encode() + b"\n")
seen = expect(b"Retype new password: ")
os.write(fd, second.encode() + b"\n")
rest = b""
try:
    while True:
        chunk = os.read(fd, 1024)
        if not chunk:
            break
        rest += chunk
except OSError:
    pass
_, status = os.waitpid(pid, 0)
# Echo off: the passwords never come back from the terminal.
if first.encode() in seen + rest:
    sys.exit(99)
sys.exit(os.waitstatus_to_exitcode(status))
EOF
        }
        pty Password Password frank
        st=$?; checks=$((checks + 1))
        [ "$st" -eq 0 ] || fail "pty, matching passwords: status $st"
        has "$acc" "frank:$pw_hash:"
        pty Password Passwort gina
        st=$?; checks=$((checks + 1))
        [ "$st" -eq 1 ] || fail "pty, passwords that differ: status $st"
        hasnt "$acc" gina
fi

# ---- concurrent runs lose no update ----
rm -f "$acc"
for i in 1 2 3 4 5 6 7 8; do
        printf 'Password' | "$passwd" -f "$acc" "user$i" 2>>"$tmp/err-c" &
done
wait
for i in 1 2 3 4 5 6 7 8; do has "$acc" "user$i:$pw_hash:"; done

# ---- a reader sees the old file or the new one, never part of one ----
(
        for i in $(seq 1 60); do
                printf 'pw%s' "$i" | "$passwd" -f "$acc" "user$((i % 8 + 1))" || exit 1
        done
) &
writer=$!
torn=0 reads=0
while kill -0 "$writer" 2>/dev/null; do
        reads=$((reads + 1))
        lines=$(grep -c -E "^user[1-8]:[0-9a-f]{32}:$" "$acc" 2>/dev/null)
        [ "$lines" = 8 ] && [ "$(wc -l <"$acc")" = 8 ] || torn=$((torn + 1))
done
wait "$writer" || fail "the writer failed"
checks=$((checks + 1))
[ "$torn" -eq 0 ] || fail "a reader saw $torn partial files"
checks=$((checks + 1))
[ "$reads" -gt 1 ] || fail "the reader read $reads times only, proving nothing"
checks=$((checks + 1))
[ -z "$(find "$tmp" -name 'accounts.??????')" ] || fail "temporary files left behind"

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
