# shellcheck shell=sh
# SPDX-License-Identifier: MIT
# Sourced by the shell tests that start servers: waiting, and loopback ports.
# Needs $PY (a python3).

# Waits up to $2 tenths of a second for the command string $1 (evaluated on
# each try, so write it in single quotes) to succeed.
wait_for() {
        _n=0
        while ! eval "$1"; do
                _n=$((_n + 1))
                [ "$_n" -ge "$2" ] && return 1
                sleep 0.1
        done
        return 0
}

# A TCP port on 127.0.0.1 nobody listens on now (the kernel picks it).
free_port() {
        "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Whether something accepts connections on 127.0.0.1:$1.
port_open() {
        "$PY" -c 'import socket, sys
s = socket.socket()
s.settimeout(1)
sys.exit(s.connect_ex(("127.0.0.1", int(sys.argv[1]))))' "$1"
}

# Starts $perflibd on $tmp/registry and $tmp/plugins, listening on
# 127.0.0.1:$1 for the accounts of $tmp/accounts, the rest of the
# arguments its further options; its log goes to $tmp/perflibd.log and its
# PID into $perflibd_pid.  Returns 1, the log printed, when it is not
# listening within 10 s.
start_perflibd_tcp() {
        _port=$1
        shift
        "$perflibd" --registry-dir "$tmp/registry" --plugin-dir "$tmp/plugins" \
                --listen-tcp "127.0.0.1:$_port" --accounts "$tmp/accounts" "$@" \
                >"$tmp/perflibd.log" 2>&1 &
        perflibd_pid=$!
        if ! wait_for 'port_open $_port || ! kill -0 $perflibd_pid 2>/dev/null' 100 ||
           ! kill -0 "$perflibd_pid" 2>/dev/null; then
                echo "FAIL: perflibd did not listen on 127.0.0.1:$_port:"
                sed 's/^/    /' "$tmp/perflibd.log"
                return 1
        fi
}

# Background jobs that end with the test: start_bg CMD ARGS... runs CMD in
# the background ($! is its PID) and remembers it; after
# stop_bg_at_exit DIR, the test's exit (INT and TERM too) stops every one
# of them, waits for them, and removes DIR.
_bg_pids=
start_bg() {
        "$@" &
        _bg_pids="$_bg_pids $!"
}
_bg_cleanup() {
        for _p in $_bg_pids; do
                kill -TERM "$_p" 2>/dev/null || true
        done
        for _p in $_bg_pids; do
                wait "$_p" 2>/dev/null || true
        done
        rm -rf "$_bg_dir"
}
stop_bg_at_exit() {
        _bg_dir=$1
        trap _bg_cleanup EXIT
        trap 'exit 130' INT
        trap 'exit 143' TERM
}
