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
