# SPDX-License-Identifier: MIT
"""Samba's gensec (python3-samba) as a Kerberos DCE/RPC client against our
acceptor (tests/krb5-peer), in the realm tests/krb5-kdc.sh made: the DCE
style exchange; at PKT_INTEGRITY with header signing, Samba's signed
request verified by us and our signed response checked by Samba; at
PKT_PRIVACY, the auth_length both sides expect, our sealed response
unwrapped by Samba and Samba's wrap token verified by us; last, a
tampered request refused."""
import os
import struct
import subprocess
import sys

from samba import gensec, param
from samba.credentials import Credentials, MUST_USE_KERBEROS, SPECIFIED
from samba.dcerpc import dcerpc

PEER = sys.argv[1]
HOST = "perflibd.perflib.test"
INTEGRITY = dcerpc.DCERPC_AUTH_LEVEL_INTEGRITY
PRIVACY = dcerpc.DCERPC_AUTH_LEVEL_PRIVACY
HDR = 24            # a request's or response's headers, no object uuid
STUB = b"PerflibV2 over Kerberos, 37 bytes.."


def check(what, ok):
    print(("ok: " if ok else "FAILED: ") + what)
    if not ok:
        sys.exit(1)


class Peer:
    def __init__(self):
        self.p = subprocess.Popen([PEER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def ask(self, *words):
        self.p.stdin.write(" ".join(str(w) for w in words) + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def client(level):
    lp = param.LoadParm()
    lp.set("realm", os.environ["KRB5_TEST_REALM"])
    lp.set("workgroup", "PERFLIB")
    creds = Credentials()
    creds.guess(lp)
    creds.set_kerberos_state(MUST_USE_KERBEROS)
    creds.set_named_ccache(os.environ["KRB5CCNAME"], SPECIFIED, lp)
    g = gensec.Security.start_client({"lp_ctx": lp, "target_hostname": HOST})
    g.set_credentials(creds)
    g.set_target_service("host")
    g.set_target_hostname(HOST)
    g.want_feature(gensec.FEATURE_DCE_STYLE)
    g.want_feature(gensec.FEATURE_SIGN_PKT_HEADER)
    if level == PRIVACY:
        g.want_feature(gensec.FEATURE_SEAL)
    g.start_mech_by_authtype(dcerpc.DCERPC_AUTH_TYPE_KRB5, level)
    return g


def establish(level):
    peer, g = Peer(), client(level)
    done, tok = g.update(b"")
    answer = peer.ask("TOKEN", tok.hex())
    check("AP-REQ answered with AP-REP: " + answer[:20], answer.startswith("TOKEN "))
    done, tok = g.update(bytes.fromhex(answer.split()[1]))
    check("Samba's client done after our AP-REP", done)
    answer = peer.ask("TOKEN", tok.hex())
    check("the third leg establishes: " + answer, answer == "DONE user@PERFLIB.TEST")
    return peer, g


def pdu(ptype, level, body_len, sig_len, stub_len):
    """The headers and the sec_trailer of a one-fragment call."""
    pad = body_len - stub_len
    hdr = struct.pack("<BBBBIHHIIHH", 5, 0, ptype, 3, 0x10, HDR + body_len + 8 + sig_len,
                      sig_len, 1, stub_len, 0, 0)
    return hdr, struct.pack("<BBBBI", 16, level, pad, 0, 7)


def integrity():
    peer, g = establish(INTEGRITY)
    size = g.sig_size(len(STUB))
    check("the MIC's size agrees: %d" % size, peer.ask("SIGSIZE", INTEGRITY, 1) == str(size))
    body = STUB + b"\0" * ((16 - len(STUB) % 16) % 16)
    hdr, trailer = pdu(0, INTEGRITY, len(body), size, len(STUB))
    sig = g.sign_packet(body, hdr + body + trailer)
    answer = peer.ask("VERIFY", INTEGRITY, 1, (hdr + body + trailer + sig).hex())
    check("Samba's header-signed request verified", answer == "OK " + STUB.hex())
    out = bytes.fromhex(peer.ask("SEND", INTEGRITY, 1, STUB.hex()))
    g.check_packet(out[HDR:-size - 8], out[:-size], out[-size:])
    check("our header-signed response checked by Samba", out[HDR:HDR + len(STUB)] == STUB)
    bad = bytearray(hdr + body + trailer + sig)
    bad[HDR + 3] ^= 1
    answer = peer.ask("VERIFY", INTEGRITY, 1, bytes(bad).hex())
    check("a tampered request refused: " + answer, answer == "ERR -129")
    peer.close()


def privacy():
    peer, g = establish(PRIVACY)
    size = g.sig_size(len(STUB))
    check("the wrap token's size agrees: %d" % size, peer.ask("SIGSIZE", PRIVACY, 0) == str(size))
    out = bytes.fromhex(peer.ask("SEND", PRIVACY, 0, STUB.hex()))
    body = out[HDR:-size - 8]
    check("the stub sealed", STUB not in out)
    check("our sealed response unwrapped by Samba",
          g.unwrap(out[-size:] + body)[:len(STUB)] == STUB)
    body = STUB + b"\0" * ((16 - len(STUB) % 16) % 16)
    token = g.wrap(body)
    hdr, trailer = pdu(0, PRIVACY, len(body), size, len(STUB))
    sealed = hdr + token[size:] + trailer + token[:size]
    answer = peer.ask("VERIFY", PRIVACY, 0, sealed.hex())
    check("Samba's sealed request verified", answer == "OK " + STUB.hex())
    peer.close()


integrity()
privacy()
