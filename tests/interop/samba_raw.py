# SPDX-License-Identifier: MIT
"""Samba's raw DCE/RPC test harness against perflibd over TCP.

Run by tests/test-samba-raw.sh (and, through Samba's \\PIPE\\winreg, by
tests/test-samba-np.sh: PerflibRawPipe), which starts perflibd and sets SERVER,
PERFLIB_PORT, PERFLIB_COUNTERSETS (how many it serves), DOMAIN, REALM,
USERNAME, PASSWORD and SMB_CONF_PATH.

samba.tests.dcerpc.raw_testcase (a client nobody here wrote) binds to
PerflibV2 at packet privacy with NTLMSSP (its last leg in an alter_context,
as Samba sends it, and in an auth3, as Windows does) and with SPNEGO
offering NTLM, checking every field of our bind_ack and alter_context_resp,
and with Samba's own gensec doing the exchange: its SPNEGO client checks
our mechListMIC.  The harness cannot seal requests itself (its
generate_request_auth stops at PKT_INTEGRITY), so EnumerateCounterSet is
sealed here with impacket's NTLM primitives from the session key gensec
negotiated, and the signature of each response is checked the same way
before its stub is read.  Refusals: a wrong password gets
nca_s_fault_access_denied in answer to the alter_context, PKT_INTEGRITY a
bind_nak.

PerflibKrb5 (run by tests/test-remote-krb5.sh, with a realm of
tests/krb5-kdc.sh and perflibd given its keytab) does the same with
Kerberos, alone and in SPNEGO, with Samba's gensec on MIT's library: there
its wrap and unwrap do seal requests and open responses, so the whole call
is Samba's.  A principal that is not an account is refused.
"""

import os
import socket
import struct
import unittest

import samba.dcerpc.base
import samba.dcerpc.dcerpc as dcerpc
import samba.dcerpc.misc as misc
from samba import credentials, gensec
from samba.tests.dcerpc.raw_testcase import RawDCERPCTest, smb_pipe_socket

from Cryptodome.Cipher import ARC4
from impacket import ntlm

PERFLIBV2 = misc.ndr_syntax_id()
PERFLIBV2.uuid = misc.GUID('da5a86c5-12c2-4943-ab30-7f74a813d853')
PERFLIBV2.if_version = 1
ESS_FLAGS = (ntlm.NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY | ntlm.NTLMSSP_NEGOTIATE_KEY_EXCH |
             ntlm.NTLMSSP_NEGOTIATE_128 | ntlm.NTLMSSP_NEGOTIATE_SEAL | ntlm.NTLMSSP_NEGOTIATE_SIGN)
ACCESS_DENIED = 5


class Sealer:
    """NTLM2 sealing of one association, both directions (MS-NLMP 3.4.4)."""

    def __init__(self, key, spnego):
        self.out_sign = ntlm.SIGNKEY(ESS_FLAGS, key, 'Client')
        self.in_sign = ntlm.SIGNKEY(ESS_FLAGS, key, 'Server')
        self.out_rc4 = ARC4.new(ntlm.SEALKEY(ESS_FLAGS, key, 'Client')).encrypt
        self.in_rc4 = ARC4.new(ntlm.SEALKEY(ESS_FLAGS, key, 'Server')).encrypt
        self.out_seq = self.in_seq = 0
        if spnego:
            # Each side's mechListMIC took sequence number 0 and 8 bytes of its RC4 stream.
            self.out_rc4(b'\0' * 8)
            self.in_rc4(b'\0' * 8)
            self.out_seq = self.in_seq = 1

    def seal(self, whole, stub):
        sealed = self.out_rc4(stub)
        sig = ntlm.SIGN(ESS_FLAGS, self.out_sign, whole, self.out_seq, self.out_rc4)
        self.out_seq += 1
        return sealed, sig.getData()

    def unseal(self, head, sealed, trailer, sig):
        plain = self.in_rc4(sealed)
        want = ntlm.SIGN(ESS_FLAGS, self.in_sign, head + plain + trailer, self.in_seq,
                         self.in_rc4).getData()
        self.in_seq += 1
        return plain, want == sig


class PerflibRaw(RawDCERPCTest):

    def _connect_tcp(self):
        port = int(os.environ['PERFLIB_PORT'])
        self.s = socket.create_connection((self.host, port), timeout=10)
        self.max_xmit_frag = self.max_recv_frag = 5840
        # ncacn_ip_tcp's secondary address is the server's port.
        self.secondary_address = str(port)
        self.tcp_port = port

    def send_all(self, blob):
        """One PDU out: all of it over TCP; one message of the pipe over SMB."""
        if hasattr(self.s, 'sendall'):
            self.s.sendall(blob)
        else:
            self.s.send(blob)

    def creds(self, password=None):
        c = self.get_user_creds()
        c.set_kerberos_state(credentials.DONT_USE_KERBEROS)
        if password is not None:
            c.set_password(password)
        return c

    def ctx(self):
        c = dcerpc.ctx_list()
        c.context_id = 0
        c.num_transfer_syntaxes = 1
        c.abstract_syntax = PERFLIBV2
        c.transfer_syntaxes = [samba.dcerpc.base.transfer_syntax_ndr()]
        return c

    def bind(self, auth_type, use_auth3=False, hdr_signing=False, password=None,
             level=dcerpc.DCERPC_AUTH_LEVEL_PRIVACY, **expect):
        auth = self.get_auth_context_creds(self.creds(password), auth_type, level,
                                           auth_context_id=0x5043, hdr_signing=hdr_signing)
        ctx = self.ctx()
        ack = self.do_generic_bind(ctx=ctx, auth_context=auth, use_auth3=use_auth3, **expect)
        return ctx, auth, ack

    def enumerate_countersets(self, ctx, auth, call_id=2):
        """EnumerateCounterSet(L"", 256), sealed; its answer checked and unsealed."""
        sealer = auth.setdefault('sealer', Sealer(auth['gensec'].session_key(),
                                                  auth['auth_type'] == dcerpc.DCERPC_AUTH_TYPE_SPNEGO))
        # szMachine, a [string] wchar_t* (a reference: no referent id), then dwInSize.
        stub = struct.pack('<LLLHHL', 1, 0, 1, 0, 0, 256)
        pad = (16 - len(stub) % 16) % 16
        stub += b'\0' * pad
        trailer = struct.pack('<BBBBL', auth['auth_type'], auth['auth_level'], pad, 0,
                              auth['auth_context_id'])
        frag_len = 24 + len(stub) + 8 + 16
        head = struct.pack('<BBBB4sHHLLHH', 5, 0, 0, 3, b'\x10\0\0\0', frag_len, 16, call_id,
                           len(stub) - pad, ctx.context_id, 0)
        sealed, sig = sealer.seal(head + stub + trailer, stub)
        self.send_all(head + sealed + trailer + sig)
        rep, blob = self.recv_pdu_raw()
        if rep.ptype == dcerpc.DCERPC_PKT_FAULT:
            self.fail('EnumerateCounterSet: fault 0x%x' % rep.u.status)
        self.verify_pdu(rep, dcerpc.DCERPC_PKT_RESPONSE, call_id, auth_length=16)
        self.assertEqual(rep.u.context_id, ctx.context_id)
        sig_at = rep.frag_length - rep.auth_length
        trailer_at = sig_at - 8
        a = self.parse_auth(blob[trailer_at:], auth_context=auth,
                            stub_len=trailer_at - 24)
        self.assertEqual(a.credentials, blob[sig_at:])
        plain, good = sealer.unseal(blob[:24], blob[24:trailer_at], blob[trailer_at:sig_at],
                                    blob[sig_at:])
        self.assertTrue(good, 'the response is signed with the server key and sequence')
        plain = plain[:len(plain) - a.auth_pad_length]
        self.assertEqual(len(plain), rep.u.alloc_hint)
        out_size, rtn_size = struct.unpack('<LL', plain[:8])
        status = struct.unpack('<L', plain[-4:])[0]
        self.assertEqual(status, 0, 'EnumerateCounterSet succeeds')
        self.assertEqual(out_size, rtn_size)
        self.assertEqual(rtn_size, int(os.environ['PERFLIB_COUNTERSETS']),
                         'as many countersets as the provider publishes')
        return rtn_size

    def test_ntlmssp_alter_context(self):
        ctx, auth, _ = self.bind(dcerpc.DCERPC_AUTH_TYPE_NTLMSSP)
        n = self.enumerate_countersets(ctx, auth)
        self.assertEqual(self.enumerate_countersets(ctx, auth, call_id=3), n)

    def test_ntlmssp_auth3(self):
        ctx, auth, _ = self.bind(dcerpc.DCERPC_AUTH_TYPE_NTLMSSP, use_auth3=True)
        self.enumerate_countersets(ctx, auth)

    def test_ntlmssp_header_signing(self):
        ctx, auth, ack = self.bind(dcerpc.DCERPC_AUTH_TYPE_NTLMSSP, hdr_signing=True)
        self.assertTrue(ack.pfc_flags & dcerpc.DCERPC_PFC_FLAG_SUPPORT_HEADER_SIGN)
        self.enumerate_countersets(ctx, auth)

    def test_spnego(self):
        ctx, auth, _ = self.bind(dcerpc.DCERPC_AUTH_TYPE_SPNEGO)
        n = self.enumerate_countersets(ctx, auth)
        self.assertEqual(self.enumerate_countersets(ctx, auth, call_id=3), n)

    def test_spnego_header_signing(self):
        ctx, auth, _ = self.bind(dcerpc.DCERPC_AUTH_TYPE_SPNEGO, hdr_signing=True)
        self.enumerate_countersets(ctx, auth)

    def test_wrong_password(self):
        for auth_type in (dcerpc.DCERPC_AUTH_TYPE_NTLMSSP, dcerpc.DCERPC_AUTH_TYPE_SPNEGO):
            if self.s is None:
                self.connect()
            self.bind(auth_type, password='not ' + os.environ['PASSWORD'],
                      alter_fault=ACCESS_DENIED)
            self.closed()

    def closed(self):
        """The server closes the connection after a refusal."""
        self.assertIsNone(self.recv_pdu(timeout=5))
        self.assertNotConnected()

    def test_integrity_refused(self):
        self.bind(dcerpc.DCERPC_AUTH_TYPE_NTLMSSP, level=dcerpc.DCERPC_AUTH_LEVEL_INTEGRITY,
                  nak_reason=dcerpc.DCERPC_BIND_NAK_REASON_INVALID_AUTH_TYPE)
        self.closed()


class PerflibRawPipe(PerflibRaw):
    """PerflibRaw's cases through Samba's \\PIPE\\winreg (tests/test-samba-np.sh
    starts smbd and perflibd behind it, and sets PERFLIB_PIPE and
    SMB_CONF_PATH to its smb.conf): the transport is Samba's own SMB client
    (the harness's smb_pipe_socket, libsmb), logged on as the same user."""

    def setUp(self):
        if not os.environ.get('PERFLIB_PIPE'):
            self.skipTest('run by tests/test-samba-np.sh, which starts smbd')
        super().setUp()

    def connect(self):
        self.primary_address = '\\pipe\\winreg'
        # ncacn_np's bind_ack names the pipe, as Windows writes it.
        self.secondary_address = '\\PIPE\\winreg'
        self.transport_creds = self.creds()
        super().connect()

    # After an auth3 the harness waits 10 ms for no answer; over SMB that
    # cancels its pipe read and breaks libsmb's connection.  impacket binds
    # NTLM with an auth3 on the pipe (samba_np.py, pcq_session.py).
    test_ntlmssp_auth3 = None


class PerflibKrb5(PerflibRaw):
    """Kerberos: the bind, then EnumerateCounterSet sealed by Samba's gensec."""

    def setUp(self):
        if not os.environ.get('KRB5CCNAME'):
            self.skipTest('no Kerberos realm (tests/test-remote-krb5.sh makes one)')
        super().setUp()

    def creds(self, password=None):
        c = credentials.Credentials()
        c.guess(self.lp_ctx)
        c.set_kerberos_state(credentials.MUST_USE_KERBEROS)
        c.set_named_ccache(os.environ['KRB5CCNAME'], credentials.SPECIFIED, self.lp_ctx)
        return c

    def enumerate_countersets(self, ctx, auth, call_id=2):
        g = auth['gensec']
        stub = struct.pack('<LLLHHL', 1, 0, 1, 0, 0, 256)
        pad = (16 - len(stub) % 16) % 16
        body = stub + b'\0' * pad
        size = g.sig_size(len(body))
        token = g.wrap(body)
        trailer = struct.pack('<BBBBL', auth['auth_type'], auth['auth_level'], pad, 0,
                              auth['auth_context_id'])
        head = struct.pack('<BBBB4sHHLLHH', 5, 0, 0, 3, b'\x10\0\0\0',
                           24 + len(body) + 8 + size, size, call_id, len(stub),
                           ctx.context_id, 0)
        self.send_all(head + token[size:] + trailer + token[:size])
        rep, blob = self.recv_pdu_raw()
        if rep.ptype == dcerpc.DCERPC_PKT_FAULT:
            self.fail('EnumerateCounterSet: fault 0x%x' % rep.u.status)
        self.verify_pdu(rep, dcerpc.DCERPC_PKT_RESPONSE, call_id, auth_length=rep.auth_length)
        sig_at = rep.frag_length - rep.auth_length
        trailer_at = sig_at - 8
        a = self.parse_auth(blob[trailer_at:], auth_context=auth, stub_len=trailer_at - 24)
        plain = g.unwrap(blob[sig_at:] + blob[24:trailer_at])
        plain = plain[:len(plain) - a.auth_pad_length]
        self.assertEqual(len(plain), rep.u.alloc_hint)
        out_size, rtn_size = struct.unpack('<LL', plain[:8])
        self.assertEqual(struct.unpack('<L', plain[-4:])[0], 0, 'EnumerateCounterSet succeeds')
        self.assertEqual(out_size, rtn_size)
        self.assertEqual(rtn_size, int(os.environ['PERFLIB_COUNTERSETS']))
        return rtn_size

    def test_krb5(self):
        ctx, auth, _ = self.bind(dcerpc.DCERPC_AUTH_TYPE_KRB5)
        n = self.enumerate_countersets(ctx, auth)
        self.assertEqual(self.enumerate_countersets(ctx, auth, call_id=3), n)

    def test_spnego_krb5(self):
        ctx, auth, _ = self.bind(dcerpc.DCERPC_AUTH_TYPE_SPNEGO)
        self.enumerate_countersets(ctx, auth)

    def test_not_an_account(self):
        # The script deleted the account before this case: Kerberos vouches, we refuse.
        if not os.environ.get('PERFLIB_KRB5_NO_ACCOUNT'):
            self.skipTest('run by tests/test-remote-krb5.sh once the account is gone')
        self.bind(dcerpc.DCERPC_AUTH_TYPE_KRB5, alter_fault=ACCESS_DENIED)
        self.closed()

    # NTLM's cases are PerflibRaw's.
    test_ntlmssp_alter_context = test_ntlmssp_auth3 = test_ntlmssp_header_signing = None
    test_spnego = test_spnego_header_signing = test_wrong_password = None
    test_integrity_refused = None


class PerflibKrb5Pipe(PerflibKrb5):
    """PerflibKrb5's cases through Samba's \\PIPE\\winreg (tests/test-samba-np.sh,
    perflibd given the realm's keytab as a domain member's would be): the SMB
    session is the user's with its password (NTLM), the logon inside is
    Kerberos, the principal being the SMB user.  SMB goes to SERVER's
    address; TARGET_HOSTNAME names the service for Kerberos only."""

    def setUp(self):
        if not os.environ.get('PERFLIB_PIPE'):
            self.skipTest('run by tests/test-samba-np.sh, which starts smbd')
        super().setUp()

    def connect(self):
        c = self.get_user_creds()
        c.set_kerberos_state(credentials.DONT_USE_KERBEROS)
        self.s = smb_pipe_socket(self.host, 'winreg', c, self.transport_impersonation,
                                 self.lp_ctx)
        self.max_xmit_frag = self.max_recv_frag = 4280
        self.secondary_address = '\\PIPE\\winreg'

    test_not_an_account = None


if __name__ == '__main__':
    unittest.main(verbosity=2)
