#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A stand-in for perflibd, for checking the interop harness itself.

It serves, over impacket's minimal DCE/RPC server, the countersets that
interop-provider.c publishes, following our reading of MS-PCQ.  It is not
a reference: it shares pcq_session.py's reading of the spec, so agreeing
with it proves only that the harness (bind, marshalling, faults, capture,
tshark checks) works.  Run the real test against it with
    INTEROP_PERFLIBD=tests/interop/mock_perflibd.py make check TESTS=test-interop-impacket.sh

Takes perflibd's options; only --listen-tcp HOST:PORT matters.
"""

import argparse
import os
import struct
import sys
import time
import traceback

from impacket.dcerpc.v5 import rpcrt

import pcq_session as expect
import perflibv2 as p

FAULT_CONTEXT_MISMATCH = 0x1C00001A
FAULT_REMOTE_NO_MEMORY = 0x1C000002
RPC_X_INVALID_BOUND = 0x6C6
NCA_S_OP_RNG_ERROR = 0x1C010002


class Fault(Exception):
    def __init__(self, code):
        Exception.__init__(self)
        self.code = code


def pad8(b):
    return b + b'\0' * ((-len(b)) % 8)


def wz(s):
    return (s + '\x00').encode('utf-16le')


T0 = time.monotonic()


def instances(guid):
    if guid == expect.SINGLE:
        return [(0, '_Default')]
    return list(expect.MANY_INSTANCES if guid == expect.MANY else expect.INSTANCES)


def value(guid, iid, cid):
    if guid == expect.SINGLE:
        return {1: expect.FIXED32, 2: expect.FIXED64, 4: expect.BYREF64,
                3: int((time.monotonic() - T0) * 100) & 0xFFFFFFFF}[cid]
    if guid == expect.MANY:
        return iid
    return 1000 + iid if cid == 1 else (iid << 40) | 7


def width(guid, cid):
    return 8 if expect.COUNTERSETS[guid]['counters'][cid][0] & 0x100 else 4


def counter_reg(cid, c):
    ctype, attrib, detail = c[0], c[1], c[2]
    return struct.pack(p.COUNTER_REG_INFO, cid, ctype, attrib, detail, 0,
                       0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0)


def string_buffer(counters, col):
    heads, strings = b'', b''
    for cid in sorted(counters):
        heads += struct.pack('<LL', cid, len(strings))
        strings += wz(counters[cid][col])
    body = heads + strings
    return pad8(struct.pack('<LL', 8 + len(body) + (-(8 + len(body))) % 8, len(counters)) + body)


def reg_info_buffer(guid, code, lcid):
    cs = expect.COUNTERSETS[guid]
    counters = cs['counters']
    if code == p.REQ_COUNTERSET_INFO:
        head = struct.pack(p.COUNTERSET_REG_INFO, p.guid_bytes(guid), 0, expect.NOVICE,
                           len(counters), cs['instance_type'])
        return head + b''.join(counter_reg(i, counters[i]) for i in sorted(counters))
    if code == p.REQ_COUNTER_INFO:
        if lcid not in counters:
            raise Fault(-p.ERROR_WMI_ITEMID_NOT_FOUND)
        return counter_reg(lcid, counters[lcid])
    if code in (p.REQ_COUNTERSET_NAME, p.REQ_COUNTERSET_ENGLISH_NAME):
        return wz(cs['name'])
    if code == p.REQ_COUNTERSET_HELP:
        return wz(cs['help'])
    if code in (p.REQ_COUNTER_NAMES, p.REQ_COUNTER_ENGLISH_NAMES):
        return string_buffer(counters, 3)
    if code == p.REQ_COUNTER_HELP:
        return string_buffer(counters, 4)
    if code == p.REQ_PROVIDER_NAME:
        return wz(expect.PROVIDER_NAME)
    if code == p.REQ_PROVIDER_GUID:
        return p.guid_bytes(expect.PROVIDER_GUID)
    raise Fault(-p.ERROR_INVALID_PARAMETER)


def in_range(n, top):
    """[range(0, top)] in the IDL: the runtime refuses the call."""
    if n > top:
        raise Fault(RPC_X_INVALID_BOUND)
    return n


def sized_answer(make, n):
    """Fills a SizedBytesResponse by the pdwRtnSize rule."""
    r = p.SizedBytesResponse()
    try:
        buf = make()
    except Fault as f:
        if f.code > 0:
            raise
        r['pdwOutSize'], r['pdwRtnSize'], r['lpData'], r['ErrorCode'] = 0, 0, [], -f.code
        return r
    fits = len(buf) <= n
    r['pdwOutSize'] = len(buf) if fits else 0
    r['pdwRtnSize'] = len(buf)
    r['lpData'] = list(buf) if fits else []
    r['ErrorCode'] = 0 if fits else p.ERROR_NOT_ENOUGH_MEMORY
    return r


class Queries:
    def __init__(self):
        self.handles = {}

    def get(self, h):
        if h not in self.handles:
            raise Fault(FAULT_CONTEXT_MISMATCH)
        return self.handles[h]


queries = Queries()


def op_enumerate(data):
    req = p.PerflibV2EnumerateCounterSet(data)
    guids = sorted(expect.COUNTERSETS)
    r = p.PerflibV2EnumerateCounterSetResponse()
    fits = in_range(req['dwInSize'], 65536) >= len(guids)
    r['pdwOutSize'] = len(guids) if fits else 0
    r['pdwRtnSize'] = len(guids)
    r['lpData'] = [p.guid_field(g) for g in guids] if fits else []
    r['ErrorCode'] = 0 if fits else p.ERROR_NOT_ENOUGH_MEMORY
    return r


def known(guid):
    if guid not in expect.COUNTERSETS:
        raise Fault(-p.ERROR_WMI_GUID_NOT_FOUND)


def op_reg_info(data):
    req = p.PerflibV2QueryCounterSetRegistrationInfo(data)
    guid = p.guid_text(req['CounterSetGuid'])

    def make():
        known(guid)
        return reg_info_buffer(guid, req['RequestCode'], req['RequestLCID'])
    return sized_answer(make, in_range(req['dwInSize'], 134217728))


def op_instances(data):
    req = p.PerflibV2EnumerateCounterSetInstances(data)
    guid = p.guid_text(req['CounterSetGuid'])

    def make():
        known(guid)
        return b''.join(pad8(struct.pack('<LL', len(pad8(b'\0' * 8 + wz(n))), i) + wz(n))
                        for i, n in instances(guid))
    return sized_answer(make, in_range(req['dwInSize'], 67108864))


def op_open(data):
    p.PerflibV2OpenQueryHandle(data)
    h = b'\0' * 4 + os.urandom(16)
    queries.handles[h] = []
    r = p.PerflibV2OpenQueryHandleResponse()
    r['phQuery'] = h
    r['ErrorCode'] = 0
    return r


def op_close(data):
    req = p.PerflibV2CloseQueryHandle(data)
    queries.get(req['phQuery'])
    del queries.handles[req['phQuery']]
    r = p.PerflibV2CloseQueryHandleResponse()
    r['phQuery'] = b'\0' * 20
    r['ErrorCode'] = 0
    return r


def status_of(entries, guid, cid, inst, iid, add):
    if guid not in expect.COUNTERSETS:
        return p.ERROR_WMI_GUID_NOT_FOUND
    if cid != p.WILDCARD_COUNTER and cid not in expect.COUNTERSETS[guid]['counters']:
        return p.ERROR_WMI_ITEMID_NOT_FOUND
    if guid != expect.SINGLE and not any(
            (inst == '*' or n == inst) and iid in (p.WILDCARD_INSTANCE_ID, i)
            for i, n in instances(guid)):
        return p.ERROR_PATH_NOT_FOUND
    key = (guid, cid, inst)
    if add:
        if key in entries:
            return p.ERROR_ALREADY_EXISTS
        entries.append(key)
    else:
        if key not in entries:
            return p.ERROR_INVALID_PARAMETER
        entries.remove(key)
    return 0


def op_validate(data):
    req = p.PerflibV2ValidateCounters(data)
    entries = queries.get(req['hQuery'])
    buf = bytearray(p.array_bytes(req['lpData']))
    r = p.PerflibV2ValidateCountersResponse()
    r['lpData'] = list(buf)
    if in_range(req['dwInSize'], 67108864) < p.COUNTER_IDENTIFIER_SIZE:
        r['ErrorCode'] = p.ERROR_INVALID_PARAMETER
        return r
    off = 0
    for ident in p.parse_counter_identifiers(bytes(buf)):
        st = status_of(entries, ident['CounterSetGuid'], ident['CounterId'],
                       ident['InstanceName'], ident['InstanceId'], req['dwAdd'] != 0)
        struct.pack_into('<L', buf, off + 16, st)
        off += ident['Size']
    r['lpData'] = list(buf)
    r['ErrorCode'] = 0
    return r


def op_info(data):
    req = p.PerflibV2QueryCounterInfo(data)
    entries = queries.get(req['hQuery'])
    return sized_answer(lambda: b''.join(
        p.build_counter_identifier(g, c, i, index=n) for n, (g, c, i) in enumerate(entries)),
        in_range(req['dwInSize'], 67108864))


def cdata(guid, iid, cid):
    w = width(guid, cid)
    return struct.pack('<LL', w, pad8(b'\0' * (8 + w)).__len__()) + pad8(
        struct.pack('<L' if w == 4 else '<Q', value(guid, iid, cid)))


def multi_counters(ids):
    body = struct.pack('<%dL' % len(ids), *ids)
    return pad8(struct.pack('<LL', len(pad8(b'\0' * 8 + body)), len(ids)) + body)


def inst_head(iid, name):
    return pad8(struct.pack('<LL', len(pad8(b'\0' * 8 + wz(name))), iid) + wz(name))


def multi_instances(rows):
    body = b''.join(rows)
    return struct.pack('<LL', 8 + len(body), len(rows)) + body


def block(guid, cid, inst):
    ids = sorted(expect.COUNTERSETS[guid]['counters']) if cid == p.WILDCARD_COUNTER else [cid]
    insts = instances(guid)
    if inst != '*':
        insts = [x for x in insts if x[1] == inst] or insts[:1]
    if len(insts) == 1 and len(ids) == 1:
        btype, body = p.PERF_SINGLE_COUNTER, cdata(guid, insts[0][0], ids[0])
    elif len(insts) == 1:
        btype = p.PERF_MULTI_COUNTERS
        body = multi_counters(ids) + b''.join(cdata(guid, insts[0][0], c) for c in ids)
    elif len(ids) == 1:
        btype = p.PERF_MULTI_INSTANCES
        body = multi_instances([inst_head(i, n) + cdata(guid, i, ids[0]) for i, n in insts])
    else:
        btype = p.PERF_COUNTERSET
        body = multi_counters(ids) + multi_instances(
            [inst_head(i, n) + b''.join(cdata(guid, i, c) for c in ids) for i, n in insts])
    return struct.pack('<LLLL', 0, btype, 16 + len(body), 0) + body


def data_buffer(entries):
    blocks = b''.join(block(*e) for e in entries)
    now = time.time()
    t = time.gmtime(now)
    head = struct.pack(p.DATA_HEADER, p.DATA_HEADER_SIZE + len(blocks), len(entries),
                       time.monotonic_ns(), int((now + 11644473600) * 10**7), 10**9,
                       t.tm_year, t.tm_mon, (t.tm_wday + 1) % 7, t.tm_mday, t.tm_hour,
                       t.tm_min, t.tm_sec, 0)
    return head + blocks


def op_data(data):
    req = p.PerflibV2QueryCounterData(data)
    entries = queries.get(req['hQuery'])
    return sized_answer(lambda: data_buffer(entries), in_range(req['dwInSize'], 1073741824))


OPS = {0: op_enumerate, 1: op_reg_info, 2: op_instances, 3: op_open, 4: op_close,
       5: op_info, 6: op_data, 7: op_validate}


class Server(rpcrt.DCERPCServer):
    def __init__(self, host, port):
        rpcrt.DCERPCServer.__init__(self)
        self._listenAddress = host
        self.setListenPort(port)
        self.addCallbacks(('da5a86c5-12c2-4943-ab30-7f74a813d853', '1.0'), '',
                          {n: (lambda d, f=f: f(d).getData()) for n, f in OPS.items()})

    def send(self, data):
        """Fragments of at most 4280 bytes, each with its own frag_len
        (impacket's keeps the whole PDU's)."""
        stub, off = data['pduData'], 0
        data['alloc_hint'] = len(stub)
        while True:
            chunk = stub[off:off + 4096]
            flags = rpcrt.PFC_FIRST_FRAG if off == 0 else 0
            off += len(chunk)
            if off >= len(stub):
                flags |= rpcrt.PFC_LAST_FRAG
            data['flags'] = flags
            data['pduData'] = chunk
            data['frag_len'] = len(data.get_packet())
            self._clientSock.sendall(data.get_packet())
            if off >= len(stub):
                return

    def recv(self):
        """One whole PDU: impacket's keeps only the last fragment's."""
        first, stub = None, b''
        while True:
            data = self._clientSock.recv(rpcrt.MSRPCRespHeader._SIZE)
            if not data:
                return None
            head = rpcrt.MSRPCRespHeader(data)
            while len(data) < head['frag_len']:
                more = self._clientSock.recv(head['frag_len'] - len(data))
                if not more:
                    return None
                data += more
            head = rpcrt.MSRPCRespHeader(data)
            if head['type'] != rpcrt.MSRPC_REQUEST:
                return data
            first = first or head
            stub += head['pduData']
            if head['flags'] & rpcrt.PFC_LAST_FRAG:
                first['flags'] |= rpcrt.PFC_LAST_FRAG
                first['pduData'] = stub
                first['frag_len'] = len(first.getData())
                return first.getData()

    def processRequest(self, data):
        """impacket's, plus a real fault PDU when a call raises Fault."""
        try:
            # impacket's own fault for an unknown opnum lacks the 4 reserved
            # bytes after the status, and tshark rightly calls it malformed.
            if (rpcrt.MSRPCHeader(data)['type'] == rpcrt.MSRPC_REQUEST and
                    rpcrt.MSRPCRequestHeader(data)['op_num'] not in OPS):
                raise Fault(NCA_S_OP_RNG_ERROR)
            return rpcrt.DCERPCServer.processRequest(self, data)
        except Fault as f:
            code = f.code
        except Exception:                       # noqa: BLE001 (a bug here: say so, fault)
            traceback.print_exc()
            code = FAULT_REMOTE_NO_MEMORY
        response = rpcrt.MSRPCRespHeader(data)
        response['type'] = rpcrt.MSRPC_FAULT
        response['pduData'] = struct.pack('<LL', code, 0)
        response['frag_len'] = len(response)
        return response


def main():
    ap = argparse.ArgumentParser()
    for opt in ('--runtime-dir', '--registry-dir', '--plugin-dir', '--accounts'):
        ap.add_argument(opt)
    ap.add_argument('--listen-tcp', required=True)
    args = ap.parse_args()
    host, port = args.listen_tcp.rsplit(':', 1)
    Server(host, int(port)).run()


if __name__ == '__main__':
    sys.exit(main())
