# SPDX-License-Identifier: MIT
#
# krb5-kdc.sh: a throwaway MIT Kerberos realm for tests, sourced (". krb5-kdc.sh")
# by a test script, which then calls krb5_kdc_start.  Everything lives in one
# temporary directory and runs as whoever runs the test, root or not: the
# database, the KDC's log, the keytabs, the credential cache and the replay
# cache.  The KDC listens on 127.0.0.1 only, on a free port.
#
# krb5_kdc_start exports:
#   KRB5_CONFIG, KRB5_KDC_PROFILE   the realm's krb5.conf and kdc.conf
#   KRB5CCNAME                      user@PERFLIB.TEST's tickets (kinit done)
#   KRB5_KTNAME                     the service's keytab (host/perflibd.perflib.test)
#   KRB5RCACHEDIR                   the acceptor's replay cache
#   KRB5_TEST_REALM, KRB5_TEST_USER, KRB5_TEST_PASSWORD
#   KRB5_TEST_SERVICE               "host@perflibd.perflib.test", the GSS name
#   KRB5_TEST_WRONG_KEYTAB          the same principal and kvno, another key
#   KRB5_TEST_DIR                   the directory
# and sets an EXIT trap that stops the KDC (by its PID) and removes the
# directory.  It exits 77 (the test is skipped) when MIT's KDC tools are
# missing, and 1 when the realm cannot be made.

KRB5_TEST_REALM=PERFLIB.TEST
KRB5_TEST_USER=user
KRB5_TEST_PASSWORD=krb5-test-password
KRB5_TEST_HOST=perflibd.perflib.test
KRB5_TEST_SERVICE=host@$KRB5_TEST_HOST
krb5_kdc_pid=

krb5_kdc_say() { printf 'krb5-kdc: %s\n' "$*" >&2; }

# The tools, from PATH or where Debian puts them; prints the missing ones.
krb5_kdc_find_tools() {
        local t missing=
        PATH=$PATH:/usr/sbin:/sbin
        for t in krb5kdc kdb5_util kadmin.local kinit; do
                command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
        done
        printf '%s' "$missing"
}

# The KDC only, by its PID.
krb5_kdc_stop_kdc() {
        if [ -n "$krb5_kdc_pid" ]; then
                kill "$krb5_kdc_pid" 2>/dev/null
                wait "$krb5_kdc_pid" 2>/dev/null
                krb5_kdc_pid=
        fi
}

# The EXIT trap: the KDC, then its directory.
krb5_kdc_stop() {
        krb5_kdc_stop_kdc
        [ -n "${KRB5_TEST_DIR:-}" ] && rm -rf "$KRB5_TEST_DIR"
}

# A port free for TCP and UDP on 127.0.0.1 right now (the KDC takes both).
krb5_kdc_free_port() {
        python3 - <<'EOF'
import socket
while True:
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    t.bind(("127.0.0.1", 0))
    port = t.getsockname()[1]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.bind(("127.0.0.1", port))
    except OSError:
        continue
    print(port)
    break
EOF
}

krb5_kdc_write_conf() {
        local d=$1 port=$2
        cat > "$d/krb5.conf" <<EOF
[libdefaults]
        default_realm = $KRB5_TEST_REALM
        dns_lookup_kdc = false
        dns_lookup_realm = false
        dns_canonicalize_hostname = false
        rdns = false
        udp_preference_limit = 1
[realms]
        $KRB5_TEST_REALM = {
                kdc = 127.0.0.1:$port
        }
[domain_realm]
        .perflib.test = $KRB5_TEST_REALM
EOF
        cat > "$d/kdc.conf" <<EOF
[kdcdefaults]
        kdc_listen = 127.0.0.1:$port
        kdc_tcp_listen = 127.0.0.1:$port
[realms]
        $KRB5_TEST_REALM = {
                database_name = $d/principal
                key_stash_file = $d/stash
                acl_file = $d/kadm5.acl
                supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
                max_life = 1h
        }
[logging]
        kdc = FILE:$d/kdc.log
        admin_server = FILE:$d/kadmin.log
        default = FILE:$d/krb5.log
EOF
        : > "$d/kadm5.acl"
}

# kadmin.local QUERY..., quietly unless it fails.
krb5_kdc_admin() {
        local q
        for q in "$@"; do
                kadmin.local -r "$KRB5_TEST_REALM" -q "$q" > "$KRB5_TEST_DIR/kadmin.out" 2>&1 ||
                        { cat "$KRB5_TEST_DIR/kadmin.out" >&2; return 1; }
        done
}

# The database, the user, the service's key in KRB5_KTNAME and, at the
# same kvno, another key in KRB5_TEST_WRONG_KEYTAB (-kvno puts it back).
krb5_kdc_make_db() {
        local d=$KRB5_TEST_DIR svc=host/$KRB5_TEST_HOST
        kdb5_util -r "$KRB5_TEST_REALM" create -s -P krb5-test-master > "$d/kdb5.out" 2>&1 ||
                { cat "$d/kdb5.out" >&2; return 1; }
        krb5_kdc_admin "addprinc -pw $KRB5_TEST_PASSWORD $KRB5_TEST_USER" \
                "addprinc -randkey $svc" \
                "ktadd -k $KRB5_TEST_WRONG_KEYTAB $svc" \
                "cpw -randkey $svc" \
                "modprinc -kvno 2 $svc" \
                "ktadd -norandkey -k $KRB5_KTNAME $svc"
}

# Starts the KDC on a free port (a few tries: the port may go meanwhile)
# and waits until kinit gets the user's tickets through it.
krb5_kdc_run() {
        local d=$KRB5_TEST_DIR try i
        for try in 1 2 3 4 5; do
                krb5_kdc_write_conf "$d" "$(krb5_kdc_free_port)" || return 1
                krb5kdc -n -r "$KRB5_TEST_REALM" -P "$d/kdc.pid" > "$d/kdc.out" 2>&1 &
                krb5_kdc_pid=$!
                for i in $(seq 50); do
                        if echo "$KRB5_TEST_PASSWORD" | kinit "$KRB5_TEST_USER@$KRB5_TEST_REALM" \
                                > "$d/kinit.out" 2>&1; then
                                return 0
                        fi
                        kill -0 "$krb5_kdc_pid" 2>/dev/null || break
                        sleep 0.1
                done
                krb5_kdc_stop_kdc
        done
        krb5_kdc_say "the KDC did not serve kinit:"
        cat "$d/kdc.out" "$d/kinit.out" "$d/kdc.log" >&2 2>/dev/null
        return 1
}

krb5_kdc_start() {
        local missing
        missing=$(krb5_kdc_find_tools)
        if [ -n "$missing" ]; then
                echo "SKIP: MIT Kerberos tools missing:$missing (apt install krb5-kdc krb5-admin-server krb5-user)"
                exit 77
        fi
        KRB5_TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/perflib-krb5.XXXXXX") || exit 1
        trap krb5_kdc_stop EXIT
        export KRB5_TEST_DIR KRB5_TEST_REALM KRB5_TEST_USER KRB5_TEST_PASSWORD KRB5_TEST_SERVICE
        export KRB5_CONFIG=$KRB5_TEST_DIR/krb5.conf
        export KRB5_KDC_PROFILE=$KRB5_TEST_DIR/kdc.conf
        export KRB5CCNAME=FILE:$KRB5_TEST_DIR/ccache
        export KRB5_KTNAME=FILE:$KRB5_TEST_DIR/host.keytab
        export KRB5_TEST_WRONG_KEYTAB=FILE:$KRB5_TEST_DIR/wrong.keytab
        export KRB5RCACHEDIR=$KRB5_TEST_DIR
        # kdb5_util needs the realm's files before the KDC has a port.
        krb5_kdc_write_conf "$KRB5_TEST_DIR" 88 || exit 1
        krb5_kdc_make_db || { krb5_kdc_say "cannot make the realm's database"; exit 1; }
        krb5_kdc_run || exit 1
}
