# SPDX-License-Identifier: MIT
"""Offline check of perflibv2.py: every request that impacket marshals
from our NDR definitions is compared with the NDR bytes worked out by hand
from the MS-PCQ IDL (C706 chapter 14 rules), hand-made responses are
decoded, and the section 2.2.4 parsers are run on buffers laid out as the
spec's diagrams draw them.  Needs no server.  Exits 0 when all pass."""

import struct
import sys

import perflibv2 as p

failures = 0


def check(ok, what, detail=''):
    global failures
    print('%s: %s%s' % ('PASS' if ok else 'FAIL', what, (' (%s)' % detail) if detail and not ok else ''))
    if not ok:
        failures += 1


def L(v):
    return struct.pack('<L', v)


def Q(v):
    return struct.pack('<Q', v)


PAD = None          # a padding byte: any value is fine on the wire


def match(got, expected):
    """expected is a list of bytes and PAD entries (one PAD per byte)."""
    flat = []
    for e in expected:
        if e is PAD:
            flat.append(None)
        else:
            flat.extend(e)
    if len(got) != len(flat):
        return False, 'length %d, expected %d: %s' % (len(got), len(flat), got.hex())
    for i, (g, e) in enumerate(zip(got, flat)):
        if e is not None and g != e:
            return False, 'byte %d is %02x, expected %02x: %s' % (i, g, e, got.hex())
    return True, ''


G1 = '6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9'
G2 = '0a1b2c3d-4e5f-4061-8273-94a5b6c7d8e9'
# The DCE little-endian layout of G1, spelled out.
G1_WIRE = bytes.fromhex('3c2d1e6f' '5a4b' '7849' '8695a4b3c2d1e0f9')
HANDLE = bytes(range(1, 21))


def handle():
    """impacket takes a one-field struct's value directly."""
    return HANDLE


def requests():
    check(p.guid_bytes(G1) == G1_WIRE, 'GUID text to DCE wire layout')
    check(p.MSRPC_UUID_PERFLIBV2[:16] == bytes.fromhex('c5865ada' 'c212' '4349' 'ab307f74a813d853')
          and p.MSRPC_UUID_PERFLIBV2[16:] == b'\x01\x00\x00\x00',
          'interface id da5a86c5-12c2-4943-ab30-7f74a813d853 v1.0')

    r = p.PerflibV2EnumerateCounterSet()
    r['szMachine'] = p.wstr('ab')
    r['dwInSize'] = 3
    # [string] wchar_t*: max 3, offset 0, actual 3, "ab\0"; pad to 4; DWORD.
    ok, d = match(r.getData(), [L(3), L(0), L(3), b'a\0b\0\0\0', PAD, PAD, L(3)])
    check(ok, 'opnum 0 EnumerateCounterSet request', d)

    r = p.PerflibV2QueryCounterSetRegistrationInfo()
    r['szMachine'] = p.wstr('ab')
    r['CounterSetGuid'] = p.guid_field(G1)
    r['RequestCode'] = 2
    r['RequestLCID'] = 7
    r['dwInSize'] = 0x100
    ok, d = match(r.getData(), [L(3), L(0), L(3), b'a\0b\0\0\0', PAD, PAD, G1_WIRE,
                                L(2), L(7), L(0x100)])
    check(ok, 'opnum 1 QueryCounterSetRegistrationInfo request', d)

    r = p.PerflibV2EnumerateCounterSetInstances()
    r['szMachine'] = p.wstr('')
    r['CounterSetGuid'] = p.guid_field(G1)
    r['dwInSize'] = 0
    ok, d = match(r.getData(), [L(1), L(0), L(1), b'\0\0', PAD, PAD, G1_WIRE, L(0)])
    check(ok, 'opnum 2 EnumerateCounterSetInstances request (empty machine name)', d)

    r = p.PerflibV2OpenQueryHandle()
    r['szMachine'] = p.wstr('host')
    ok, d = match(r.getData(), [L(5), L(0), L(5), 'host\0'.encode('utf-16le')])
    check(ok, 'opnum 3 OpenQueryHandle request', d)

    r = p.PerflibV2CloseQueryHandle()
    r['phQuery'] = handle()
    ok, d = match(r.getData(), [HANDLE])
    check(ok, 'opnum 4 CloseQueryHandle request (20-byte context handle)', d)

    for cls, name in ((p.PerflibV2QueryCounterInfo, 'opnum 5 QueryCounterInfo'),
                      (p.PerflibV2QueryCounterData, 'opnum 6 QueryCounterData')):
        r = cls()
        r['hQuery'] = handle()
        r['dwInSize'] = 0x12345
        ok, d = match(r.getData(), [HANDLE, L(0x12345)])
        check(ok, name + ' request', d)

    r = p.PerflibV2ValidateCounters()
    r['hQuery'] = handle()
    r['dwInSize'] = 5
    r['lpData'] = p.byte_array_c(b'\x01\x02\x03\x04\x05')
    r['dwAdd'] = 1
    # [in, size_is] unsigned char*: conformance 5, then 5 bytes; pad; DWORD.
    ok, d = match(r.getData(), [HANDLE, L(5), L(5), b'\x01\x02\x03\x04\x05', PAD, PAD, PAD, L(1)])
    check(ok, 'opnum 7 ValidateCounters request', d)

    for opnum, cls in p.OPNUMS.items():
        check(cls.opnum == opnum, 'opnum %d is %s' % (opnum, cls.__name__))


def responses():
    g2 = p.guid_bytes(G2)
    raw = L(2) + L(2) + L(4) + L(0) + L(2) + G1_WIRE + g2 + L(0)
    r = p.PerflibV2EnumerateCounterSetResponse(raw)
    got = [p.guid_text(x['Data']) for x in r['lpData']]
    check(r['pdwOutSize'] == 2 and r['pdwRtnSize'] == 2 and got == [G1, G2] and r['ErrorCode'] == 0,
          'opnum 0 response: out/rtn sizes, 2 of max 4 GUIDs, status', repr(got))

    raw = L(5) + L(9) + L(8) + L(0) + L(5) + b'hello' + b'\0\0\0' + L(8)
    r = p.PerflibV2QueryCounterSetRegistrationInfoResponse(raw)
    check(p.array_bytes(r['lpData']) == b'hello' and r['pdwRtnSize'] == 9 and r['ErrorCode'] == 8,
          'opnum 1 response: varying byte array then status after padding')

    raw = L(0) + L(40) + L(0) + L(0) + L(0) + L(8)
    r = p.PerflibV2EnumerateCounterSetInstancesResponse(raw)
    check(p.array_bytes(r['lpData']) == b'' and r['pdwRtnSize'] == 40 and r['ErrorCode'] == 8,
          'opnum 2 response: empty array, needed size, ERROR_NOT_ENOUGH_MEMORY')

    r = p.PerflibV2OpenQueryHandleResponse(HANDLE + L(0))
    check(r['phQuery'] == HANDLE and r['ErrorCode'] == 0, 'opnum 3 response: handle')

    r = p.PerflibV2CloseQueryHandleResponse(b'\0' * 20 + L(0))
    check(r['phQuery'] == b'\0' * 20, 'opnum 4 response: NULL handle')

    raw = L(3) + b'abc' + b'\0' + L(0x57)
    r = p.PerflibV2ValidateCountersResponse(raw)
    check(p.array_bytes(r['lpData']) == b'abc' and r['ErrorCode'] == 0x57,
          'opnum 7 response: conformant byte array then status')


def buffers():
    # RequestCode 1: one counterset and two counters (figure 1).
    cs = G1_WIRE + L(0) + L(100) + L(2) + L(2)
    c1 = L(1) + L(0x10000) + Q(0) + L(100) + struct.pack('<l', -2) + L(0xFFFFFFFF) * 4 + L(0) + L(0)
    c2 = L(2) + L(0x10100) + Q(1) + L(200) + L(0) + L(5) + L(6) + L(7) + L(8) + L(1) + L(0)
    info, counters = p.parse_counterset_reg_info(cs + c1 + c2)
    check(info['CounterSetGuid'] == G1 and info['NumCounters'] == 2 and info['InstanceType'] == 2
          and counters[0]['DefaultScale'] == -2 and counters[1]['Attrib'] == 1
          and counters[1]['MultiId'] == 8 and counters[1]['AggregateFunc'] == 1,
          '_PERF_COUNTERSET_REG_INFO + 2 x _PERF_COUNTER_REG_INFO (32 + 48 bytes each)')

    # Figure 2: two names, 6 and 8 bytes.
    n1, n2 = 'ab\0'.encode('utf-16le'), 'cde\0'.encode('utf-16le')
    body = L(1) + L(0) + L(2) + L(len(n1))
    sb = L(8 + 16 + 16) + L(2) + body + n1 + n2 + b'\0\0'
    problems = []
    check(p.parse_string_buffer(sb, problems) == [(1, 'ab'), (2, 'cde')] and not problems,
          '_STRING_BUFFER_HEADER + _STRING_COUNTER_HEADERs + strings', repr(problems))

    # Figure 3: instances "ab" (6 bytes + 2 pad) and "cde" (8 bytes).
    ib = L(16) + L(4) + n1 + b'\0\0' + L(16) + L(9) + n2
    problems = []
    check(p.parse_instances(ib, problems) == [(4, 'ab'), (9, 'cde')] and not problems,
          '_PERF_INSTANCE_HEADER blocks')

    ident = p.build_counter_identifier(G1, 3, 'ab', instance_id=4)
    check(len(ident) == 48 and ident[20:24] == L(48) and ident[40:46] == n1 and ident[46:] == b'\0\0',
          '_PERF_COUNTER_IDENTIFIER built: 40 bytes + name, Size an 8-byte multiple')
    ids = p.parse_counter_identifiers(ident + p.build_counter_identifier(G1, 0xFFFFFFFF, '*'))
    check([(i['CounterId'], i['InstanceName'], i['Size'], i['InstanceId']) for i in ids] ==
          [(3, 'ab', 48, 4), (0xFFFFFFFF, '*', 48, 0xFFFFFFFF)],
          '_PERF_COUNTER_IDENTIFIER parsed back (InstanceId defaults to the 0xFFFFFFFF filter)')

    head = L(0) + L(0) + Q(1) + Q(2) + Q(3) + struct.pack('<8H', 2026, 11, 1, 23, 18, 0, 0, 0)
    single = L(0) + L(1) + L(16 + 8 + 8) + L(0) + L(4) + L(16) + L(42) + L(0)
    multi_c = (L(0) + L(2) + L(16 + 16 + 16 + 16) + L(0) + L(16) + L(2) + L(1) + L(2)
               + L(4) + L(16) + L(7) + L(0) + L(8) + L(16) + Q(1 << 40))
    inst = L(16) + L(4) + n1 + b'\0\0'
    multi_i = (L(0) + L(4) + L(16 + 8 + 16 + 16) + L(0) + L(8 + 16 + 16) + L(1)
               + inst + L(4) + L(16) + L(99) + L(0))
    cset = (L(0) + L(6) + L(16 + 16 + 8 + 16 + 16 + 16) + L(0) + L(16) + L(2) + L(1) + L(2)
            + L(8 + 16 + 32) + L(1) + inst + L(4) + L(16) + L(5) + L(0) + L(8) + L(16) + Q(6))
    err = L(0x1069) + L(0) + L(16) + L(0)
    body = single + multi_c + multi_i + cset + err
    buf = L(48 + len(body)) + L(5) + head[8:] + body
    problems = []
    h, blocks = p.parse_counter_data(buf, problems)
    check(h['dwNumCounter'] == 5 and h['SystemTime'][0] == 2026 and not problems
          and blocks[0]['value'] == 42
          and blocks[1]['counters'] == {1: 7, 2: 1 << 40}
          and blocks[2]['instances'] == [(4, 'ab', 99)]
          and blocks[3]['instances'] == [(4, 'ab', {1: 5, 2: 6})]
          and blocks[4]['dwType'] == 0 and blocks[4]['dwStatus'] == 0x1069,
          '_PERF_DATA_HEADER + single, multi-counter, multi-instance, counterset, error blocks',
          repr((problems, blocks)))

    bad = buf[:60]
    try:
        p.parse_counter_data(bad)
        check(False, 'a truncated data buffer is refused')
    except p.ParseError:
        check(True, 'a truncated data buffer is refused')


def main():
    requests()
    responses()
    buffers()
    print('%d failure(s)' % failures)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
