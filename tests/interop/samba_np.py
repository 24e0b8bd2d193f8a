# SPDX-License-Identifier: MIT
"""PerflibV2 through Samba's \\PIPE\\winreg, with impacket's SMB client.

Usage: samba_np.py HOST PORT USER PASSWORD OTHER OTHER_PASSWORD
       samba_np.py HOST PORT USER PASSWORD logon     (exit 0 served, 3 denied)
       samba_np.py HOST PORT USER PASSWORD cap-1     (perflibd at one connection per address)

USER is both an SMB user of the smbd at HOST:PORT and an account of
perflibd's accounts file; OTHER only the latter.  Checks that a client
logged on inside the pipe with NTLM at packet privacy reads
\\Memory\\Available Bytes as /proc/meminfo says it; that PKT_INTEGRITY, no
DCE/RPC authentication, a wrong inner password and an inner user other
than the SMB one are each refused, as is a bind to MS-RRP (which
perflibd does not serve), and that the next good client is served.  Prints one PASS/FAIL line per check; exits 0 only if all pass.
"""

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


def logon(host, port, user, password):
    try:
        c = Pipe(host, port, user, password)
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
    # MS-RRP shares the pipe; perflibd does not serve it (yet): refused, not crashed.
    refused(host, port, user, password, 'a bind to MS-RRP (winreg)', interface=rrp.MSRPC_UUID_RRP)
    print('%d passed, %d failed' % (check.passed, check.failed))
    return 1 if check.failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
