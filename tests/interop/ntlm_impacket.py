# SPDX-License-Identifier: MIT
"""impacket's NTLM client against our server (tests/ntlm-peer): the
handshake, then PDUs sealed by impacket the way its DCE/RPC code seals them
(the whole PDU signed, the stub sealed), and the server's sealed replies
checked here, since impacket never checks a server's signature.  Also a
wrong password and a tampered PDU, which must be refused."""
import subprocess
import sys

from Cryptodome.Cipher import ARC4
from impacket import ntlm

PEER = sys.argv[1]


class Peer:
    def __init__(self):
        self.p = subprocess.Popen([PEER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def handshake(password):
    peer = Peer()
    type1 = ntlm.getNTLMSSPType1('', '', signingRequired=True)
    type1['flags'] |= ntlm.NTLMSSP_NEGOTIATE_SEAL
    challenge = bytes.fromhex(peer.ask(type1.getData().hex()))
    type3, key = ntlm.getNTLMSSPType3(type1, challenge, 'User', password,
                                      'Domain')
    return peer, peer.ask(type3.getData().hex()), type3['flags'], key


def check(what, ok):
    print(("ok: " if ok else "FAILED: ") + what)
    if not ok:
        sys.exit(1)


def main():
    peer, answer, flags, key = handshake('Password')
    check("impacket's AUTHENTICATE accepted: " + answer, answer == "OK User")
    csign = ntlm.SIGNKEY(flags, key)
    ssign = ntlm.SIGNKEY(flags, key, b"Server")
    chandle = ARC4.new(ntlm.SEALKEY(flags, key)).encrypt
    shandle = ARC4.new(ntlm.SEALKEY(flags, key, b"Server")).encrypt

    head, tail = bytes(range(16)), b'\xee' * 8
    for seq in range(2):
        stub = bytes((seq * 7 + i) & 0xff for i in range(32))
        plain = head + stub + tail
        sealed, sig = ntlm.SEAL(flags, csign, None, plain, stub, seq, chandle)
        wire = head + sealed + tail
        got = peer.ask("%s 16 32 %s" % (wire.hex(), sig.getData().hex()))
        check("impacket's sealed PDU %d unsealed" % seq, got == plain.hex())

    for seq in range(2):
        plain = head + bytes(range(100, 132)) + tail
        pdu, sig = peer.ask("%s 16 32" % plain.hex()).split()
        pdu, sig = bytes.fromhex(pdu), bytes.fromhex(sig)
        stub = shandle(pdu[16:48])
        want = ntlm.MAC(flags, shandle, ssign, seq, plain).getData()
        check("our sealed reply %d: stub" % seq, stub == plain[16:48])
        check("our sealed reply %d: signature" % seq, sig == want)

    # A flipped byte in the next sealed stub closes the session.
    stub = bytes(32)
    sealed, sig = ntlm.SEAL(flags, csign, None, head + stub + tail, stub, 2,
                            chandle)
    wire = bytearray(head + sealed + tail)
    wire[20] ^= 1
    got = peer.ask("%s 16 32 %s" % (bytes(wire).hex(), sig.getData().hex()))
    check("a tampered PDU refused: " + got, got == "ERR -74")
    peer.close()

    peer, answer, _, _ = handshake('wrong')
    check("a wrong password refused: " + answer, answer == "ERR -13")
    peer.close()


main()
