# SPDX-License-Identifier: MIT
"""Attacks on perflibd's authentication over TCP (MS-PCQ 2.1), with impacket.

Usage: auth_attacks.py HOST PORT USER PASSWORD
       auth_attacks.py HOST PORT USER PASSWORD logon   (exit 0 served, 3 denied)

Each attack must be refused, and a client that logs on correctly must be
served right after it: no authentication, PKT_CONNECT, PKT_INTEGRITY, a
wrong password, an unknown user, one flipped byte in a sealed stub, a
replayed request, a truncated verifier and an auth_length that lies.
Prints one PASS/FAIL line per check; exits 0 only if all pass.
"""

import socket
import struct
import sys

from impacket.dcerpc.v5 import transport
from impacket.dcerpc.v5.rpcrt import (DCERPCException, RPC_C_AUTHN_LEVEL_CONNECT,
                                      RPC_C_AUTHN_LEVEL_NONE, RPC_C_AUTHN_LEVEL_PKT_INTEGRITY,
                                      RPC_C_AUTHN_LEVEL_PKT_PRIVACY, RPC_C_AUTHN_WINNT)

import perflibv2 as p
from pcq_session import EOFAwareTCPTransport

failed = 0


def check(ok, what, detail=''):
    global failed
    if ok:
        print('PASS: %s' % what)
    else:
        failed += 1
        print('FAIL: %s -- %s' % (what, detail))


class Recording(EOFAwareTCPTransport):
    """Keeps every packet sent; mutate, when set, changes the next request."""

    def send(self, data, forceWriteAndx=0, forceRecv=0):
        self.sent.append(data)
        if self.mutate is not None and data[2] == 0:     # a request
            data, self.mutate = self.mutate(bytearray(data)), None
        return transport.TCPTransport.send(self, bytes(data), forceWriteAndx, forceRecv)


def connect(host, port, user, password, level=RPC_C_AUTHN_LEVEL_PKT_PRIVACY):
    t = transport.DCERPCTransportFactory('ncacn_ip_tcp:%s[%d]' % (host, port))
    t.__class__ = Recording
    t.sent, t.mutate = [], None
    t.set_connect_timeout(10)
    if level != RPC_C_AUTHN_LEVEL_NONE:
        t.set_credentials(user, password, 'PERFLIB')
    dce = t.get_dce_rpc()
    if level != RPC_C_AUTHN_LEVEL_NONE:
        dce.set_auth_type(RPC_C_AUTHN_WINNT)
        dce.set_auth_level(level)
    dce.connect()
    dce.bind(p.MSRPC_UUID_PERFLIBV2)
    return dce, t


def enum_call():
    r = p.PerflibV2EnumerateCounterSet()
    r['szMachine'] = p.wstr('127.0.0.1')
    r['dwInSize'] = 256
    return r


def served(host, port, user, password, after):
    try:
        dce, _ = connect(host, port, user, password)
        r = dce.request(enum_call(), checkError=False)
        dce.disconnect()
        check(r['ErrorCode'] == 0, 'a good client is served after %s' % after,
              'ErrorCode 0x%x' % r['ErrorCode'])
    except Exception as e:      # noqa: BLE001 (any failure is the finding)
        check(False, 'a good client is served after %s' % after, repr(e))


def bind_refused(host, port, user, password, level, what):
    try:
        dce, _ = connect(host, port, user, password, level)
        r = dce.request(enum_call(), checkError=False)
        check(False, '%s: refused' % what, 'served: ErrorCode 0x%x' % r['ErrorCode'])
    except DCERPCException as e:
        # A bind_nak (impacket names its reason) or the connection closed.
        check(True, '%s: refused (%s)' % (what, str(e).strip()))
    served(host, port, user, password, what)


def denied(host, port, user, password, what):
    try:
        dce, _ = connect(host, port, user, password)
        dce.request(enum_call(), checkError=False)
        check(False, '%s: access denied' % what, 'served')
    except DCERPCException as e:
        check('access_denied' in str(e), '%s: access denied (%s)' % (what, e), e)
    except Exception as e:      # noqa: BLE001
        check(False, '%s: access denied' % what, repr(e))


def flip_stub(pkt):
    pkt[24 + 4] ^= 0x01
    return pkt


def truncate_verifier(pkt):
    pkt = pkt[:-4]
    struct.pack_into('<H', pkt, 8, len(pkt))
    return pkt


def lying_auth_length(pkt):
    struct.pack_into('<H', pkt, 10, 8)
    return pkt


def tampered(host, port, user, password, what, mutate):
    dce, t = connect(host, port, user, password)
    t.mutate = mutate
    try:
        r = dce.request(enum_call(), checkError=False)
        check(False, '%s: refused' % what, 'served: ErrorCode 0x%x' % r['ErrorCode'])
    except Exception as e:      # noqa: BLE001
        check(True, '%s: refused (%s)' % (what, e))
    # The connection must be gone: nothing more is answered on it.
    try:
        t.get_socket().settimeout(5)
        rest = t.get_socket().recv(65536)
        while rest:
            rest = t.get_socket().recv(65536)
        check(True, '%s: the connection is closed' % what)
    except socket.timeout:
        check(False, '%s: the connection is closed' % what, 'still open after 5 s')
    except OSError as e:
        check(True, '%s: the connection is closed (%s)' % (what, e))
    served(host, port, user, password, what)


def replayed(host, port, user, password):
    what = 'a replayed request'
    dce, t = connect(host, port, user, password)
    r = dce.request(enum_call(), checkError=False)
    check(r['ErrorCode'] == 0, 'the request to replay is served', 'ErrorCode 0x%x' % r['ErrorCode'])
    request = [x for x in t.sent if x[2] == 0][-1]
    sock = t.get_socket()
    sock.sendall(request)
    sock.settimeout(5)
    got = b''
    try:
        while True:
            more = sock.recv(65536)
            if not more:
                break
            got += more
    except (socket.timeout, OSError):
        pass
    answered = len(got) >= 3 and got[2] == 2     # a response
    check(not answered, '%s: not answered' % what, 'a response came back')
    check(len(got) < 3 or got[2] == 3, '%s: a fault at most, then the connection closes' % what,
          got[:32].hex())
    served(host, port, user, password, what)


def logon(host, port, user, password):
    try:
        dce, _ = connect(host, port, user, password)
        r = dce.request(enum_call(), checkError=False)
        dce.disconnect()
        return 0 if r['ErrorCode'] == 0 else 1
    except DCERPCException as e:
        return 3 if 'access_denied' in str(e) else 1


def main(argv):
    if len(argv) == 6 and argv[5] == 'logon':
        return logon(argv[1], int(argv[2]), argv[3], argv[4])
    if len(argv) != 5:
        print(__doc__)
        return 2
    host, port, user, password = argv[1], int(argv[2]), argv[3], argv[4]
    served(host, port, user, password, 'nothing')
    bind_refused(host, port, user, password, RPC_C_AUTHN_LEVEL_NONE, 'no authentication')
    bind_refused(host, port, user, password, RPC_C_AUTHN_LEVEL_CONNECT, 'PKT_CONNECT')
    bind_refused(host, port, user, password, RPC_C_AUTHN_LEVEL_PKT_INTEGRITY, 'PKT_INTEGRITY')
    denied(host, port, user, password + 'x', 'a wrong password')
    denied(host, port, 'nobody-' + user, password, 'an unknown user')
    served(host, port, user, password, 'a wrong password and an unknown user')
    tampered(host, port, user, password, 'one flipped byte in a sealed stub', flip_stub)
    tampered(host, port, user, password, 'a truncated verifier', truncate_verifier)
    tampered(host, port, user, password, 'an auth_length that lies', lying_auth_length)
    replayed(host, port, user, password)
    print('%d failed' % failed)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
