# SPDX-License-Identifier: MIT
"""PerflibV2 through Samba's \\PIPE\\winreg, with impacket's SMB client.

Usage: samba_np.py HOST PORT USER PASSWORD OTHER OTHER_PASSWORD
       samba_np.py HOST PORT USER PASSWORD logon     (exit 0 served, 3 denied)
       samba_np.py HOST PORT USER PASSWORD logon-wrong   (the same, a wrong inner password)
       samba_np.py HOST PORT USER PASSWORD cap-1     (perflibd at one connection per address)
       samba_np.py HOST PORT USER PASSWORD winreg    (perflibd with --samba-winreg)

USER is both an SMB user of the smbd at HOST:PORT and an account of
perflibd's accounts file; OTHER only the latter.  Checks that a client
logged on inside the pipe with NTLM at packet privacy reads
\\Memory\\Available Bytes as /proc/meminfo says it; that PKT_INTEGRITY, no
DCE/RPC authentication, a wrong inner password and an inner user other
than the SMB one are each refused, and that the next good client is
served.  MS-RRP on the same pipe: impacket's registry client opens
HKEY_PERFORMANCE_DATA, reads "Counter 009" and "Global", and finds
\Memory\Available Bytes in the PERF_DATA_BLOCK as /proc/meminfo says it;
unauthenticated, the bind is refused.  Prints one PASS/FAIL line per check; exits 0 only if all pass.
"""

import struct
import sys
import time

from impacket.dcerpc.v5 import rrp
from impacket.dcerpc.v5.rpcrt import (DCERPCException, RPC_C_AUTHN_LEVEL_NONE,
                                      RPC_C_AUTHN_LEVEL_PKT_INTEGRITY,
                                      RPC_C_AUTHN_LEVEL_PKT_PRIVACY, RPC_C_AUTHN_WINNT)

import perflibv2 as p
from pcq_session import check, close_query, data_call, open_query, pipe_transport, validate

MEMORY = '21183692-1c30-4158-ba30-3c3706e6b2fb'      # providers/memory/memory.man
AVAILABLE_BYTES = 1


class Pipe:
    """The Client of pcq_session, on the pipe, with the inner logon chosen."""

    def __init__(self, host, port, user, password, inner=None,
                 level=RPC_C_AUTHN_LEVEL_PKT_PRIVACY, interface=p.MSRPC_UUID_PERFLIBV2):
        t = pipe_transport(host, port, user, password)
        t.set_connect_timeout(10)
        self.dce = t.get_dce_rpc()
        if inner:
            self.dce.set_credentials(inner[0], inner[1], '')
        if level != RPC_C_AUTHN_LEVEL_NONE:
            self.dce.set_auth_type(RPC_C_AUTHN_WINNT)
            self.dce.set_auth_level(level)
        self.dce.connect()
        self.dce.bind(interface)

    def call(self, req):
        return self.dce.request(req, checkError=False)


def enum_call():
    r = p.PerflibV2EnumerateCounterSet()
    r['szMachine'] = p.wstr('127.0.0.1')
    r['dwInSize'] = 256
    return r


def mem_available():
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemAvailable:'):
                return int(line.split()[1]) * 1024
    raise RuntimeError('no MemAvailable in /proc/meminfo')


def read_available(c, h):
    """(value or None, /proc's before, /proc's after) of one QueryCounterData."""
    before = mem_available()
    r = c.call(data_call(h, 1 << 16))
    after = mem_available()
    if r['ErrorCode'] != 0:
        return None, before, after
    _, blocks = p.parse_counter_data(p.array_bytes(r['lpData']))
    return (blocks[0].get('value') if blocks else None), before, after


def available_bytes(c):
    """\\Memory\\Available Bytes through a query handle, beside /proc's; the
    memory plugin may still be starting (5 s at most)."""
    h = open_query(c)
    err, _, _ = validate(c, h, [(MEMORY, AVAILABLE_BYTES, '')], True)
    check(err == 0, 'ValidateCounters adds \\Memory\\Available Bytes', 'ErrorCode 0x%x' % err)
    for _ in range(50):
        value, before, after = read_available(c, h)
        if value is not None:
            break
        time.sleep(0.1)
    lo, hi = min(before, after), max(before, after)
    # What the kernel says moves between two reads: 2 % around both.
    check(value is not None and lo * 0.98 <= value <= hi * 1.02,
          '\\Memory\\Available Bytes through the pipe matches /proc/meminfo '
          '(%s, /proc %d..%d)' % (value, lo, hi))
    close_query(c, h)


def counter_names(c, hkey):
    """The (index, name) pairs of HKPD's "Counter 009", after its "1", last."""
    kind, text = rrp.hBaseRegQueryValue(c.dce, hkey, 'Counter 009')
    check(kind == rrp.REG_MULTI_SZ, '"Counter 009" is REG_MULTI_SZ', 'type %d' % kind)
    check(text.endswith('\x00\x00'), '"Counter 009" ends with two NULs')
    names = text.rstrip('\x00').split('\x00')
    pairs = [(int(names[i]), names[i + 1]) for i in range(2, len(names) - 1, 2) if names[i]]
    check(names[0] == '1' and int(names[1]) >= max(i for i, _ in pairs),
          '"Counter 009" starts with 1 and the last index', repr(names[:2]))
    return pairs


def memory_indexes(pairs):
    """Memory's object index and, after it, its Available Bytes counter's."""
    obj = next(i for i, n in pairs if n == 'Memory')
    ctr = min(i for i, n in pairs if n == 'Available Bytes' and i > obj)
    return obj, ctr


def v1_value(block, obj, ctr):
    """The value of counter ctr of the single-instance object obj in a PERF_DATA_BLOCK."""
    check(block[:8] == 'PERF'.encode('utf-16-le'), '"Global" is a PERF_DATA_BLOCK')
    total, header, n_objects = struct.unpack_from('<III', block, 20)
    check(total == len(block), 'its TotalByteLength is its size', '%d, %d' % (total, len(block)))
    off = header
    for _ in range(n_objects):
        size, deflen, hlen, index = struct.unpack_from('<IIII', block, off)
        n_counters, _, n_instances = struct.unpack_from('<IiI', block, off + 32)
        if index == obj:
            check(n_instances == 0xFFFFFFFF, 'Memory has no instances (PERF_NO_INSTANCES)')
            for k in range(n_counters):
                d = off + hlen + 40 * k
                cindex, = struct.unpack_from('<I', block, d + 4)
                csize, coff = struct.unpack_from('<II', block, d + 32)
                if cindex == ctr:
                    fmt = '<Q' if csize == 8 else '<I'
                    return struct.unpack_from(fmt, block, off + deflen + coff)[0]
        off += size
    return None


def registry(host, port, user, password):
    """HKEY_PERFORMANCE_DATA through MS-RRP on the same pipe."""
    c = Pipe(host, port, user, password, interface=rrp.MSRPC_UUID_RRP)
    hkey = rrp.hOpenPerformanceData(c.dce)['phKey']
    obj, ctr = memory_indexes(counter_names(c, hkey))
    before = mem_available()
    kind, block = rrp.hBaseRegQueryValue(c.dce, hkey, 'Global')
    after = mem_available()
    check(kind == rrp.REG_BINARY, '"Global" is REG_BINARY', 'type %d' % kind)
    value = v1_value(block, obj, ctr)
    lo, hi = min(before, after), max(before, after)
    check(value is not None and lo * 0.98 <= value <= hi * 1.02,
          'MS-RRP: \\Memory\\Available Bytes in "Global" matches /proc/meminfo '
          '(%s, /proc %d..%d)' % (value, lo, hi))
    try:
        rrp.hOpenCurrentUser(c.dce)
        check(False, 'HKEY_CURRENT_USER is refused', 'opened')
    except DCERPCException as e:
        check('access_denied' in str(e).lower(), 'HKEY_CURRENT_USER is refused', str(e)[:60])
    rrp.hBaseRegCloseKey(c.dce, hkey)
    c.dce.disconnect()


def samba_registry(host, port, user, password):
    """With --samba-winreg: an MS-RRP pipe reaches Samba's own registry (a key
    perflibd's answers never have), and PerflibV2 is still perflibd's."""
    c = Pipe(host, port, user, password, interface=rrp.MSRPC_UUID_RRP)
    hklm = rrp.hOpenLocalMachine(c.dce)['phKey']
    key = rrp.hBaseRegOpenKey(c.dce, hklm, 'SYSTEM\\CurrentControlSet\\Control\\ProductOptions')
    kind, value = rrp.hBaseRegQueryValue(c.dce, key['phkResult'], 'ProductType')
    check(kind == rrp.REG_SZ and value.rstrip('\x00') in ('ServerNT', 'LanmanNT', 'WinNT'),
          "--samba-winreg: Samba's registry answers HKLM\\...\\ProductOptions\\ProductType",
          '%r %r' % (kind, value))
    c.dce.disconnect()
    served(host, port, user, password, 'a pipe passed to Samba')
    print('%d passed, %d failed' % (check.passed, check.failed))
    return 1 if check.failed else 0


def served(host, port, user, password, after):
    try:
        c = Pipe(host, port, user, password)
        r = c.call(enum_call())
        guids = [p.guid_text(g['Data']) for g in r['lpData']] if r['ErrorCode'] == 0 else []
        c.dce.disconnect()
        check(MEMORY in guids, 'a good client is served after %s' % after,
              'ErrorCode 0x%x' % r['ErrorCode'])
    except Exception as e:      # noqa: BLE001 (any failure is the finding)
        check(False, 'a good client is served after %s' % after, repr(e))


def refused(host, port, user, password, what, **kw):
    try:
        c = Pipe(host, port, user, password, **kw)
        r = c.call(enum_call())
        check(False, '%s: refused' % what, 'served: ErrorCode 0x%x' % r['ErrorCode'])
    except DCERPCException as e:
        # A bind_nak, nca_s_fault_access_denied, or the pipe closed.
        check(True, '%s: refused (%s)' % (what, str(e).strip()[:80]))
    except Exception as e:      # noqa: BLE001
        check(True, '%s: refused (%s)' % (what, repr(e)[:80]))
    served(host, port, user, password, what)


def logon(host, port, user, password, inner=None):
    try:
        c = Pipe(host, port, user, password, inner=inner)
        r = c.call(enum_call())
        c.dce.disconnect()
        return 0 if r['ErrorCode'] == 0 else 1
    except DCERPCException as e:
        return 3 if 'access_denied' in str(e) else 1


def cap_one(host, port, user, password):
    """With --max-clients-per-user=1: a second pipe from the same SMB client
    address is refused while the first is open, and served once it closed."""
    first = Pipe(host, port, user, password)
    check(first.call(enum_call())['ErrorCode'] == 0, 'the first pipe is served')
    try:
        Pipe(host, port, user, password).call(enum_call())
        check(False, 'a second pipe from the same address is refused', 'served')
    except Exception as e:      # noqa: BLE001 (smbd fails the open: any error will do)
        check(True, 'a second pipe from the same address is refused (%s)' % repr(e)[:60])
    first.dce.disconnect()
    for _ in range(50):         # perflibd sees the first one go a moment later
        try:
            c = Pipe(host, port, user, password)
            break
        except Exception:       # noqa: BLE001
            time.sleep(0.1)
    else:
        c = None
    check(c is not None and c.call(enum_call())['ErrorCode'] == 0,
          'once the first closed, a new pipe is served')
    print('%d passed, %d failed' % (check.passed, check.failed))
    return 1 if check.failed else 0


def main(argv):
    if len(argv) == 6 and argv[5] == 'logon':
        return logon(argv[1], int(argv[2]), argv[3], argv[4])
    if len(argv) == 6 and argv[5] == 'logon-wrong':
        return logon(argv[1], int(argv[2]), argv[3], argv[4], inner=(argv[3], argv[4] + 'x'))
    if len(argv) == 6 and argv[5] == 'winreg':
        return samba_registry(argv[1], int(argv[2]), argv[3], argv[4])
    if len(argv) == 6 and argv[5] == 'cap-1':
        return cap_one(argv[1], int(argv[2]), argv[3], argv[4])
    if len(argv) != 7:
        print(__doc__)
        return 2
    host, port, user, password, other, other_password = argv[1:]
    port = int(port)
    c = check.step('bind PerflibV2 on \\PIPE\\winreg (NTLM, packet privacy)', Pipe,
                   host, port, user, password)
    if c is None:
        return 1
    check.step('\\Memory\\Available Bytes', available_bytes, c)
    c.dce.disconnect()
    refused(host, port, user, password, 'PKT_INTEGRITY', level=RPC_C_AUTHN_LEVEL_PKT_INTEGRITY)
    refused(host, port, user, password, 'no DCE/RPC authentication', level=RPC_C_AUTHN_LEVEL_NONE)
    refused(host, port, user, password, 'a wrong inner password', inner=(user, password + 'x'))
    refused(host, port, user, password, 'an inner user other than the SMB one',
            inner=(other, other_password))
    # MS-RRP shares the pipe: perflibd answers a performance client's calls.
    check.step('MS-RRP on \\PIPE\\winreg: HKEY_PERFORMANCE_DATA', registry,
               host, port, user, password)
    refused(host, port, user, password, 'an MS-RRP bind without DCE/RPC authentication',
            level=RPC_C_AUTHN_LEVEL_NONE, interface=rrp.MSRPC_UUID_RRP)
    print('%d passed, %d failed' % (check.passed, check.failed))
    return 1 if check.failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
