# SPDX-License-Identifier: MIT
"""One PerflibV2 session against a live perflibd, driven by impacket.

Usage: pcq_session.py HOST PORT
       pcq_session.py HOST PORT robustness          (malformed requests, refused)
       pcq_session.py HOST PORT provider-gone PID   (kills interop-provider PID)

Talks to the server over ncacn_ip_tcp (or, with PERFLIB_TEST_PIPE=1, over
ncacn_np: \PIPE\winreg of the SMB server at HOST:PORT, logged on to SMB as
the same user), logged on with NTLM at packet
privacy as PERFLIB_TEST_USER with PERFLIB_TEST_PASSWORD (MS-PCQ 2.1; without
them, unauthenticated, which a perflibd refuses), and walks every opnum the way a Windows client would (MS-PCQ section 4.1), checking
the answers against the spec and against what tests/interop/interop-provider.c
publishes.  Prints one PASS/FAIL line per check; exits 0 only if all pass.
"""

import os
import signal
import struct
import sys
import time
import traceback

from impacket.dcerpc.v5 import transport
from impacket.dcerpc.v5.ndr import NDRCALL
from impacket.dcerpc.v5.rpcrt import (DCERPCException, RPC_C_AUTHN_LEVEL_PKT_PRIVACY,
                                      RPC_C_AUTHN_WINNT)

import perflibv2 as p

# What interop-provider.c publishes (keep in step with it).
PROVIDER_GUID = '3c9d8e7f-6a5b-4c4d-9e3f-2a1b0c9d8e7f'
PROVIDER_NAME = 'InteropProvider'
SINGLE = '6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9'
MULTI = '0a1b2c3d-4e5f-4061-8273-94a5b6c7d8e9'
MANY = '5e6f7081-92a3-4b4c-8d5e-6f708192a3b4'
MANY_INSTANCES = [(i, 'inst-%03d' % i) for i in range(300)]
UNKNOWN = '00112233-4455-6677-8899-aabbccddeeff'
FIXED32, FIXED64, BYREF64 = 42, 0x0123456789abcdef, 0xfeedface12345678
INSTANCES = [(1, 'alpha'), (2, 'beta'), (3, 'gamma')]

RAWCOUNT, LARGE_RAWCOUNT, COUNTER_COUNTER = 0x00010000, 0x00010100, 0x10410400
NOVICE, ADVANCED = 100, 200

COUNTERSETS = {
    SINGLE: {
        'name': 'Interop Single', 'help': 'Fixed values for the interop test',
        'instance_type': 0,
        'counters': {
            1: (RAWCOUNT, 0, NOVICE, 'Fixed 32', 'Always 42'),
            2: (LARGE_RAWCOUNT, 0, NOVICE, 'Fixed 64', 'Always 0x0123456789abcdef'),
            3: (COUNTER_COUNTER, 0, NOVICE, 'Ticks', 'Counts up every 10 ms'),
            4: (LARGE_RAWCOUNT, 1, ADVANCED, 'By Ref',
                'Always 0xfeedface12345678, read by reference'),
        },
    },
    MULTI: {
        'name': 'Interop Multi', 'help': 'Three instances with fixed values',
        'instance_type': 2,
        'counters': {
            1: (RAWCOUNT, 0, NOVICE, 'Value', '1000 plus the instance id'),
            2: (LARGE_RAWCOUNT, 0, NOVICE, 'Big', 'The instance id shifted left by 40, or 7'),
        },
    },
    MANY: {
        'name': 'Interop Many', 'help': 'Enough instances to need several fragments',
        'instance_type': 2,
        'counters': {
            1: (RAWCOUNT, 0, NOVICE, 'Id', 'The instance id'),
        },
    },
}

MACHINE = p.wstr('127.0.0.1')


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def __call__(self, ok, what, detail=''):
        if ok:
            self.passed += 1
            print('PASS: %s' % what)
        else:
            self.failed += 1
            print('FAIL: %s%s' % (what, (' -- ' + str(detail)) if detail != '' else ''))
        sys.stdout.flush()
        return ok

    def step(self, name, fn, *args):
        """Runs one group of checks; an exception fails the group, not the run."""
        try:
            return fn(*args)
        except DCERPCException as e:
            self(False, '%s: no exception' % name, 'impacket DCERPCException: %s' % e)
        except p.ParseError as e:
            self(False, '%s: buffer parses per MS-PCQ 2.2.4' % name, e)
        except Exception as e:                  # noqa: BLE001 (report, carry on)
            self(False, '%s: no exception' % name, '%s: %s' % (type(e).__name__, e))
            traceback.print_exc(file=sys.stdout)
        return None


check = Checks()


class EOFAwareTCPTransport(transport.TCPTransport):
    """impacket's TCP transport, except that the server closing the
    connection is an error: impacket 0.10's own recv() loops forever on
    EOF, which would turn a dead server into a hung test."""

    def recv(self, forceRecv=0, count=0):
        sock, buf = self.get_socket(), b''
        while not buf or len(buf) < count:
            more = sock.recv(count - len(buf) if count else 8192)
            if not more:
                raise DCERPCException('the server closed the connection')
            buf += more
        return buf


def pipe_transport(host, port, user, password):
    """ncacn_np: \PIPE\winreg through the SMB server at host:port, whose
    session is user's; the DCE/RPC logon inside defaults to the same."""
    return transport.SMBTransport(host, port, r'\winreg', username=user, password=password)


class Client:
    def __init__(self, host, port):
        user = os.environ.get('PERFLIB_TEST_USER')
        if os.environ.get('PERFLIB_TEST_PIPE'):
            t = pipe_transport(host, port, user, os.environ.get('PERFLIB_TEST_PASSWORD', ''))
        else:
            t = transport.DCERPCTransportFactory('ncacn_ip_tcp:%s[%d]' % (host, port))
            t.__class__ = EOFAwareTCPTransport
        # Also the timeout of every receive: a server that hangs fails the check.
        t.set_connect_timeout(10)
        if user and not os.environ.get('PERFLIB_TEST_PIPE'):
            t.set_credentials(user, os.environ.get('PERFLIB_TEST_PASSWORD', ''), 'PERFLIB')
        self.dce = t.get_dce_rpc()
        if user:
            self.dce.set_auth_type(RPC_C_AUTHN_WINNT)
            self.dce.set_auth_level(RPC_C_AUTHN_LEVEL_PKT_PRIVACY)
        self.dce.connect()
        self.dce.bind(p.MSRPC_UUID_PERFLIBV2)

    def call(self, req):
        """The decoded response, whatever its status; faults raise."""
        return self.dce.request(req, checkError=False)

    def sized(self, what, make, expect_min=1, guids=False):
        """The pdwRtnSize sizing rule: a call with dwInSize 0 must fail with
        ERROR_NOT_ENOUGH_MEMORY and say how much it needs; a call with that
        much must succeed and fill exactly that much.  Returns the data."""
        r = self.call(make(0))
        need = r['pdwRtnSize']
        check(r['ErrorCode'] == p.ERROR_NOT_ENOUGH_MEMORY and r['pdwOutSize'] == 0
              and need >= expect_min,
              '%s: dwInSize 0 gives ERROR_NOT_ENOUGH_MEMORY and the needed size' % what,
              'ErrorCode 0x%x pdwOutSize %d pdwRtnSize %d'
              % (r['ErrorCode'], r['pdwOutSize'], need))
        r = self.call(make(need))
        data = r['lpData']
        raw = data if guids else p.array_bytes(data)
        check(r['ErrorCode'] == 0 and r['pdwOutSize'] == need and len(raw) == need,
              '%s: dwInSize %d succeeds and returns %d' % (what, need, need),
              'ErrorCode 0x%x pdwOutSize %d pdwRtnSize %d returned %d'
              % (r['ErrorCode'], r['pdwOutSize'], r['pdwRtnSize'], len(raw)))
        return raw


# ---- opnum 0 ----

def enumerate_countersets(c):
    def make(n):
        r = p.PerflibV2EnumerateCounterSet()
        r['szMachine'] = MACHINE
        r['dwInSize'] = n
        return r
    guids = [p.guid_text(g['Data']) for g in c.sized('EnumerateCounterSet', make, 2, guids=True)]
    for g in COUNTERSETS:
        check(g in guids, 'EnumerateCounterSet lists %s' % g, guids)
    check(len(set(guids)) == len(guids), 'EnumerateCounterSet lists each GUID once', guids)


# ---- opnum 1 ----

def reg_info_call(c, guid, code, lcid, size):
    r = p.PerflibV2QueryCounterSetRegistrationInfo()
    r['szMachine'] = MACHINE
    r['CounterSetGuid'] = p.guid_field(guid)
    r['RequestCode'] = code
    r['RequestLCID'] = lcid
    r['dwInSize'] = size
    return r


def reg_info(c, guid, code, lcid=0):
    return c.sized('QueryCounterSetRegistrationInfo %s code %d' % (guid[:8], code),
                   lambda n: reg_info_call(c, guid, code, lcid, n))


def check_counter_reg(what, got, cid, expect):
    ctype, attrib, detail, _, _ = expect
    check(got['CounterId'] == cid and got['Type'] == ctype and got['Attrib'] == attrib
          and got['DetailLevel'] == detail and got['Reserved'] == 0
          and -10 <= got['DefaultScale'] <= 10,
          '%s: counter %d id/type/attrib/detail' % (what, cid), got)


def registration(c, guid):
    cs = COUNTERSETS[guid]
    short = 'RegInfo %s' % guid[:8]

    buf = reg_info(c, guid, p.REQ_COUNTERSET_INFO)
    info, counters = p.parse_counterset_reg_info(buf)
    check(info['CounterSetGuid'] == guid and info['CounterSetType'] == 0
          and info['NumCounters'] == len(cs['counters'])
          and info['InstanceType'] == cs['instance_type']
          and info['DetailLevel'] in (NOVICE, ADVANCED),
          '%s code 1: _PERF_COUNTERSET_REG_INFO' % short, info)
    check(len(buf) == p.COUNTERSET_REG_INFO_SIZE + info['NumCounters'] * p.COUNTER_REG_INFO_SIZE,
          '%s code 1: size is 32 + 48 x NumCounters' % short, len(buf))
    by_id = {x['CounterId']: x for x in counters}
    check(sorted(by_id) == sorted(cs['counters']), '%s code 1: counter ids' % short, sorted(by_id))
    for cid, expect in cs['counters'].items():
        if cid in by_id:
            check_counter_reg('%s code 1' % short, by_id[cid], cid, expect)

    cid = max(cs['counters'])
    buf = reg_info(c, guid, p.REQ_COUNTER_INFO, cid)
    check(len(buf) == p.COUNTER_REG_INFO_SIZE, '%s code 2: one 48-byte _PERF_COUNTER_REG_INFO'
          % short, len(buf))
    check_counter_reg('%s code 2' % short, p.parse_counter_reg_info(buf), cid, cs['counters'][cid])

    for code, want in ((p.REQ_COUNTERSET_NAME, cs['name']), (p.REQ_COUNTERSET_HELP, cs['help']),
                       (p.REQ_COUNTERSET_ENGLISH_NAME, cs['name']),
                       (p.REQ_PROVIDER_NAME, PROVIDER_NAME)):
        buf = reg_info(c, guid, code)
        got = p.read_wstring(buf)
        check(got == want and len(buf) >= 2 * (len(want) + 1),
              '%s code %d: NUL-terminated UTF-16LE "%s"' % (short, code, want), repr(got))

    for code, col in ((p.REQ_COUNTER_NAMES, 3), (p.REQ_COUNTER_HELP, 4),
                      (p.REQ_COUNTER_ENGLISH_NAMES, 3)):
        buf = reg_info(c, guid, code)
        problems = []
        got = dict(p.parse_string_buffer(buf, problems))
        want = {k: v[col] for k, v in cs['counters'].items()}
        check(got == want and not problems,
              '%s code %d: _STRING_BUFFER_HEADER with every counter\'s string' % (short, code),
              (got, problems))

    buf = reg_info(c, guid, p.REQ_PROVIDER_GUID)
    check(len(buf) == 16 and p.guid_text(buf) == PROVIDER_GUID,
          '%s code 8: provider GUID' % short, buf.hex())


def registration_errors(c):
    for what, guid, code, lcid, want in (
            ('unknown counterset GUID', UNKNOWN, 1, 0, p.ERROR_WMI_GUID_NOT_FOUND),
            ('RequestCode 11', SINGLE, 11, 0, p.ERROR_INVALID_PARAMETER),
            ('RequestCode 0', SINGLE, 0, 0, p.ERROR_INVALID_PARAMETER),
            ('counter id 99 not in the counterset', SINGLE, 2, 99, p.ERROR_WMI_ITEMID_NOT_FOUND)):
        r = c.call(reg_info_call(c, guid, code, lcid, 4096))
        check(r['ErrorCode'] == want and r['pdwOutSize'] == 0,
              'QueryCounterSetRegistrationInfo %s: 0x%x' % (what, want),
              'ErrorCode 0x%x pdwOutSize %d' % (r['ErrorCode'], r['pdwOutSize']))


# ---- opnum 2 ----

def instances_call(guid, n):
    r = p.PerflibV2EnumerateCounterSetInstances()
    r['szMachine'] = MACHINE
    r['CounterSetGuid'] = p.guid_field(guid)
    r['dwInSize'] = n
    return r


def enumerate_instances(c):
    problems = []
    buf = c.sized('EnumerateCounterSetInstances multi', lambda n: instances_call(MULTI, n))
    got = sorted(p.parse_instances(buf, problems))
    check(got == INSTANCES and not problems,
          'EnumerateCounterSetInstances multi: alpha 1, beta 2, gamma 3', (got, problems))
    buf = c.sized('EnumerateCounterSetInstances single', lambda n: instances_call(SINGLE, n))
    got = p.parse_instances(buf, problems)
    check(len(got) == 1 and not problems, 'EnumerateCounterSetInstances single: one instance',
          (got, problems))
    r = c.call(instances_call(UNKNOWN, 4096))
    check(r['ErrorCode'] == p.ERROR_WMI_GUID_NOT_FOUND,
          'EnumerateCounterSetInstances unknown GUID: 0x1068', 'ErrorCode 0x%x' % r['ErrorCode'])


# ---- opnums 3, 7, 5, 6, 4 ----

def open_query(c):
    r = p.PerflibV2OpenQueryHandle()
    r['szMachine'] = MACHINE
    r = c.call(r)
    h = r['phQuery']
    check(r['ErrorCode'] == 0 and len(h) == 20 and h[4:] != b'\0' * 16,
          'OpenQueryHandle: success and a non-NULL context handle',
          'ErrorCode 0x%x handle %s' % (r['ErrorCode'], h.hex()))
    return h


def validate(c, h, idents, add):
    raw = b''.join(p.build_counter_identifier(*i) for i in idents)
    r = p.PerflibV2ValidateCounters()
    r['hQuery'] = h
    r['dwInSize'] = len(raw)
    r['lpData'] = p.byte_array_c(raw)
    r['dwAdd'] = 1 if add else 0
    r = c.call(r)
    back = p.array_bytes(r['lpData'])
    return r['ErrorCode'], back, len(raw)


def validate_expect(c, h, what, cases, add=True):
    """cases: [((guid, counter id, instance), expected Status)].  When every
    case should succeed the call must return 0; when some should fail, the
    spec (3.1.4.1.7) lets the call itself return 0 or an error, as long as
    each identifier's Status says what happened to it."""
    err, back, sent = validate(c, h, [k for k, _ in cases], add)
    statuses = set(want for _, want in cases)
    check((err == 0 or (statuses != {0} and err in statuses)) and len(back) == sent,
          'ValidateCounters %s: call status 0x%x, buffer returned whole' % (what, err),
          'ErrorCode 0x%x, %d of %d bytes' % (err, len(back), sent))
    problems = []
    got = p.parse_counter_identifiers(back, problems)
    check(len(got) == len(cases) and not problems,
          'ValidateCounters %s: %d identifiers back' % (what, len(cases)), (got, problems))
    if len(cases) > 8:
        wrong = [(key, hex(ident['Status'])) for (key, want), ident in zip(cases, got)
                 if ident['Status'] != want]
        check(not wrong, 'ValidateCounters %s: every Status as expected' % what, wrong[:5])
        return
    for (key, want), ident in zip(cases, got):
        check(ident['Status'] == want,
              'ValidateCounters %s: %s counter 0x%x "%s"%s Status 0x%x'
              % (what, key[0][:8], key[1], key[2],
                 ' id %d' % key[3] if len(key) > 3 else '', want),
              'Status 0x%x' % ident['Status'])


def add_counters(c, h):
    validate_expect(c, h, 'add', [
        ((SINGLE, p.WILDCARD_COUNTER, p.WILDCARD_INSTANCE), 0),
        ((MULTI, 1, 'beta'), 0),
        ((MULTI, 2, p.WILDCARD_INSTANCE), 0),
    ])
    validate_expect(c, h, 'add (errors)', [
        ((UNKNOWN, 1, '*'), p.ERROR_WMI_GUID_NOT_FOUND),
        ((MULTI, 99, 'alpha'), p.ERROR_WMI_ITEMID_NOT_FOUND),
        ((MULTI, 1, 'nosuch'), p.ERROR_PATH_NOT_FOUND),
        # Windows' InstanceId filter: the name exists, the id does not.
        ((MULTI, 1, 'alpha', 9), p.ERROR_PATH_NOT_FOUND),
        ((MULTI, 1, 'beta'), p.ERROR_ALREADY_EXISTS),
    ])
    r = p.PerflibV2ValidateCounters()
    r['hQuery'] = h
    r['dwInSize'] = 8
    r['lpData'] = p.byte_array_c(b'\0' * 8)
    r['dwAdd'] = 1
    r = c.call(r)
    check(r['ErrorCode'] == p.ERROR_INVALID_PARAMETER,
          'ValidateCounters with 8 bytes (less than one identifier): 0x57',
          'ErrorCode 0x%x' % r['ErrorCode'])


def counter_info(c, h):
    def make(n):
        r = p.PerflibV2QueryCounterInfo()
        r['hQuery'] = h
        r['dwInSize'] = n
        return r
    problems = []
    idents = p.parse_counter_identifiers(c.sized('QueryCounterInfo', make), problems)
    check(not problems, 'QueryCounterInfo: identifiers on 8-byte boundaries, Size multiples of 8',
          problems)
    indexes = sorted(i['Index'] for i in idents)
    check(indexes == list(range(len(idents))),
          'QueryCounterInfo: Index values are 0..n-1, one per identifier', indexes)
    return idents


def data_call(h, n):
    r = p.PerflibV2QueryCounterData()
    r['hQuery'] = h
    r['dwInSize'] = n
    return r


def query_data(c, h, idents, label):
    problems = []
    buf = c.sized('QueryCounterData %s' % label, lambda n: data_call(h, n))
    head, blocks = p.parse_counter_data(buf, problems)
    check(not problems, 'QueryCounterData %s: every structure on an 8-byte boundary, sizes add up'
          % label, problems)
    check(head['dwTotalSize'] == len(buf) and head['dwNumCounter'] == len(idents),
          'QueryCounterData %s: dwTotalSize and dwNumCounter (= QueryCounterInfo entries)' % label,
          head)
    by_index = {i['Index']: i for i in idents}
    values, wrong = {}, []
    for n, b in enumerate(blocks):
        ident = by_index.get(n)
        if ident is None or b['dwStatus'] != 0 or b['dwType'] == p.PERF_ERROR_RETURN:
            wrong.append((n, b, ident))
            continue
        for inst, cid, v in p.block_values(b, ident):
            values[(ident['CounterSetGuid'], inst, cid)] = v
    check(not wrong, 'QueryCounterData %s: each block n has an identifier with Index n, '
          'and no block is an error (types %s)'
          % (label, sorted(set(b['dwType'] for b in blocks))), wrong[:3])
    return head, values


def one(values, guid, cid, inst=None):
    hits = [v for (g, i, c), v in values.items()
            if g == guid and c == cid and (inst is None or i == inst)]
    return hits[0] if len(hits) == 1 else hits


def check_values(values, label):
    for cid, want in ((1, FIXED32), (2, FIXED64), (4, BYREF64)):
        got = one(values, SINGLE, cid)
        check(got == want, 'QueryCounterData %s: single counter %d = 0x%x' % (label, cid, want),
              got if not isinstance(got, int) else hex(got))
    got = one(values, MULTI, 1, 'beta')
    check(got == 1002, 'QueryCounterData %s: multi counter 1 "beta" = 1002' % label, got)
    for iid, name in INSTANCES:
        got = one(values, MULTI, 2, name)
        want = (iid << 40) | 7
        check(got == want, 'QueryCounterData %s: multi counter 2 "%s" = 0x%x (wildcard instance)'
              % (label, name, want), got)
    for iid, name in INSTANCES:
        if name != 'beta':
            check(one(values, MULTI, 1, name) == [],
                  'QueryCounterData %s: multi counter 1 "%s" not returned (not added)'
                  % (label, name), values)


def check_header_clock(head, label):
    now_100ns = int((time.time() + 11644473600) * 10000000)
    year = time.gmtime().tm_year
    check(head['PerfFreq'] > 0 and abs(head['PerfTime100NSec'] - now_100ns) < 86400 * 10**7
          and head['SystemTime'][0] in (year - 1, year, year + 1),
          'QueryCounterData %s: PerfFreq, PerfTime100NSec (since 1601) and SystemTime plausible'
          % label, head)


def data_twice(c, h, idents):
    head1, v1 = query_data(c, h, idents, '#1')
    check_values(v1, '#1')
    check_header_clock(head1, '#1')
    time.sleep(0.3)             # the provider adds 1 to Ticks every 10 ms
    head2, v2 = query_data(c, h, idents, '#2')
    check_values(v2, '#2')
    t1, t2 = one(v1, SINGLE, 3), one(v2, SINGLE, 3)
    check(isinstance(t1, int) and isinstance(t2, int) and t2 > t1,
          'QueryCounterData: Ticks increased between the two queries', (t1, t2))
    check(head2['PerfTimeStamp'] > head1['PerfTimeStamp'],
          'QueryCounterData: PerfTimeStamp increased', (head1['PerfTimeStamp'], head2['PerfTimeStamp']))


def remove_counters(c, h):
    validate_expect(c, h, 'remove', [((MULTI, 1, 'beta'), 0)], add=False)
    idents = counter_info(c, h)
    left = [i for i in idents if i['CounterSetGuid'] == MULTI and i['CounterId'] == 1
            and i['InstanceName'] == 'beta']
    check(not left, 'QueryCounterInfo after remove: multi counter 1 "beta" is gone', idents)
    validate_expect(c, h, 'remove again', [((MULTI, 1, 'beta'), p.ERROR_INVALID_PARAMETER)],
                    add=False)


def close_query(c, h):
    r = p.PerflibV2CloseQueryHandle()
    r['phQuery'] = h
    r = c.call(r)
    check(r['ErrorCode'] == 0 and r['phQuery'] == b'\0' * 20,
          'CloseQueryHandle: success, handle set to NULL',
          'ErrorCode 0x%x handle %s' % (r['ErrorCode'], r['phQuery'].hex()))


def closed_handle(c, h):
    try:
        r = c.call(data_call(h, 4096))
        check(False, 'QueryCounterData on the closed handle faults',
              'answered instead, ErrorCode 0x%x' % r['ErrorCode'])
    except DCERPCException as e:
        check(True, 'QueryCounterData on the closed handle faults (%s)' % e)


def large(c):
    """Answers and a request bigger than one fragment (impacket offers 4280
    bytes): the server must fragment and reassemble."""
    buf = c.sized('EnumerateCounterSetInstances many', lambda n: instances_call(MANY, n))
    got = sorted(p.parse_instances(buf))
    check(got == MANY_INSTANCES and len(buf) > 8192,
          'EnumerateCounterSetInstances many: 300 instances in %d bytes' % len(buf), got[:5])
    h = open_query(c)
    cases = [((MANY, 1, name), 0) for _, name in MANY_INSTANCES]
    validate_expect(c, h, 'add 300 (a %d-byte request)' % (
        len(cases) * len(p.build_counter_identifier(MANY, 1, 'inst-000'))), cases)
    idents = counter_info(c, h)
    _, values = query_data(c, h, idents, 'many')
    got = sorted((i, v) for (g, i, cid), v in values.items() if g == MANY and cid == 1)
    want = sorted((name, iid) for iid, name in MANY_INSTANCES)
    check(got == want, 'QueryCounterData many: 300 values, each its instance id', got[:5])
    close_query(c, h)


def whole_counterset(c):
    """Both wildcards at once: every counter of every instance (the server
    may answer with one PERF_COUNTERSET block or any equivalent)."""
    h = open_query(c)
    validate_expect(c, h, 'add multi, every counter, every instance',
                    [((MULTI, p.WILDCARD_COUNTER, p.WILDCARD_INSTANCE), 0)])
    idents = counter_info(c, h)
    _, values = query_data(c, h, idents, 'whole counterset')
    got = {(i, cid): v for (g, i, cid), v in values.items() if g == MULTI}
    want = {}
    for iid, name in INSTANCES:
        want[(name, 1)] = 1000 + iid
        want[(name, 2)] = (iid << 40) | 7
    check(got == want, 'QueryCounterData whole counterset: 3 instances x 2 counters', got)
    close_query(c, h)


class RawCall(NDRCALL):
    """Any opnum with any stub bytes: for requests the IDL forbids."""
    opnum = 0
    structure = (('Raw', ':'),)


class RawCallResponse(NDRCALL):
    structure = (('Raw', ':'),)


def probe(host, port, what, opnum, stub):
    """A request that must be refused: a fault or a non-zero status, and the
    server must still answer the next connection."""
    c = Client(host, port)
    r = RawCall()
    r.opnum = opnum
    r['Raw'] = stub
    try:
        answer = c.dce.request(r, checkError=False)['Raw']
        status = struct.unpack('<L', answer[-4:])[0] if len(answer) >= 4 else None
        check(status not in (None, 0), '%s: refused' % what,
              'answered with status %r (%d stub bytes)' % (status, len(answer)))
    except DCERPCException as e:
        check(True, '%s: refused with a fault (%s)' % (what, e))
    finally:
        c.dce.disconnect()


def robustness(host, port):
    machine = p.PerflibV2EnumerateCounterSet()
    machine['szMachine'] = MACHINE
    # perflibd extends the IDL's range(0, 256) to 65,536 GUIDs (perflibd(8)).
    machine['dwInSize'] = 65537
    probe(host, port, 'opnum 8 (not in the interface)', 8, b'')
    probe(host, port, 'EnumerateCounterSet dwInSize 65537 (past the extended range)', 0,
          machine.getData())
    probe(host, port, 'QueryCounterSetRegistrationInfo with a 6-byte stub', 1, b'\x01' * 6)
    probe(host, port, 'EnumerateCounterSet string with ActualCount > MaximumCount', 0,
          struct.pack('<LLL', 1, 0, 1000) + b'a\0' * 4)
    probe(host, port, 'ValidateCounters on a handle never opened', 7,
          b'\0' * 4 + b'\x5a' * 16 + struct.pack('<LLL', 0, 0, 1))
    c = Client(host, port)
    r = p.PerflibV2EnumerateCounterSet()
    r['szMachine'] = MACHINE
    r['dwInSize'] = 256
    r = c.call(r)
    check(r['ErrorCode'] == 0 and r['pdwOutSize'] >= 2,
          'after the refused requests a new connection still works',
          'ErrorCode 0x%x' % r['ErrorCode'])
    c.dce.disconnect()


def provider_gone(host, port, pid):
    """Kills interop-provider (SIGKILL: no chance to clean up) while a query
    names its counters: its instances must go (polled, at most 10 s), and
    the server keep answering."""
    c = Client(host, port)
    h = open_query(c)
    validate_expect(c, h, 'add before the provider dies', [((MULTI, 1, p.WILDCARD_INSTANCE), 0)])
    os.kill(pid, signal.SIGKILL)
    status = 0
    for _ in range(100):
        status = c.call(instances_call(MULTI, 4096))['ErrorCode']
        if status != 0:
            break
        time.sleep(0.1)
    check(status in (p.ERROR_WMI_GUID_NOT_FOUND, p.ERROR_WMI_INSTANCE_NOT_FOUND),
          'EnumerateCounterSetInstances after the provider exited: 0x1068 or 0x1069',
          'ErrorCode 0x%x' % status)
    r = c.call(data_call(h, 1 << 20))
    problems = []
    check(r['ErrorCode'] == 0, 'QueryCounterData naming the vanished instances still succeeds',
          'ErrorCode 0x%x' % r['ErrorCode'])
    if r['ErrorCode'] == 0:
        head, blocks = p.parse_counter_data(p.array_bytes(r['lpData']), problems)
        leftover = [b for b in blocks if b['dwType'] != p.PERF_ERROR_RETURN and
                    (b.get('instances') or 'value' in b or b.get('counters'))]
        check(not problems and not leftover,
              'QueryCounterData after the provider exited: no values, only empty or error blocks',
              (problems, leftover))
    close_query(c, h)
    c.dce.disconnect()


def main(argv):
    if len(argv) == 5 and argv[3] == 'provider-gone':
        check.step('provider gone', provider_gone, argv[1], int(argv[2]), int(argv[4]))
        print('%d passed, %d failed' % (check.passed, check.failed))
        return 1 if check.failed else 0
    if len(argv) == 4 and argv[3] == 'robustness':
        check.step('robustness', robustness, argv[1], int(argv[2]))
        print('%d passed, %d failed' % (check.passed, check.failed))
        return 1 if check.failed else 0
    if len(argv) != 3:
        print(__doc__)
        return 2
    host, port = argv[1], int(argv[2])
    c = check.step('connect and bind', Client, host, port)
    if c is None:
        return 1
    check(True, 'bind to PerflibV2 da5a86c5-12c2-4943-ab30-7f74a813d853 v1.0 (%s)' %
          ('NTLM, packet privacy' if os.environ.get('PERFLIB_TEST_USER') else 'no auth'))
    check.step('EnumerateCounterSet', enumerate_countersets, c)
    for g in COUNTERSETS:
        check.step('QueryCounterSetRegistrationInfo %s' % g, registration, c, g)
    check.step('QueryCounterSetRegistrationInfo errors', registration_errors, c)
    check.step('EnumerateCounterSetInstances', enumerate_instances, c)
    check.step('large', large, c)
    check.step('whole counterset', whole_counterset, c)
    h = check.step('OpenQueryHandle', open_query, c)
    if h is not None:
        check.step('ValidateCounters add', add_counters, c, h)
        idents = check.step('QueryCounterInfo', counter_info, c, h)
        if idents is not None:
            check.step('QueryCounterData', data_twice, c, h, idents)
        check.step('ValidateCounters remove', remove_counters, c, h)
        check.step('CloseQueryHandle', close_query, c, h)
        check.step('closed handle', closed_handle, c, h)
    check.step('disconnect', c.dce.disconnect)
    print('%d passed, %d failed' % (check.passed, check.failed))
    return 1 if check.failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
