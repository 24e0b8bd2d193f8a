#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The network protocol countersets (providers/netproto), read through a
# real perflibd and typeperf, against iproute2 (nobody here wrote it):
# nstat -asz for the kernel's counters, ss for the connections by state.
# The traffic is this script's own, on loopback: UDP to a bound and to a
# closed port (the closed one makes ICMP port unreachables), a TCP stream
# and TCP connections opened and closed, over IPv4 and IPv6.  Rates are
# compared over the same window, counts read right after each other;
# every tolerance says why.  Each counterset also starts with Windows'
# counters, by Windows' names, in Windows' order.  Exit 77 (SKIP) when a tool is missing or the
# machine has no IPv6 loopback.
set -euo pipefail
export LC_ALL=C

top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
perflibd_bin=$top_builddir/server-glue/perflibd
typeperf_bin=$top_builddir/tools/typeperf
PY=python3
W=4                     # seconds of the rate window
N4=7 N6=5               # loopback connections held open per family

missing=()
for t in nstat ss python3 timeout; do
        command -v "$t" >/dev/null 2>&1 || missing+=("$t")
done
if [ ${#missing[@]} -gt 0 ]; then
        echo "SKIP: missing tools: ${missing[*]}"
        exit 77
fi
if ! "$PY" -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
        echo "SKIP: no IPv6 loopback (::1) to make IPv6 traffic on"
        exit 77
fi
for b in "$perflibd_bin" "$typeperf_bin" "$top_builddir/providers/netproto/.libs/netproto.so"; do
        [ -e "$b" ] || { echo "FAIL: $b was not built"; exit 1; }
done
# shellcheck source=tests/test-lib.sh
. "$top_srcdir/tests/test-lib.sh"

tmp=$(mktemp -d "${PERFLIB_TEST_TMPDIR:-${TMPDIR:-/tmp}}/netproto-interop.XXXXXX")
# A root perflibd runs plugins as nobody, whose hosts must reach the runtime directory.
chmod 755 "$tmp"
stop_bg_at_exit "$tmp"
typeperf() { "$typeperf_bin" "$@"; }
# -s: nstat's history file is neither read for -a nor written.
kernel() { NSTAT_HISTORY=$tmp/nstat.history nstat -asz --json; }

# ---- the loopback workload: "hold N4 N6" or "traffic SECONDS" ----
cat >"$tmp/load.py" <<'EOF'
import socket, sys, time

def pair(fam, host, n, keep):
    l = socket.socket(fam)
    l.bind((host, 0))
    l.listen(n + 1)
    keep.append(l)
    for _ in range(n):
        c = socket.create_connection(l.getsockname()[:2])
        keep += [c, l.accept()[0]]
    return l

def closed_port(fam, host):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port

def drain(s):
    try:
        while True:
            s.recv(2048)
    except BlockingIOError:
        pass

def traffic(seconds):
    keep, dst = [], []
    for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        rx = socket.socket(fam, socket.SOCK_DGRAM)
        rx.bind((host, 0))
        rx.setblocking(False)
        dst.append((rx, socket.socket(fam, socket.SOCK_DGRAM), rx.getsockname()[:2],
                    (host, closed_port(fam, host))))
    listener = pair(socket.AF_INET, "127.0.0.1", 1, keep)
    stream, peer = keep[1], keep[2]
    stream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    peer.setblocking(False)
    # 100 ticks a second: 4 + 3 datagrams, 2 stream writes; 20/s to the
    # closed ports; 10/s TCP connections opened and closed.
    start = time.monotonic()
    for tick in range(int(seconds * 100)):
        for (rx, tx, to, closed), k in zip(dst, (4, 3)):
            for _ in range(k):
                tx.sendto(b"x" * 64, to)
            if tick % 5 == 0:
                tx.sendto(b"x", closed)
            drain(rx)
        stream.sendall(b"y" * 100)
        stream.sendall(b"y" * 100)
        drain(peer)
        if tick % 10 == 0:
            c = socket.create_connection(listener.getsockname())
            a = listener.accept()[0]
            c.close()
            a.close()
        time.sleep(max(0, start + (tick + 1) / 100 - time.monotonic()))

if sys.argv[1] == "hold":
    keep = []
    pair(socket.AF_INET, "127.0.0.1", int(sys.argv[2]), keep)
    pair(socket.AF_INET6, "::1", int(sys.argv[3]), keep)
    print("ready", flush=True)
    time.sleep(600)
else:
    traffic(float(sys.argv[2]))
EOF

# ---- the server: unprivileged, private directories, this plugin alone ----
mkdir -p "$tmp/run" "$tmp/registry" "$tmp/plugins"
ln -s "$top_builddir/providers/netproto/.libs/netproto.so" "$tmp/plugins/netproto.so"
export PERFLIB_RUNTIME_DIR=$tmp/run
start_bg "$perflibd_bin" -r "$tmp/run" -R "$tmp/registry" -p "$tmp/plugins" 2>"$tmp/perflibd.log"
if ! wait_for '[ -S "$tmp/run/perflibd.sock" ] &&
               typeperf -q ICMPv6 2>/dev/null | grep -qF "\\ICMPv6\\Messages/sec"' 300; then
        cat "$tmp/perflibd.log"
        echo "FAIL: perflibd did not serve the netproto countersets"
        exit 1
fi

# ---- Windows' counter names, each counterset's first, in Windows' order ----
# (the Windows Server 2003 counter reference and the Win32_PerfRawData_Tcpip_*
# classes on learn.microsoft.com); typeperf -q lists what perflibd serves.
tcp="Segments/sec|Connections Established|Connections Active|Connections Passive|Connection Failures|Connections Reset|Segments Received/sec|Segments Sent/sec|Segments Retransmitted/sec"
udp="Datagrams/sec|Datagrams Received/sec|Datagrams No Port/sec|Datagrams Received Errors|Datagrams Sent/sec"
ip="Datagrams/sec|Datagrams Received/sec|Datagrams Received Header Errors|Datagrams Received Address Errors|Datagrams Forwarded/sec|Datagrams Received Unknown Protocol|Datagrams Received Discarded|Datagrams Received Delivered/sec|Datagrams Sent/sec|Datagrams Outbound Discarded|Datagrams Outbound No Route|Fragments Received/sec|Fragments Re-assembled/sec|Fragment Re-assembly Failures|Fragmented Datagrams/sec|Fragmentation Failures|Fragments Created/sec"
icmp="Messages/sec|Messages Received/sec|Messages Received Errors|Received Dest. Unreachable|Received Time Exceeded|Received Parameter Problem|Received Source Quench|Received Redirect/sec|Received Echo/sec|Received Echo Reply/sec|Received Timestamp/sec|Received Timestamp Reply/sec|Received Address Mask|Received Address Mask Reply|Messages Sent/sec|Messages Outbound Errors|Sent Destination Unreachable|Sent Time Exceeded|Sent Parameter Problem|Sent Source Quench|Sent Redirect/sec|Sent Echo/sec|Sent Echo Reply/sec|Sent Timestamp/sec|Sent Timestamp Reply/sec|Sent Address Mask|Sent Address Mask Reply"
icmp6="Messages/sec|Messages Received/sec|Messages Received Errors|Received Dest. Unreachable|Received Packet Too Big|Received Time Exceeded|Received Parameter Problem|Received Echo/sec|Received Echo Reply/sec|Received Membership Query|Received Membership Report|Received Membership Reduction|Received Router Solicit|Received Router Advert|Received Neighbor Solicit|Received Neighbor Advert|Received Redirect/sec|Messages Sent/sec|Messages Outbound Errors|Sent Destination Unreachable|Sent Packet Too Big|Sent Time Exceeded|Sent Parameter Problem|Sent Echo/sec|Sent Echo Reply/sec|Sent Membership Query|Sent Membership Report|Sent Membership Reduction|Sent Router Solicit|Sent Router Advert|Sent Neighbor Solicit|Sent Neighbor Advert|Sent Redirect/sec"
names_fail=0
for spec in "TCPv4=$tcp" "TCPv6=$tcp" "UDPv4=$udp" "UDPv6=$udp" "IPv4=$ip" "IPv6=$ip" \
            "ICMP=$icmp" "ICMPv6=$icmp6"; do
        cs=${spec%%=*}
        printf '%s\n' "${spec#*=}" | tr '|' '\n' | sed "s|^|\\\\$cs\\\\|" >"$tmp/want.txt"
        typeperf -q "$cs" >"$tmp/q.txt"
        head -n "$(wc -l <"$tmp/want.txt")" "$tmp/q.txt" >"$tmp/got.txt"
        if diff -u "$tmp/want.txt" "$tmp/got.txt" >"$tmp/names.diff"; then
                echo "PASS: $cs starts with Windows' $(wc -l <"$tmp/want.txt") counters, in order"
        else
                echo "FAIL: $cs does not start with Windows' counters:"
                sed 's/^/    /' "$tmp/names.diff"
                names_fail=1
        fi
done

# ---- connections per family, against ss, before and after N4 + N6 ----
conns=('\TCPv4\Connections Established' '\TCPv6\Connections Established'
       '\TCPv4\Connections Listening' '\TCPv6\Connections Listening')
ss_counts() {
        echo "$(ss -4 -Htan state established state close-wait | wc -l)" \
             "$(ss -6 -Htan state established state close-wait | wc -l)" \
             "$(ss -4 -Htln | wc -l)" "$(ss -6 -Htln | wc -l)"
}
typeperf "${conns[@]}" -sc 1 >"$tmp/conn0.csv"
ss_counts >"$tmp/ss0.txt"
start_bg "$PY" "$tmp/load.py" hold "$N4" "$N6" >"$tmp/hold.out"
wait_for 'grep -q ready "$tmp/hold.out"' 100 || { echo "FAIL: the connections did not open"; exit 1; }
typeperf "${conns[@]}" -sc 1 >"$tmp/conn1.csv"
ss_counts >"$tmp/ss1.txt"

# ---- rates over one window, nstat read just before and just after it ----
rates=('\TCPv4\Segments/sec' '\TCPv6\Segments Received/sec' '\TCPv4\Segments Sent/sec'
       '\UDPv4\Datagrams Received/sec' '\UDPv4\Datagrams Sent/sec' '\UDPv4\Datagrams No Port/sec'
       '\UDPv6\Datagrams Received/sec' '\UDPv6\Datagrams No Port/sec' '\UDPv6\Datagrams/sec'
       '\IPv4\Datagrams Received/sec' '\IPv4\Datagrams Sent/sec' '\IPv4\Bytes Received/sec'
       '\IPv6\Datagrams Received/sec' '\IPv6\Datagrams Received Delivered/sec'
       '\ICMP\Messages/sec' '\ICMP\Messages Sent/sec'
       '\ICMPv6\Messages Received/sec' '\ICMPv6\Messages Sent/sec')
start_bg "$PY" "$tmp/load.py" traffic $((W + 3))
load=$!
sleep 0.7
kernel >"$tmp/nstat0.json"
date +%s.%N >"$tmp/t0"
typeperf "${rates[@]}" -si "$W" -sc 1 >"$tmp/rates.csv"
date +%s.%N >"$tmp/t1"
kernel >"$tmp/nstat1.json"
wait "$load"

# ---- counts since boot, read in the same second ----
counts=('\TCPv4\Connections Active' '\TCPv6\Connections Passive' '\TCPv4\Connections Reset'
        '\TCPv4\Connection Failures' '\TCPv4\Listen Drops' '\UDPv4\Datagrams Received Errors'
        '\ICMP\Received Dest. Unreachable' '\ICMP\Sent Destination Unreachable'
        '\ICMPv6\Received Dest. Unreachable' '\ICMPv6\Sent Destination Unreachable'
        '\IPv4\Datagrams Received Header Errors' '\IPv6\Datagrams Outbound No Route'
        '\TCPv4\Connections Time Wait' '\TCPv4\Listen Overflows' '\UDPv4\Sockets In Use'
        '\TCPv6\Sockets In Use')
typeperf "${counts[@]}" -sc 1 >"$tmp/counts.csv"
kernel >"$tmp/nstat2.json"
ss -4 -Htan state time-wait | wc -l >"$tmp/tw.txt"
cp /proc/net/sockstat "$tmp/sockstat"
cp /proc/net/sockstat6 "$tmp/sockstat6"

"$PY" - "$tmp" "$N4" "$N6" <<'EOF'
import csv, json, sys

tmp, n4, n6 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
failures = 0

def check(name, ours, theirs, abs_tol, rel_tol, why):
    global failures
    ok = abs(ours - theirs) <= abs_tol + rel_tol * abs(theirs)
    failures += not ok
    print("%s: %s: typeperf %.2f, reference %.2f (tolerance %g + %g x reference: %s)"
          % ("PASS" if ok else "FAIL", name, ours, theirs, abs_tol, rel_tol, why))

def least(name, value, floor):
    """The workload shows: a comparison of two zeros proves nothing."""
    global failures
    ok = value >= floor
    failures += not ok
    print("%s: %s: reference %.2f, at least %g from this test's traffic"
          % ("PASS" if ok else "FAIL", name, value, floor))

def typeperf(name):
    rows = list(csv.reader(open("%s/%s" % (tmp, name))))
    return {"\\" + h.split("\\", 3)[-1]: float(v) for h, v in zip(rows[0][1:], rows[-1][1:])}

def nstat(name):
    return json.load(open("%s/%s" % (tmp, name)))["kernel"]

# Connections: ss read right after typeperf; others' short connections in
# this namespace may open or close between the two reads: 2.
c0, c1 = typeperf("conn0.csv"), typeperf("conn1.csv")
s0 = [int(x) for x in open(tmp + "/ss0.txt").read().split()]
s1 = [int(x) for x in open(tmp + "/ss1.txt").read().split()]
for i, fam in enumerate(("TCPv4", "TCPv6")):
    est, lis = "\\%s\\Connections Established" % fam, "\\%s\\Connections Listening" % fam
    check(fam + " Connections Established vs ss state established+close-wait", c1[est], s1[i], 2, 0,
          "others' connections between the reads")
    check(fam + " Listening vs ss -tln", c1[lis], s1[2 + i], 1, 0, "a listener of others")
    # Each loopback connection is two established sockets, one per end.
    n = 2 * (n4 if fam == "TCPv4" else n6)
    check("%s Connections Established moved by 2 x %d" % (fam, n // 2), c1[est] - c0[est], n, 2, 0,
          "others' connections between the reads")
    check("%s ss moved by 2 x %d too" % (fam, n // 2), s1[i] - s0[i], n, 2, 0, "the same")

# Rates over the same steady traffic: typeperf's window is W s between its
# two collections, nstat's a few tens of ms longer; the workload paces
# itself in 10 ms ticks (1/100 of a window second each): 10 % + 3/s.
n0, n1 = nstat("nstat0.json"), nstat("nstat1.json")
t = float(open(tmp + "/t1").read()) - float(open(tmp + "/t0").read())
rate = lambda *ks: sum(n1.get(k, 0) - n0.get(k, 0) for k in ks) / t
r = typeperf("rates.csv")
pairs = [
    ("\\TCPv4\\Segments/sec", ("TcpInSegs", "TcpOutSegs"), 150),
    ("\\TCPv6\\Segments Received/sec", ("TcpInSegs",), 75),
    ("\\TCPv4\\Segments Sent/sec", ("TcpOutSegs",), 75),
    ("\\UDPv4\\Datagrams Received/sec", ("UdpInDatagrams",), 300),
    ("\\UDPv4\\Datagrams Sent/sec", ("UdpOutDatagrams",), 300),
    ("\\UDPv4\\Datagrams No Port/sec", ("UdpNoPorts",), 15),
    ("\\UDPv6\\Datagrams Received/sec", ("Udp6InDatagrams",), 220),
    ("\\UDPv6\\Datagrams No Port/sec", ("Udp6NoPorts",), 15),
    ("\\UDPv6\\Datagrams/sec", ("Udp6InDatagrams", "Udp6OutDatagrams"), 440),
    ("\\IPv4\\Datagrams Received/sec", ("IpInReceives",), 300),
    ("\\IPv4\\Datagrams Sent/sec", ("IpOutRequests",), 300),
    ("\\IPv4\\Bytes Received/sec", ("IpExtInOctets",), 20000),
    ("\\IPv6\\Datagrams Received/sec", ("Ip6InReceives",), 220),
    ("\\IPv6\\Datagrams Received Delivered/sec", ("Ip6InDelivers",), 220),
    ("\\ICMP\\Messages/sec", ("IcmpInMsgs", "IcmpOutMsgs"), 30),
    ("\\ICMP\\Messages Sent/sec", ("IcmpOutMsgs",), 15),
    ("\\ICMPv6\\Messages Received/sec", ("Icmp6InMsgs",), 15),
    ("\\ICMPv6\\Messages Sent/sec", ("Icmp6OutMsgs",), 15),
]
for path, keys, floor in pairs:
    ref = rate(*keys)
    least(path + " = " + "+".join(keys), ref, floor)
    check(path + " vs nstat " + "+".join(keys), r[path], ref, 3, 0.10, "the same window, paced load")

# Counts since boot: 32-bit as on Windows, so compared modulo 2^32; the
# workload has stopped, others' connections may open a few.
c, n2 = typeperf("counts.csv"), nstat("nstat2.json")
for path, key, tol in [
        ("\\TCPv4\\Connections Active", "TcpActiveOpens", 5),
        ("\\TCPv6\\Connections Passive", "TcpPassiveOpens", 5),
        ("\\TCPv4\\Connections Reset", "TcpEstabResets", 5),
        ("\\TCPv4\\Connection Failures", "TcpAttemptFails", 5),
        ("\\TCPv4\\Listen Drops", "TcpExtListenDrops", 2),
        ("\\UDPv4\\Datagrams Received Errors", "UdpInErrors", 2),
        ("\\ICMP\\Received Dest. Unreachable", "IcmpInDestUnreachs", 2),
        ("\\ICMP\\Sent Destination Unreachable", "IcmpOutDestUnreachs", 2),
        ("\\ICMPv6\\Received Dest. Unreachable", "Icmp6InDestUnreachs", 2),
        ("\\ICMPv6\\Sent Destination Unreachable", "Icmp6OutDestUnreachs", 2),
        ("\\IPv4\\Datagrams Received Header Errors", "IpInHdrErrors", 2),
        ("\\IPv6\\Datagrams Outbound No Route", "Ip6OutNoRoutes", 2)]:
    check(path + " vs nstat " + key, c[path], n2.get(key, 0) % 2**32, tol, 0,
          "read right after each other")
least("nstat IcmpInDestUnreachs", n2.get("IcmpInDestUnreachs", 0), 60)
check("\\TCPv4\\Listen Overflows vs nstat TcpExtListenOverflows", c["\\TCPv4\\Listen Overflows"],
      n2.get("TcpExtListenOverflows", 0) % 2**32, 2, 0, "read right after each other")

# Linux's own counters against ss and the kernel's file read right after:
# TIME-WAIT sockets expire and others' connections add some: 5 + 10 %.
tw = int(open(tmp + "/tw.txt").read())
least("ss -4 state time-wait", tw, 20)
check("\\TCPv4\\Connections Time Wait vs ss -4 state time-wait", c["\\TCPv4\\Connections Time Wait"],
      tw, 5, 0.10, "sockets expiring and others' between the reads")
def inuse(name, section):
    for line in open(tmp + "/" + name):
        f = line.split()
        if f[0] == section + ":":
            return int(f[f.index("inuse") + 1])
for path, name, section in (("\\UDPv4\\Sockets In Use", "sockstat", "UDP"),
                            ("\\TCPv6\\Sockets In Use", "sockstat6", "TCP6")):
    check(path + " vs /proc/net/" + name + " " + section + " inuse", c[path], inuse(name, section),
          3, 0, "others' sockets between the reads")
sys.exit(1 if failures else 0)
EOF
[ "$names_fail" -eq 0 ]
