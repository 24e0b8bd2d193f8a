# SPDX-License-Identifier: MIT
"""The PerflibV2 interface of [MS-PCQ], for impacket.

Written from the spec alone (/work/shared/spec/MS-PCQ.md): the IDL of
section 6 as impacket NDR calls, and parsers and builders for the
buffers of section 2.2.4 that the IDL carries as opaque byte arrays.
Nothing here is taken from the server's C code, so a disagreement between
the two is a finding, not a tautology.

IDL notes (C706 / MS-RPCE rules applied by hand):
  - A top-level [in, string] wchar_t* is a ref pointer: no referent id,
    just the conformant varying string (impacket WSTR, which needs the
    terminating NUL in its data).
  - [out] DWORD*, [in] GUID*, [out] PRPC_HQUERY are ref pointers too: the
    pointee is marshalled in place.
  - [out, size_is(dwInSize), length_is(*pdwOutSize)] T* is a conformant
    varying array: MaximumCount, Offset, ActualCount, elements.
  - [in, out, size_is(dwInSize)] unsigned char* is a conformant array:
    MaximumCount, elements, in both directions.
  - RPC_HQUERY is a context handle: 20 bytes (attributes + uuid).
"""

import struct
import uuid

from impacket.dcerpc.v5.dtypes import DWORD, GUID, WSTR
from impacket.dcerpc.v5.ndr import (NDRCALL, NDRSTRUCT, NDRUniConformantArray,
                                    NDRUniConformantVaryingArray)
from impacket.dcerpc.v5.rpcrt import DCERPCException
from impacket.uuid import uuidtup_to_bin

MSRPC_UUID_PERFLIBV2 = uuidtup_to_bin(('da5a86c5-12c2-4943-ab30-7f74a813d853', '1.0'))

# Win32 codes the spec names (MS-ERREF values).
ERROR_SUCCESS = 0x0
ERROR_PATH_NOT_FOUND = 0x3
ERROR_ACCESS_DENIED = 0x5
ERROR_NOT_ENOUGH_MEMORY = 0x8
ERROR_OUTOFMEMORY = 0xE
ERROR_INVALID_PARAMETER = 0x57
ERROR_ALREADY_EXISTS = 0xB7
ERROR_WMI_GUID_NOT_FOUND = 0x1068
ERROR_WMI_INSTANCE_NOT_FOUND = 0x1069
ERROR_WMI_ITEMID_NOT_FOUND = 0x106A

# QueryCounterSetRegistrationInfo request codes (3.1.4.1.2).
REQ_COUNTERSET_INFO = 1
REQ_COUNTER_INFO = 2
REQ_COUNTERSET_NAME = 3
REQ_COUNTERSET_HELP = 4
REQ_COUNTER_NAMES = 5
REQ_COUNTER_HELP = 6
REQ_PROVIDER_NAME = 7
REQ_PROVIDER_GUID = 8
REQ_COUNTERSET_ENGLISH_NAME = 9
REQ_COUNTER_ENGLISH_NAMES = 10

# _PERF_COUNTER_HEADER.dwType (2.2.4.8).
PERF_ERROR_RETURN = 0
PERF_SINGLE_COUNTER = 1
PERF_MULTI_COUNTERS = 2
PERF_MULTI_INSTANCES = 4
PERF_COUNTERSET = 6

WILDCARD_COUNTER = 0xFFFFFFFF
WILDCARD_INSTANCE = '*'


class DCERPCSessionError(DCERPCException):
    """impacket looks this name up in the module of the call that failed."""

    def __str__(self):
        return 'PerflibV2 SessionError: Win32 code 0x%x' % (self.error_code or 0)


# ---- NDR types of the IDL ----

class RPC_HQUERY(NDRSTRUCT):
    """[context_handle]: 4 bytes of attributes and a 16-byte uuid."""
    structure = (
        ('Data', '20s=b"\\x00"*20'),
    )

    def getAlignment(self):
        return 4


class GUID_ARRAY_CV(NDRUniConformantVaryingArray):
    item = GUID


class BYTE_ARRAY_CV(NDRUniConformantVaryingArray):
    item = 'c'


class BYTE_ARRAY_C(NDRUniConformantArray):
    item = 'c'


class SizedBytesResponse(NDRCALL):
    """The out parameters of opnums 1, 2, 5 and 6: pdwOutSize, pdwRtnSize,
    the [size_is(dwInSize), length_is(*pdwOutSize)] bytes, the status."""
    structure = (
        ('pdwOutSize', DWORD),
        ('pdwRtnSize', DWORD),
        ('lpData', BYTE_ARRAY_CV),
        ('ErrorCode', DWORD),
    )


# Opnum 0
class PerflibV2EnumerateCounterSet(NDRCALL):
    opnum = 0
    structure = (
        ('szMachine', WSTR),
        ('dwInSize', DWORD),
    )


class PerflibV2EnumerateCounterSetResponse(NDRCALL):
    structure = (
        ('pdwOutSize', DWORD),
        ('pdwRtnSize', DWORD),
        ('lpData', GUID_ARRAY_CV),
        ('ErrorCode', DWORD),
    )


# Opnum 1
class PerflibV2QueryCounterSetRegistrationInfo(NDRCALL):
    opnum = 1
    structure = (
        ('szMachine', WSTR),
        ('CounterSetGuid', GUID),
        ('RequestCode', DWORD),
        ('RequestLCID', DWORD),
        ('dwInSize', DWORD),
    )


class PerflibV2QueryCounterSetRegistrationInfoResponse(SizedBytesResponse):
    pass


# Opnum 2
class PerflibV2EnumerateCounterSetInstances(NDRCALL):
    opnum = 2
    structure = (
        ('szMachine', WSTR),
        ('CounterSetGuid', GUID),
        ('dwInSize', DWORD),
    )


class PerflibV2EnumerateCounterSetInstancesResponse(SizedBytesResponse):
    pass


# Opnum 3
class PerflibV2OpenQueryHandle(NDRCALL):
    opnum = 3
    structure = (
        ('szMachine', WSTR),
    )


class PerflibV2OpenQueryHandleResponse(NDRCALL):
    structure = (
        ('phQuery', RPC_HQUERY),
        ('ErrorCode', DWORD),
    )


# Opnum 4
class PerflibV2CloseQueryHandle(NDRCALL):
    opnum = 4
    structure = (
        ('phQuery', RPC_HQUERY),
    )


class PerflibV2CloseQueryHandleResponse(NDRCALL):
    structure = (
        ('phQuery', RPC_HQUERY),
        ('ErrorCode', DWORD),
    )


# Opnum 5
class PerflibV2QueryCounterInfo(NDRCALL):
    opnum = 5
    structure = (
        ('hQuery', RPC_HQUERY),
        ('dwInSize', DWORD),
    )


class PerflibV2QueryCounterInfoResponse(SizedBytesResponse):
    pass


# Opnum 6
class PerflibV2QueryCounterData(NDRCALL):
    opnum = 6
    structure = (
        ('hQuery', RPC_HQUERY),
        ('dwInSize', DWORD),
    )


class PerflibV2QueryCounterDataResponse(SizedBytesResponse):
    pass


# Opnum 7
class PerflibV2ValidateCounters(NDRCALL):
    opnum = 7
    structure = (
        ('hQuery', RPC_HQUERY),
        ('dwInSize', DWORD),
        ('lpData', BYTE_ARRAY_C),
        ('dwAdd', DWORD),
    )


class PerflibV2ValidateCountersResponse(NDRCALL):
    structure = (
        ('lpData', BYTE_ARRAY_C),
        ('ErrorCode', DWORD),
    )


OPNUMS = {
    0: PerflibV2EnumerateCounterSet,
    1: PerflibV2QueryCounterSetRegistrationInfo,
    2: PerflibV2EnumerateCounterSetInstances,
    3: PerflibV2OpenQueryHandle,
    4: PerflibV2CloseQueryHandle,
    5: PerflibV2QueryCounterInfo,
    6: PerflibV2QueryCounterData,
    7: PerflibV2ValidateCounters,
}


# ---- helpers to fill and read the calls ----

def wstr(s):
    """The value of an [in, string] wchar_t* field: the NUL is on the wire."""
    return s + '\x00'


def guid_bytes(text):
    """A GUID in its wire (little-endian DCE) form, from '{...}' text."""
    return uuid.UUID(text.strip('{}')).bytes_le


def guid_text(raw):
    return str(uuid.UUID(bytes_le=bytes(raw)))


def guid_field(text):
    g = GUID()
    g['Data'] = guid_bytes(text)
    return g


def array_bytes(data):
    """The bytes of a decoded BYTE_ARRAY_CV / BYTE_ARRAY_C field (impacket
    hands out an array field as the list of its elements)."""
    if isinstance(data, (bytes, bytearray)):
        return bytes(data)
    return b''.join(bytes(x) if not isinstance(x, int) else bytes([x]) for x in data)


def byte_array_c(raw):
    a = BYTE_ARRAY_C()
    a['Data'] = list(raw)
    return a


# ---- section 2.2.4: the buffers ----

class ParseError(Exception):
    pass


def _unpack(fmt, buf, off, what):
    n = struct.calcsize(fmt)
    if off < 0 or off + n > len(buf):
        raise ParseError('%s: %d bytes at offset %d overrun a %d-byte buffer'
                         % (what, n, off, len(buf)))
    return struct.unpack_from(fmt, buf, off)


def _check_aligned(off, what, problems):
    if problems is not None and off % 8:
        problems.append('%s at offset %d is not on an 8-byte boundary' % (what, off))


def read_wstring(buf, off=0, end=None):
    """A NUL-terminated UTF-16LE string starting at off."""
    end = len(buf) if end is None else min(end, len(buf))
    i = off
    while i + 1 < end:
        if buf[i] == 0 and buf[i + 1] == 0:
            return buf[off:i].decode('utf-16le')
        i += 2
    raise ParseError('string at offset %d has no NUL before offset %d' % (off, end))


COUNTERSET_REG_INFO = '<16sLLLL'        # 32 bytes
COUNTER_REG_INFO = '<LLQLlLLLLLL'       # 48 bytes
COUNTERSET_REG_INFO_SIZE = struct.calcsize(COUNTERSET_REG_INFO)
COUNTER_REG_INFO_SIZE = struct.calcsize(COUNTER_REG_INFO)


def parse_counter_reg_info(buf, off=0):
    (cid, ctype, attrib, detail, scale, base, ptime, pfreq, multi, agg,
     reserved) = _unpack(COUNTER_REG_INFO, buf, off, '_PERF_COUNTER_REG_INFO')
    return {'CounterId': cid, 'Type': ctype, 'Attrib': attrib, 'DetailLevel': detail,
            'DefaultScale': scale, 'BaseCounterId': base, 'PerfTimeId': ptime,
            'PerfFreqId': pfreq, 'MultiId': multi, 'AggregateFunc': agg,
            'Reserved': reserved}


def parse_counterset_reg_info(buf):
    """RequestCode 1: _PERF_COUNTERSET_REG_INFO and NumCounters counters."""
    g, cstype, detail, num, itype = _unpack(COUNTERSET_REG_INFO, buf, 0,
                                            '_PERF_COUNTERSET_REG_INFO')
    info = {'CounterSetGuid': guid_text(g), 'CounterSetType': cstype,
            'DetailLevel': detail, 'NumCounters': num, 'InstanceType': itype}
    need = COUNTERSET_REG_INFO_SIZE + num * COUNTER_REG_INFO_SIZE
    if need > len(buf):
        raise ParseError('%d counters need %d bytes, buffer has %d' % (num, need, len(buf)))
    counters = [parse_counter_reg_info(buf, COUNTERSET_REG_INFO_SIZE + i * COUNTER_REG_INFO_SIZE)
                for i in range(num)]
    return info, counters


def parse_string_buffer(buf, problems=None):
    """RequestCodes 5, 6, 10: {counter id: string}, in header order."""
    size, n = _unpack('<LL', buf, 0, '_STRING_BUFFER_HEADER')
    if size > len(buf):
        raise ParseError('_STRING_BUFFER_HEADER.dwSize %d > buffer %d' % (size, len(buf)))
    base = 8 + 8 * n
    if base > size:
        raise ParseError('%d _STRING_COUNTER_HEADERs overrun dwSize %d' % (n, size))
    out = []
    for i in range(n):
        cid, off = _unpack('<LL', buf, 8 + 8 * i, '_STRING_COUNTER_HEADER')
        out.append((cid, read_wstring(buf, base + off, size)))
    if problems is not None and size % 8:
        problems.append('string buffer size %d is not an 8-byte multiple' % size)
    return out


def parse_instances(buf, problems=None):
    """EnumerateCounterSetInstances: [(InstanceId, name)]."""
    out, off = [], 0
    while off < len(buf):
        _check_aligned(off, '_PERF_INSTANCE_HEADER', problems)
        size, iid = _unpack('<LL', buf, off, '_PERF_INSTANCE_HEADER')
        if size < 10 or off + size > len(buf):
            raise ParseError('_PERF_INSTANCE_HEADER.Size %d at %d is impossible' % (size, off))
        if problems is not None and size % 8:
            problems.append('_PERF_INSTANCE_HEADER.Size %d is not an 8-byte multiple' % size)
        out.append((iid, read_wstring(buf, off + 8, off + size)))
        off += size
    return out


COUNTER_IDENTIFIER = '<16sLLLLLL'       # 40 bytes
COUNTER_IDENTIFIER_SIZE = struct.calcsize(COUNTER_IDENTIFIER)


WILDCARD_INSTANCE_ID = 0xFFFFFFFF


def build_counter_identifier(guid, counter_id, instance, instance_id=WILDCARD_INSTANCE_ID,
                             index=0, status=0):
    """One _PERF_COUNTER_IDENTIFIER block: the struct, the NUL-terminated
    UTF-16LE instance name, zero padding to the next 8-byte boundary; Size
    covers all three (an 8-byte multiple, as 3.1.4.1.5 requires).

    MS-PCQ only says InstanceId is "the instance identifier"; Windows'
    perflib.h documents it as a filter, 0xFFFFFFFF meaning "any id", so
    matching by name alone sends 0xFFFFFFFF (as Windows clients do)."""
    name = (instance + '\x00').encode('utf-16le')
    size = COUNTER_IDENTIFIER_SIZE + len(name)
    size += (-size) % 8
    head = struct.pack(COUNTER_IDENTIFIER, guid_bytes(guid), status, size, counter_id,
                       instance_id, index, 0)
    return (head + name).ljust(size, b'\x00')


def parse_counter_identifiers(buf, problems=None):
    """ValidateCounters' returned buffer and QueryCounterInfo's."""
    out, off = [], 0
    while off < len(buf):
        _check_aligned(off, '_PERF_COUNTER_IDENTIFIER', problems)
        g, status, size, cid, iid, index, _ = _unpack(COUNTER_IDENTIFIER, buf, off,
                                                     '_PERF_COUNTER_IDENTIFIER')
        if size < COUNTER_IDENTIFIER_SIZE or off + size > len(buf):
            raise ParseError('_PERF_COUNTER_IDENTIFIER.Size %d at %d is impossible' % (size, off))
        if problems is not None and size % 8:
            problems.append('_PERF_COUNTER_IDENTIFIER.Size %d is not an 8-byte multiple' % size)
        name = None
        if size > COUNTER_IDENTIFIER_SIZE:
            name = read_wstring(buf, off + COUNTER_IDENTIFIER_SIZE, off + size)
        out.append({'CounterSetGuid': guid_text(g), 'Status': status, 'Size': size,
                    'CounterId': cid, 'InstanceId': iid, 'Index': index,
                    'InstanceName': name})
        off += size
    return out


DATA_HEADER = '<LLQQQ8H'                # 48 bytes
DATA_HEADER_SIZE = struct.calcsize(DATA_HEADER)


def _counter_data(buf, off, end, problems):
    """A _PERF_COUNTER_DATA block: (value, offset past the block)."""
    _check_aligned(off, '_PERF_COUNTER_DATA', problems)
    dsize, size = _unpack('<LL', buf, off, '_PERF_COUNTER_DATA')
    if size < 8 + dsize or off + size > end:
        raise ParseError('_PERF_COUNTER_DATA at %d: dwDataSize %d dwSize %d overrun %d'
                         % (off, dsize, size, end))
    if dsize == 4:
        value = struct.unpack_from('<L', buf, off + 8)[0]
    elif dsize == 8:
        value = struct.unpack_from('<Q', buf, off + 8)[0]
    else:
        value = bytes(buf[off + 8:off + 8 + dsize])
    return value, off + size


def _multi_counters(buf, off, end, problems):
    _check_aligned(off, '_PERF_MULTI_COUNTERS', problems)
    size, n = _unpack('<LL', buf, off, '_PERF_MULTI_COUNTERS')
    if size < 8 + 4 * n or off + size > end:
        raise ParseError('_PERF_MULTI_COUNTERS at %d: dwSize %d for %d counters' % (off, size, n))
    ids = list(struct.unpack_from('<%dL' % n, buf, off + 8))
    return ids, off + size


def _instance_header(buf, off, end, problems):
    _check_aligned(off, '_PERF_INSTANCE_HEADER', problems)
    size, iid = _unpack('<LL', buf, off, '_PERF_INSTANCE_HEADER')
    if size < 10 or off + size > end:
        raise ParseError('_PERF_INSTANCE_HEADER at %d: Size %d' % (off, size))
    return iid, read_wstring(buf, off + 8, off + size), off + size


def _multi_instances(buf, off, end, problems, per_instance):
    """A _PERF_MULTI_INSTANCES and its instance blocks; per_instance reads
    what follows each _PERF_INSTANCE_HEADER and returns (values, next)."""
    _check_aligned(off, '_PERF_MULTI_INSTANCES', problems)
    total, n = _unpack('<LL', buf, off, '_PERF_MULTI_INSTANCES')
    if total < 8 or off + total > end:
        raise ParseError('_PERF_MULTI_INSTANCES at %d: dwTotalSize %d' % (off, total))
    stop, pos, out = off + total, off + 8, []
    for _ in range(n):
        iid, name, pos = _instance_header(buf, pos, stop, problems)
        values, pos = per_instance(pos, stop)
        out.append((iid, name, values))
    return out, stop


def _counter_block(buf, off, end, problems):
    _check_aligned(off, '_PERF_COUNTER_HEADER', problems)
    status, btype, size, _ = _unpack('<LLLL', buf, off, '_PERF_COUNTER_HEADER')
    if size < 16 or off + size > end:
        raise ParseError('_PERF_COUNTER_HEADER at %d: dwSize %d overruns %d' % (off, size, end))
    stop, pos = off + size, off + 16
    block = {'dwStatus': status, 'dwType': btype, 'dwSize': size}
    if btype == PERF_ERROR_RETURN:
        pass
    elif btype == PERF_SINGLE_COUNTER:
        block['value'], pos = _counter_data(buf, pos, stop, problems)
    elif btype == PERF_MULTI_COUNTERS:
        ids, pos = _multi_counters(buf, pos, stop, problems)
        values = []
        for _ in ids:
            v, pos = _counter_data(buf, pos, stop, problems)
            values.append(v)
        block['counters'] = dict(zip(ids, values))
    elif btype == PERF_MULTI_INSTANCES:
        def one(p, s):
            return _counter_data(buf, p, s, problems)
        block['instances'], pos = _multi_instances(buf, pos, stop, problems, one)
    elif btype == PERF_COUNTERSET:
        ids, pos = _multi_counters(buf, pos, stop, problems)

        def row(p, s):
            values = []
            for _ in ids:
                v, p = _counter_data(buf, p, s, problems)
                values.append(v)
            return dict(zip(ids, values)), p
        block['instances'], pos = _multi_instances(buf, pos, stop, problems, row)
    else:
        raise ParseError('_PERF_COUNTER_HEADER at %d: unknown dwType %d' % (off, btype))
    return block, stop


def parse_counter_data(buf, problems=None):
    """QueryCounterData: (_PERF_DATA_HEADER dict, [counter blocks])."""
    f = _unpack(DATA_HEADER, buf, 0, '_PERF_DATA_HEADER')
    head = {'dwTotalSize': f[0], 'dwNumCounter': f[1], 'PerfTimeStamp': f[2],
            'PerfTime100NSec': f[3], 'PerfFreq': f[4], 'SystemTime': f[5:]}
    if head['dwTotalSize'] > len(buf) or head['dwTotalSize'] < DATA_HEADER_SIZE:
        raise ParseError('_PERF_DATA_HEADER.dwTotalSize %d, buffer %d'
                         % (head['dwTotalSize'], len(buf)))
    blocks, off = [], DATA_HEADER_SIZE
    for _ in range(head['dwNumCounter']):
        b, off = _counter_block(buf, off, head['dwTotalSize'], problems)
        blocks.append(b)
    if problems is not None and off != head['dwTotalSize']:
        problems.append('counter blocks end at %d, dwTotalSize says %d' % (off, head['dwTotalSize']))
    return head, blocks


def block_values(block, ident):
    """Flattens one counter block into [(instance name, counter id, value)],
    using its _PERF_COUNTER_IDENTIFIER (QueryCounterInfo) for what the block
    leaves implicit."""
    t = block['dwType']
    if t == PERF_SINGLE_COUNTER:
        return [(ident['InstanceName'], ident['CounterId'], block['value'])]
    if t == PERF_MULTI_COUNTERS:
        return [(ident['InstanceName'], c, v) for c, v in block['counters'].items()]
    if t == PERF_MULTI_INSTANCES:
        return [(name, ident['CounterId'], v) for _, name, v in block['instances']]
    if t == PERF_COUNTERSET:
        return [(name, c, v) for _, name, row in block['instances'] for c, v in row.items()]
    return []
