#!/bin/bash
# README.md's "Writing a provider" section, followed as a newcomer follows
# it: every fenced block of the section, in order, in a shell of its own
# started in an empty directory.  A block marked "```LANG file=NAME" is a
# file the reader writes (here: at that point, in the current directory);
# "```sh" blocks are typed into the shell; "```text" blocks are output
# shown; any other block fails the test, so none escapes it.  The section
# runs twice: in the build tree's environment (perflib-env.sh) and against
# a fresh install into a temporary prefix, configured the way this tree
# was, with only that prefix on the paths.  Each time it checks what the
# README promises: the sources build with -Wall -Wextra -Werror, typeperf
# shows three samples of the program's "outbox" and the plugin's "inbox" at
# 42, perflibd logs the plugin's start and stop and no error, and the
# programs stopped as the section stops them exit 0.  Also: the build's man
# pages, and that make install runs ldconfig exactly when it should.
set -euo pipefail
# Absolute: the install half configures from another directory (make
# distcheck passes relative ones).
top_builddir=$(cd "${top_builddir:-..}" && pwd)
top_srcdir=$(cd "${top_srcdir:-..}" && pwd)
readme=$top_srcdir/README.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perflib-readme.XXXXXX")
# A root perflibd runs plugins as nobody, whose hosts must reach the runtime directory.
chmod 755 "$tmp"
cleanup() {
        local pid
        # Whatever a failed run left behind, started by this test only.
        for pid in $(cat "$tmp"/*/pids 2>/dev/null); do
                kill -TERM "$pid" 2>/dev/null || true
        done
        rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset MAKEFLAGS MFLAGS LD_LIBRARY_PATH PERFLIB_SOCKET

# ---- the section as a script: the harness (prelude.sh) sourced first ----

# extract DIR: DIR/blocks.sh runs the section; DIR/block-N.sh is the Nth
# shell block as written, for messages.
extract() {
        awk -v dir="$1" '
        function bad(what) { printf "README.md:%d: %s\n", NR, what > "/dev/stderr"; err = 1 }
        fence && /^```[ \t]*$/ {
                if (kind == "sh") print "} >\"$__dir/" n ".out\" 2>&1; __after " n
                else if (kind == "file") print "__README_EOF__"
                fence = 0; next
        }
        fence {
                if (kind == "sh") { print; print > (dir "/block-" n ".sh") }
                else if (kind == "file") print
                next
        }
        /^```/ {
                fence = 1; kind = "skip"
                if (!section) next
                nw = split(substr($0, 4), w, /[ \t]+/); file = ""
                for (i = 2; i <= nw; i++) if (w[i] ~ /^file=./) file = substr(w[i], 6)
                if (file != "") {
                        kind = "file"; files++
                        print "__file " file "; cat >" file " <<'\''__README_EOF__'\''"
                } else if (w[1] == "sh") {
                        kind = "sh"; n++
                        print "__before " n "; {"
                } else if (w[1] != "text")
                        bad("a \"```" w[1] "\" block with no file=NAME: the test cannot check it")
                next
        }
        /^## / { section = /^## Writing a provider/; if (section) found = 1 }
        END {
                if (fence) bad("unterminated fenced block")
                if (!found) bad("no \"## Writing a provider\" section")
                if (!n || !files) bad("no shell block or no file in the section")
                exit err
        }' "$readme" >"$1/blocks.sh"
}

# The harness the blocks run in.  set -e: a failing command fails the test
# (the EXIT trap says which block).  Between blocks it does what the time a
# person takes to read on does: waits, boundedly, until what the blocks
# started is up (perflibd's socket; the program's or the plugin's instance).
cat >"$tmp/prelude.sh" <<'EOF'
set -e
__dir=$(pwd)
__cur=0
# The trap may run inside a block's redirection: it writes to fd 3.
exec 3>&1
__on_exit() {
        local s=$?
        [ "$s" -eq 0 ] && return 0
        {
                echo "the README's block $__cur failed (exit status $s):"
                sed 's/^/    /' "$__dir/block-$__cur.sh"
                echo "its output:"
                sed 's/^/    /' "$__dir/$__cur.out" 2>/dev/null || true
        } >&3
}
trap __on_exit EXIT
__file() { echo "### writes $1"; }
__before() { __cur=$1; echo "### block $1"; cat "$__dir/block-$1.sh"; }
__until() { # WHAT COMMAND...: polls COMMAND for up to 30 s
        local what=$1 i
        shift
        for i in $(seq 150); do
                "$@" >/dev/null 2>&1 && return 0
                sleep 0.2
        done
        echo "### harness: no $what after 30 s"
}
__has_instance() { typeperf -qx "My Counterset" | grep -qF "(${1})"; }
__after() {
        local listing pid started=""
        set +e
        echo "### output of block $1"
        cat "$__dir/$1.out"
        listing=$(jobs -l)
        for pid in $(jobs -p); do
                grep -qx "$pid" "$__dir/pids" 2>/dev/null && continue
                echo "$pid" >>"$__dir/pids"
                started="$started $(printf '%s\n' "$listing" | grep -w -- "$pid")"
        done
        case $started in
        *perflibd*) __until "perflibd socket" test -S "$PERFLIB_RUNTIME_DIR/perflibd.sock" ;;
        esac
        case $started in
        *myprovider*) __until "outbox instance" __has_instance outbox ;;
        esac
        if [ -e "$(pkg-config --variable=plugindir perflib)/myqueues.so" ]; then
                __until "inbox instance" __has_instance inbox
        fi
        set -e
}
# After the last block: how each program the section started ended (PID
# STATUS), once the section's own commands stopped it; one it left running
# is stopped here and fails the test.
__finish() {
        local pid i s
        for pid in $(cat "$__dir/pids" 2>/dev/null); do
                for i in $(seq 100); do
                        kill -0 "$pid" 2>/dev/null || break
                        sleep 0.1
                done
                if kill -0 "$pid" 2>/dev/null; then
                        echo "### harness: pid $pid still runs after the last block"
                        kill -KILL "$pid" 2>/dev/null
                fi
                s=0
                wait "$pid" || s=$?
                echo "$pid $s" >>"$__dir/exits"
        done
}
EOF

# ---- what the run must show ----

# csv_column FILE NAME: the values of the column whose header holds NAME, in
# typeperf's CSV output FILE.
csv_column() {
        want=$2 awk 'BEGIN { FS = "\",\""; want = ENVIRON["want"] }
        /^"/ { sub(/^"/, ""); sub(/"\r?$/, "")
               if (!hdr) { hdr = 1; for (i = 1; i <= NF; i++) if (index($i, want)) c = i; next }
               if (c) print $c }' "$1"
}

# check_run DIR: the promises of the section, after DIR/blocks.sh ran.
check_run() {
        local d=$1 work out rows v prev seen_outbox=0 last="" c log errors
        work=$(find "$d" -mindepth 1 -maxdepth 1 -type d | head -n 1)
        [ -n "$work" ] && [ -f "$work/queue.h" ] || fail "$d: the section made no directory with ctrpp's queue.h"
        # Every C file the section writes builds warning-free.
        for c in "$work"/*.c; do
                case $c in *_strings.c) continue ;; esac
                cc -Wall -Wextra -Werror -c -o /dev/null -I"$work" $(pkg-config --cflags perflib) "$c" ||
                        fail "$d: $(basename "$c") does not build with -Wall -Wextra -Werror"
        done
        for out in "$d"/*.out; do
                grep -q '^"(PDH-CSV' "$out" || continue
                last=$out
                rows=$(grep -c '^"[0-9]' "$out" || true)
                [ "$rows" -eq 3 ] || fail "$d: typeperf showed $rows samples, not 3: $(cat "$out")"
                for v in $(csv_column "$out" '(inbox)\My Counter'); do
                        [ "$v" = 42.000000 ] || fail "$d: inbox's My Counter is $v, not 42"
                done
                prev=3
                for v in $(csv_column "$out" '(outbox)\My Counter'); do
                        awk -v v="$v" -v p="$prev" 'BEGIN { exit !(v >= p) }' ||
                                fail "$d: outbox's My Counter went from $prev to $v"
                        prev=$v
                done
                if [ -n "$(csv_column "$out" '(outbox)\Items/sec')" ]; then
                        csv_column "$out" '(outbox)\Items/sec' | awk '$1 > 0 { ok = 1 } END { exit !ok }' ||
                                fail "$d: outbox's Items/sec stayed 0: $(cat "$out")"
                        seen_outbox=1
                fi
        done
        [ "$seen_outbox" = 1 ] || fail "$d: no typeperf run showed the program's outbox and its Items/sec"
        [ -n "$last" ] && [ -n "$(csv_column "$last" '(inbox)\My Counter')" ] &&
                [ -n "$(csv_column "$last" '(outbox)\My Counter')" ] ||
                fail "$d: the last typeperf run does not show both inbox and outbox"
        log=$(find "$work" -name perflibd.log | head -n 1)
        [ -n "$log" ] || fail "$d: no perflibd.log"
        grep -q 'plugin myqueues.so: started "myqueues"' "$log" || fail "$d: the plugin did not start: $(cat "$log")"
        grep -q 'plugin myqueues.so: stopped "myqueues"' "$log" || fail "$d: the plugin was not stopped: $(cat "$log")"
        errors=$(grep -E ': (emerg|alert|crit|error): ' "$log" || true)
        # Also "cannot load: ... file too short", which perflibd logged when it
        # acted on a plugin file install(1) was still writing (issue 22, item 3).
        [ -z "$errors" ] || fail "$d: perflibd logged an error: $errors"
        [ -s "$d/exits" ] || fail "$d: the section started no background program"
        if awk '$2 != 0 { exit 1 }' "$d/exits"; then :; else
                fail "$d: a program the section started and stopped did not exit 0 (pid status: $(cat "$d/exits"))"
        fi
}

# follow NAME SETUP: runs the section in a fresh bash whose environment
# the shell code SETUP made, in $tmp/NAME, and checks it.
follow() {
        local d=$tmp/$1
        mkdir -p "$d"
        extract "$d" || fail "README.md: cannot extract the section"
        { cat "$tmp/prelude.sh"; cat "$d/blocks.sh"; echo __finish; } >"$d/run.sh"
        if ! (eval "$2" && export PATH="$tmp/bin:$PATH" && cd "$d" &&
                timeout 300 bash ./run.sh >"$d/transcript" 2>&1); then
                cat "$d/transcript" >&2
                fail "$1: the README's section stopped"
        fi
        (eval "$2" && export PATH="$tmp/bin:$PATH" && check_run "$d") || {
                cat "$d/transcript" >&2
                exit 1
        }
        echo "ok: the section, $1"
}

# The compiler of this build, with its sanitizers (a program linked with
# an ASan library must be ASan itself), as the "cc" the section types.
mkdir "$tmp/bin"
printf '#!/bin/sh\nexec %s %s "$@"\n' "${CC:-cc}" "${SAN_CFLAGS:-}" >"$tmp/bin/cc"
chmod +x "$tmp/bin/cc"

# ---- 1. the build tree, through perflib-env.sh ----

env_script=$top_builddir/perflib-env.sh
[ -f "$env_script" ] || fail "no $env_script"
state=$top_builddir/state
# The build's state is the reader's own: never take it over.
if [ -e "$state/plugins/myqueues.so" ] ||
        (. "$env_script" && timeout 10 typeperf -q >/dev/null 2>&1); then
        echo "SKIP: a perflibd or the tutorial's plugin is using $state" >&2
        exit 77
fi
(
        . "$env_script"
        [ "$(command -v ctrpp)" = "$top_builddir/ctrpp/ctrpp" ] || fail "perflib-env.sh: ctrpp is $(command -v ctrpp)"
        [ "$(command -v perflibd)" = "$top_builddir/server-glue/perflibd" ] || fail "perflib-env.sh: no perflibd"
        [ "$(command -v typeperf)" = "$top_builddir/tools/typeperf" ] || fail "perflib-env.sh: no typeperf"
        [ "$(pkg-config --variable=plugindir perflib)" = "$PERFLIB_PLUGIN_DIR" ] ||
                fail "perflib-env.sh: pkg-config's plugindir is not PERFLIB_PLUGIN_DIR"
        path_before=$PATH
        . "$env_script"
        [ "$PATH" = "$path_before" ] || fail "perflib-env.sh adds to PATH again when sourced twice"
        [ -e "$PERFLIB_PLUGIN_DIR/processor.so" ] || fail "the build's plugin directory has no Linux providers"
        # Issue 22, item 7: the build's man/ holds the pages, for man -l and MANPATH.
        [ -f "$top_builddir/man/typeperf.1" ] || fail "no man/typeperf.1 in the build tree"
        if command -v man >/dev/null; then
                [ "$(readlink -f "$(man -w typeperf)")" = "$(readlink -f "$top_builddir/man/man1/typeperf.1")" ] ||
                        fail "perflib-env.sh: man typeperf is $(man -w typeperf)"
        fi
)
follow build-env ". '$env_script'"

# ---- 2. a fresh install into a prefix of its own ----

# A second build of these sources needs them unconfigured (VPATH).
if [ -e "$top_srcdir/config.status" ]; then
        echo "SKIP: the install half, with the sources configured in place" >&2
        exit 77
fi
# Configured as this build was (sanitizers and all), but for the prefix;
# make install's ldconfig is a stand-in that notes its calls.
printf '#!/bin/sh\necho ldconfig "$@" >>"%s"\n' "$tmp/ldconfig.calls" >"$tmp/ldconfig"
chmod +x "$tmp/ldconfig"
eval "set -- $(cd "$top_builddir" && ./config.status --config)"
args=()
for a; do
        # make distcheck's own --srcdir (relative) and install dirs are not ours.
        case $a in --prefix=*|--prefix|prefix=*|--srcdir=*|--*dir=*) continue ;; esac
        args+=("$a")
done
prefix=$tmp/prefix
mkdir "$tmp/build"
(cd "$tmp/build" && "$top_srcdir/configure" --prefix="$prefix" "${args[@]}" &&
        make -j2 && make install LDCONFIG="$tmp/ldconfig") >"$tmp/install.log" 2>&1 ||
        { tail -n 40 "$tmp/install.log" >&2; fail "configure, make, make install into $prefix"; }
for f in bin/ctrpp bin/typeperf sbin/perflibd lib/pkgconfig/perflib.pc share/man/man1/typeperf.1; do
        [ -e "$prefix/$f" ] || fail "make install put no $f in the prefix"
done
# The installed programs find the installed libraries by themselves.
"$prefix/bin/typeperf" --version >/dev/null || fail "the installed typeperf does not start"
"$prefix/sbin/perflibd" --help >/dev/null || fail "the installed perflibd does not start"
if command -v man >/dev/null; then
        [ "$(MANPATH=$prefix/share/man: man -w typeperf)" = "$prefix/share/man/man1/typeperf.1" ] ||
                fail "with the prefix's MANPATH, man typeperf is not the installed page"
fi

# make install's ldconfig (issue 22, item 2): after an install as root into
# one of the dynamic linker's own directories, and never otherwise.
[ ! -e "$tmp/ldconfig.calls" ] || fail "make install into $prefix ran ldconfig"
sysdir=$("$tmp/build/libtool" --config | sed -n 's/^sys_lib_dlsearch_path_spec="\([^ ]*\).*/\1/p')
[ -n "$sysdir" ] || fail "libtool names no system library directory"
hook() { make -s -C "$tmp/build" install-exec-hook LDCONFIG="$tmp/ldconfig" "$@" >/dev/null; }
hook libdir="$sysdir" DESTDIR="$tmp/root"
[ ! -e "$tmp/ldconfig.calls" ] || fail "make install ran ldconfig under DESTDIR"
hook libdir="$sysdir"
if [ "$(id -u)" = 0 ]; then
        [ -e "$tmp/ldconfig.calls" ] || fail "make install as root into $sysdir did not run ldconfig"
else
        [ ! -e "$tmp/ldconfig.calls" ] || fail "make install ran ldconfig as a user"
fi

# The paths of README.md's "install with no root"; the runtime directory is
# the test's own, apart from any perflibd of the machine's.
follow install "
        unset PERFLIB_REGISTRY_DIR PERFLIB_PLUGIN_DIR PERFLIB_PLUGIN_HOST PERFLIB_PLUGIN_CONFIG
        export PATH='$prefix/bin:$prefix/sbin':\$PATH
        export PKG_CONFIG_PATH='$prefix/lib/pkgconfig' MANPATH='$prefix/share/man:'
        export LD_LIBRARY_PATH='$prefix/lib'
        export PERFLIB_RUNTIME_DIR='$tmp/install-run'
        [ \"\$(command -v typeperf)\" = '$prefix/bin/typeperf' ]"
echo "PASS: README.md's provider section, in the build tree and installed"
