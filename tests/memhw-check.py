#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The memory-detail and hardware providers through a real perflibd and typeperf.

memhw-check.py fixtures: the Paging File, NUMA Node Memory, Thermal Zone
Information and Power Meter plugins read the fake trees of data/memhw
(PERFLIB_PROCFS, PERFLIB_SYSFS), which this script changes between samples;
every figure is worked out by hand from the files.  This is where swap,
hwmon, thermal zones and RAPL are proven on a machine that has none.

memhw-check.py interop: the same plugins and Memory on this machine, against
tools nobody here wrote, read in the same second: /proc/meminfo, numastat,
swapon --show --bytes (on a swap file made here when there is no swap and
the kernel lets us), sensors -j where hwmon exists; a part the machine
cannot do is skipped with the reason.  Exit 0, 1 (a check failed) or 77
(nothing could be checked).
"""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.path.abspath(os.environ.get("top_builddir") or os.path.join(os.path.dirname(__file__), ".."))
SRC = os.path.abspath(os.environ.get("top_srcdir") or os.path.join(os.path.dirname(__file__), ".."))
PERFLIBD = os.path.join(TOP, "server-glue", "perflibd")
TYPEPERF = os.path.join(TOP, "tools", "typeperf")
MIB = 1 << 20
# swapon, mkswap and swapoff live in /sbin, which a user's PATH may lack.
SBIN = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
SWAPON, MKSWAP, SWAPOFF = (shutil.which(t, path=SBIN) for t in ("swapon", "mkswap", "swapoff"))


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def ok(self, name, cond, detail=""):
        print("%s: %s%s" % ("PASS" if cond else "FAIL", name, " (%s)" % (detail,) if detail else ""))
        if cond:
            self.passed += 1
        else:
            self.failed += 1

    def within(self, name, ours, theirs, abs_tol, rel_tol):
        """|ours - theirs| <= abs_tol + rel_tol * |theirs|; ours None is a failure."""
        good = ours is not None and abs(ours - theirs) <= abs_tol + rel_tol * abs(theirs)
        self.ok(name, good, "typeperf %s, reference %s, tolerance %s + %s x reference"
                % (ours, theirs, abs_tol, rel_tol))

    @staticmethod
    def skip(part, reason):
        print("SKIP: %s: %s" % (part, reason))


class Server:
    """perflibd on a private runtime directory with some of the built plugins."""

    def __init__(self, tmp, plugins, env):
        self.tmp = tmp
        self.run = os.path.join(tmp, "run")
        for d in ("run", "registry", "plugins"):
            os.makedirs(os.path.join(tmp, d))
        # A root perflibd runs plugins as nobody, whose hosts must reach these.
        os.chmod(tmp, 0o755)
        for p in plugins:
            so = os.path.join(TOP, "providers", p, ".libs", p + ".so")
            if not os.path.exists(so):
                sys.exit("FAIL: %s was not built" % so)
            os.symlink(so, os.path.join(tmp, "plugins", p + ".so"))
        self.env = dict(os.environ, PERFLIB_RUNTIME_DIR=self.run, **env)
        self.logpath = os.path.join(tmp, "perflibd.log")
        with open(self.logpath, "w") as log:
            self.proc = subprocess.Popen([PERFLIBD, "-r", self.run, "-R", os.path.join(tmp, "registry"),
                                          "-p", os.path.join(tmp, "plugins")],
                                         env=self.env, stdout=log, stderr=log)

    def wait(self, countersets):
        """Until typeperf -q lists every one of countersets (30 s)."""
        for _ in range(300):
            q = subprocess.run([TYPEPERF, "-q"], env=self.env, capture_output=True, text=True)
            if q.returncode == 0 and all("\\%s\\" % c in q.stdout or "\\%s(" % c in q.stdout
                                         for c in countersets):
                return
            time.sleep(0.1)
        self.stop()
        sys.exit("FAIL: perflibd did not list %s:\n%s" % (countersets, self.log()))

    def log(self):
        with open(self.logpath) as f:
            return f.read()

    def typeperf_start(self, paths, count=1, interval=1):
        return subprocess.Popen([TYPEPERF] + paths + ["-sc", str(count), "-si", str(interval)],
                                env=self.env, stdout=subprocess.PIPE, text=True)

    @staticmethod
    def samples(proc):
        """The samples of a typeperf run: one dict a line, path (no host) to value or None."""
        out, _ = proc.communicate(timeout=120)
        rows = list(csv.reader(io.StringIO(out)))
        if proc.returncode != 0 or not rows:
            sys.exit("FAIL: typeperf exited %d:\n%s" % (proc.returncode, out))
        paths = [re.sub(r"^\\\\[^\\]*", "", h) for h in rows[0][1:]]
        return [{p: (float(v) if v.strip() else None) for p, v in zip(paths, r[1:])} for r in rows[1:]]

    def typeperf(self, paths, count=1, interval=1):
        return self.samples(self.typeperf_start(paths, count, interval))

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def instances(sample, counterset, counter):
    """{instance: value} of one counter in a (*) sample."""
    pat = re.compile(r"^\\%s\((.*)\)\\%s$" % (re.escape(counterset), re.escape(counter)))
    return {m.group(1): v for p, v in sample.items() for m in [pat.match(p)] if m}


# ---- fixtures ----

def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def read_int(path):
    with open(path) as f:
        return int(f.read())


def fixture_paging(c, s0, s2):
    use = instances(s0, "Paging File", "% Usage")
    c.ok("Paging File instances: every area of /proc/swaps by its path, and _Total",
         sorted(use) == sorted(["/dev/vda3", "/var/lib/paging file.swap", "/swap/big", "_Total"]), sorted(use))
    # Pages of 4 KiB: 1024 KiB of 2097148 KiB is 256 of 524287.
    c.within("Paging File(/dev/vda3) % Usage", use.get("/dev/vda3"), 100.0 * 256 / 524287, 1e-5, 0)
    c.within("Paging File(/swap/big) % Usage", use.get("/swap/big"), 50.0, 1e-5, 0)
    c.within("Paging File(_Total) % Usage", use.get("_Total"),
             100.0 * (256 + 536870912) / (524287 + 262143 + 1073741823), 1e-5, 0)
    size = instances(s0, "Paging File", "Size Bytes")
    c.ok("Paging File(/var/lib/paging file.swap) Size Bytes is 1048572 KiB",
         size.get("/var/lib/paging file.swap") == 1048572 * 1024, size.get("/var/lib/paging file.swap"))
    # After the area's usage fell to 0 and /swap/big was swapped off:
    use2 = instances(s2, "Paging File", "% Usage")
    peak2 = instances(s2, "Paging File", "% Usage Peak")
    c.ok("Paging File(/dev/vda3) % Usage 0 after its usage fell", use2.get("/dev/vda3") == 0, use2.get("/dev/vda3"))
    c.within("Paging File(/dev/vda3) % Usage Peak keeps the earlier usage", peak2.get("/dev/vda3"),
             100.0 * 256 / 524287, 1e-5, 0)
    c.ok("Paging File(/swap/big) gone once swapped off", use2.get("/swap/big") is None, use2.get("/swap/big"))
    c.ok("Paging File(/var/lib/paging file.swap) stays past a garbage line",
         use2.get("/var/lib/paging file.swap") == 0, use2.get("/var/lib/paging file.swap"))
    c.within("Paging File(_Total) % Usage Peak keeps the highest total", peak2.get("_Total"),
             100.0 * (256 + 536870912) / (524287 + 262143 + 1073741823), 1e-5, 0)


def fixture_numa(c, s0, samples):
    node = {k: instances(s0, "NUMA Node Memory", k) for k in
            ("Total MBytes", "Free & Zero Page List MBytes", "Standby List MBytes", "Available MBytes")}
    c.ok("NUMA Node Memory instances: nodes 0 and 1 (node2 has no meminfo) and _Total",
         sorted(node["Total MBytes"]) == ["0", "1", "_Total"], sorted(node["Total MBytes"]))
    # node0: 8388608 kB total, 2097152 free, file LRU 2800000 + KReclaimable 300000.
    # node1 (no KReclaimable): 4194304, 1048576, 1000000 + SReclaimable 60000.
    want = {"0": (8192, 2048, 3100000 // 1024, (2097152 + 3100000) // 1024),
            "1": (4096, 1024, 1060000 // 1024, (1048576 + 1060000) // 1024),
            "_Total": (12288, 3072, 4160000 // 1024, (3145728 + 4160000) // 1024)}
    for inst, figures in want.items():
        for counter, w in zip(node, figures):
            c.within("NUMA Node Memory(%s) %s" % (inst, counter), node[counter].get(inst), w, 0, 0)
    # numa_hit of node0 grew by 1000 pages within one 2 s interval of three.
    hits = [instances(s, "NUMA Node Memory", "Hit Allocations/sec").get("0") or 0 for s in samples]
    c.within("NUMA Node Memory(0) Hit Allocations/sec x 2 s over the window", sum(hits) * 2, 1000, 0, 0.02)
    other = [instances(s, "NUMA Node Memory", "Hit Allocations/sec").get("1") for s in samples]
    c.ok("NUMA Node Memory(1) Hit Allocations/sec 0 on a node that did not change", other == [0] * 3, other)


def fixture_thermal(c, s0, s2):
    hpt = instances(s0, "Thermal Zone Information", "High Precision Temperature")
    # ACPI's scale: tenths of a Kelvin, 0 degrees Celsius at 2732; two acpitz zones share a name.
    want = {"\\_TZ.acpitz": 3182, "\\_TZ.acpitz#1": 3011, "\\_TZ.battery(main)": 2682,
            "\\_TZ.cpu-thermal": 3533, "coretemp.Package id 0": 3152, "coretemp.Core 0": 3132,
            "nvme.temp1": 3091, "hwmon2.temp1": 3032, "coretemp.Package id 0#1": 3162,
            "acpitz.a_b (c) _d": 3242}
    c.ok("Thermal Zone Information instances: readable zones and hwmon sensors",
         sorted(hpt) == sorted(want), sorted(hpt))
    for inst, w in want.items():
        c.within("Thermal Zone Information(%s) High Precision Temperature" % inst, hpt.get(inst), w, 0, 0)
    temp = instances(s0, "Thermal Zone Information", "Temperature")
    c.within("Thermal Zone Information(\\_TZ.acpitz) Temperature in Kelvin", temp.get("\\_TZ.acpitz"), 318, 0, 0)
    limit = instances(s0, "Thermal Zone Information", "% Passive Limit")
    reasons = instances(s0, "Thermal Zone Information", "Throttle Reasons")
    c.ok("Thermal Zone Information(\\_TZ.acpitz) % Passive Limit 80 (Processor at 2 of 10, the fan no limit)",
         limit.get("\\_TZ.acpitz") == 80 and reasons.get("\\_TZ.acpitz") == 1,
         (limit.get("\\_TZ.acpitz"), reasons.get("\\_TZ.acpitz")))
    c.ok("Thermal Zone Information(\\_TZ.cpu-thermal) fully throttled",
         limit.get("\\_TZ.cpu-thermal") == 0 and reasons.get("\\_TZ.cpu-thermal") == 1)
    c.ok("Thermal Zone Information(nvme.temp1) unconstrained",
         limit.get("nvme.temp1") == 100 and reasons.get("nvme.temp1") == 0)
    hpt2 = instances(s2, "Thermal Zone Information", "High Precision Temperature")
    c.within("Thermal Zone Information(\\_TZ.acpitz) follows its zone", hpt2.get("\\_TZ.acpitz"), 3232, 0, 0)
    c.ok("Thermal Zone Information(hwmon2.temp1) gone with its sensor", hpt2.get("hwmon2.temp1") is None)


def fixture_power(c, s0, samples):
    budget = instances(s0, "Power Meter", "Power Budget")
    want = {"package-0": 25000, "package-0#1": 15000, "package-0/core": 0, "package-0/uncore": 5000,
            "package-1": 20000, "psys": 0}
    c.ok("Power Meter instances: the RAPL zones", sorted(budget) == sorted(want), sorted(budget))
    for inst, w in want.items():
        c.within("Power Meter(%s) Power Budget in mW" % inst, budget.get(inst), w, 0, 0)
    energy = instances(s0, "Power Meter", "Energy Microjoules")
    c.within("Power Meter(package-0#1) Energy Microjoules", energy.get("package-0#1"), 123456789, 0, 0)
    c.ok("Power Meter(package-1) Energy 0 where energy_uj is unreadable", energy.get("package-1") == 0)
    # 3 J more within one 2 s interval: 1500 mW over that interval, 0 over the others.
    power = [instances(s, "Power Meter", "Power").get("package-0#1") or 0 for s in samples]
    c.within("Power Meter(package-0#1) Power, the most of three samples", max(power), 1500, 0, 0.25)
    c.within("Power Meter(package-0#1) Power x 2 s over the window", sum(power) * 2, 3000, 0, 0.25)
    last = instances(samples[-1], "Power Meter", "Energy Microjoules")
    c.within("Power Meter(package-0#1) Energy Microjoules counts the 3 J", last.get("package-0#1"),
             126456789, 0, 0)
    p1 = [instances(s, "Power Meter", "Power").get("package-1") for s in samples]
    c.ok("Power Meter(package-1) Power 0 when its energy_uj becomes readable", p1 == [0] * 3, p1)
    c.within("Power Meter(package-1) Energy Microjoules from its first reading", last.get("package-1"),
             777000000, 0, 0)


def change_tree(tree):
    """What happens halfway through the second of three 2 s intervals."""
    write(os.path.join(tree, "proc/swaps"),
          "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
          "/dev/vda3                               partition\t2097148\t\t0\t\t-2\n"
          "not a swap line\n"
          "/var/lib/paging\\040file.swap            file\t\t1048572\t\t0\t\t-3\n")
    stat = os.path.join(tree, "sys/devices/system/node/node0/numastat")
    with open(stat) as f:
        text = f.read()
    write(stat, re.sub(r"numa_hit (\d+)", lambda m: "numa_hit %d" % (int(m.group(1)) + 1000), text))
    energy = os.path.join(tree, "sys/class/powercap/intel-rapl:0/energy_uj")
    write(energy, "%d\n" % (read_int(energy) + 3000000))
    # package-1's energy_uj becomes readable: a base, not 777 J at once.
    write(os.path.join(tree, "sys/class/powercap/intel-rapl:1/energy_uj"), "777000000\n")
    write(os.path.join(tree, "sys/class/thermal/thermal_zone0/temp"), "50000\n")
    os.unlink(os.path.join(tree, "sys/class/hwmon/hwmon2/temp1_input"))


def fixture_changing(c, tmp, tree):
    srv = Server(os.path.join(tmp, "srv"), ("pagingfile", "numa", "thermal", "power"),
                 {"PERFLIB_PROCFS": os.path.join(tree, "proc"), "PERFLIB_SYSFS": os.path.join(tree, "sys")})
    try:
        srv.wait(["Paging File", "NUMA Node Memory", "Thermal Zone Information", "Power Meter"])
        paths = ["\\Paging File(*)\\*", "\\NUMA Node Memory(*)\\*", "\\Thermal Zone Information(*)\\*",
                 "\\Power Meter(*)\\*"]
        s0 = srv.typeperf(paths)[0]
        # Collections at about 0, 2, 4 and 6 s; the files change at 3 s.
        run = srv.typeperf_start(paths, 3, 2)
        time.sleep(3)
        change_tree(tree)
        samples = Server.samples(run)
        fixture_paging(c, s0, samples[-1])
        fixture_numa(c, s0, samples)
        fixture_thermal(c, s0, samples[-1])
        fixture_power(c, s0, samples)
        log = srv.log()
        c.ok("the log says why package-1 shows no energy", "energy_uj unreadable" in log)
        c.ok("the log names the zone left out", "thermal_zone2: Bad message" in log)
        c.ok("the log names the garbage line of /proc/swaps", "/proc/swaps line 2: Bad message" in log)
    finally:
        srv.stop()


def fixture_bare(c, tmp, bare_tree):
    """A machine without RAPL, thermal zones, hwmon or swap support: no
    instances (Paging File's _Total alone), and a log line each."""
    bare = Server(os.path.join(tmp, "bare"), ("thermal", "power", "pagingfile"),
                  {"PERFLIB_SYSFS": bare_tree, "PERFLIB_PROCFS": bare_tree})
    try:
        bare.wait(["Thermal Zone Information", "Power Meter", "Paging File"])
        size = instances(bare.typeperf(["\\Paging File(*)\\Size Bytes"])[0], "Paging File", "Size Bytes")
        c.ok("Paging File without /proc/swaps: _Total alone, at 0", size == {"_Total": 0}, size)
        q = subprocess.run([TYPEPERF, "-qx", "Power Meter"], env=bare.env, capture_output=True, text=True)
        c.ok("Power Meter without RAPL: no instances", "\\Power Meter(" not in q.stdout, q.stdout.strip())
        log = bare.log()
        c.ok("Power Meter without RAPL: the log says why", "no intel-rapl zones" in log)
        c.ok("Thermal Zone Information without sensors: the log says why", "no thermal zone in" in log)
        c.ok("Paging File without /proc/swaps: the log says why", "a kernel without swap" in log)
    finally:
        bare.stop()


def slow_sensor(fifo, stop):
    """Answers each reading of the FIFO after 40 ms, as a slow driver does."""
    while not stop.is_set():
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:         # ENXIO: nobody reads now
            time.sleep(0.002)
            continue
        time.sleep(0.04)
        os.write(fd, b"40000\n")
        os.close(fd)


def fixture_slow(c, tmp):
    """A zone whose reading takes 40 ms, over the 25 ms a collection reads:
    the collections take turns, and no sensor drops out meanwhile."""
    tree = os.path.join(tmp, "slow")
    shutil.copytree(os.path.join(SRC, "tests", "data", "memhw", "sys"), tree)
    zone = os.path.join(tree, "class/thermal/thermal_zone5")
    os.mkdir(zone)
    write(os.path.join(zone, "type"), "slow\n")
    os.mkfifo(os.path.join(zone, "temp"))
    stop = threading.Event()
    writer = threading.Thread(target=slow_sensor, args=(os.path.join(zone, "temp"), stop), daemon=True)
    writer.start()
    # perflibd's own bound (100 ms) is not under test: under sanitizers and
    # load a collection with a 40 ms reading in it may pass it.
    srv = Server(os.path.join(tmp, "srv-slow"), ("thermal",),
                 {"PERFLIB_SYSFS": tree, "PERFLIB_COLLECT_TIMEOUT_MS": "5000"})
    try:
        srv.wait(["Thermal Zone Information"])
        samples = srv.typeperf(["\\Thermal Zone Information(*)\\High Precision Temperature"], 4, 1)
        want = {"\\_TZ.slow": 3132, "\\_TZ.cpu-thermal": 3533, "nvme.temp1": 3091, "hwmon2.temp1": 3032}
        got = [{k: instances(s, "Thermal Zone Information", "High Precision Temperature").get(k)
                for k in want} for s in samples]
        c.ok("Thermal Zone Information: the sensors before and after a slow one, in every sample",
             all(g == want for g in got), got)
        c.ok("the log says the sensors took over the budget", "took over 25 ms" in srv.log())
    finally:
        srv.stop()
        stop.set()
        writer.join()


def fixtures(tmp):
    c = Checks()
    tree = os.path.join(tmp, "tree")
    shutil.copytree(os.path.join(SRC, "tests", "data", "memhw"), tree)
    fixture_changing(c, tmp, tree)
    fixture_bare(c, tmp, os.path.join(tree, "bare"))
    fixture_slow(c, tmp)
    return c


# ---- interop ----

MEMINFO = {"Dirty Bytes": ("Dirty", 64 * MIB, 0.5), "Writeback Bytes": ("Writeback", 64 * MIB, 0.5),
           "Slab Bytes": ("Slab", 16 * MIB, 0.05), "Slab Reclaimable Bytes": ("SReclaimable", 16 * MIB, 0.05),
           "Slab Unreclaimable Bytes": ("SUnreclaim", 8 * MIB, 0.05), "Anon Bytes": ("AnonPages", 64 * MIB, 0.10),
           "Shmem Bytes": ("Shmem", 8 * MIB, 0.05), "Mapped Bytes": ("Mapped", 32 * MIB, 0.10),
           "Huge Pages Total": ("HugePages_Total", 0, 0), "Huge Pages Free": ("HugePages_Free", 0, 0),
           "Huge Page Size": ("Hugepagesize", 0, 0), "Anon Huge Pages Bytes": ("AnonHugePages", 64 * MIB, 0.10)}


def meminfo():
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":", 1)
            w = v.split()
            out[k] = int(w[0]) * (1024 if len(w) > 1 and w[1] == "kB" else 1)
    return out


def interop_memory(c, srv):
    s = srv.typeperf(["\\Memory\\%s" % k for k in MEMINFO])[0]
    m = meminfo()
    # Dirty and Writeback move with every write of the other jobs on this
    # machine; the slab and anonymous figures with every process they start.
    # The huge page pool only moves when an admin resizes it: exact.
    for counter, (key, abs_tol, rel) in MEMINFO.items():
        if key not in m:
            Checks.skip("Memory\\" + counter, "this kernel's /proc/meminfo has no " + key)
            continue
        c.within("Memory %s vs /proc/meminfo %s" % (counter, key), s.get("\\Memory\\" + counter),
                 m[key], abs_tol, rel)


def numastat_m():
    """numastat -m: {field: {column: MB}} with columns "Node 0" ... "Total"."""
    out = subprocess.run(["numastat", "-m"], capture_output=True, text=True, check=True).stdout
    lines = [l for l in out.splitlines() if l.strip() and not l.startswith("-")]
    head = [l for l in lines if l.lstrip().startswith("Node")][0]
    cols = re.findall(r"Node \d+|Total", head)
    table = {}
    for l in lines:
        w = l.split()
        if len(w) == len(cols) + 1:
            try:
                table[w[0]] = dict(zip(cols, map(float, w[1:])))
            except ValueError:
                pass
    return table


def numastat_hits():
    """numastat's numa_hit per node column, in pages."""
    out = subprocess.run(["numastat"], capture_output=True, text=True, check=True).stdout.splitlines()
    cols = out[0].split()
    for l in out:
        w = l.split()
        if w and w[0] == "numa_hit":
            return dict(zip(cols, map(int, w[1:])))
    return {}


def interop_numa(c, srv):
    if not shutil.which("numastat"):
        Checks.skip("NUMA Node Memory vs numastat", "numastat (package numactl) is not installed")
        return
    if not os.path.isdir("/sys/devices/system/node/node0"):
        Checks.skip("NUMA Node Memory vs numastat", "this kernel has no NUMA nodes in sysfs")
        return
    s = srv.typeperf(["\\NUMA Node Memory(*)\\Total MBytes", "\\NUMA Node Memory(*)\\Free & Zero Page List MBytes"])[0]
    t = numastat_m()
    total = instances(s, "NUMA Node Memory", "Total MBytes")
    free = instances(s, "NUMA Node Memory", "Free & Zero Page List MBytes")
    for col, row in t["MemTotal"].items():
        inst = "_Total" if col == "Total" else col.split()[1]
        # We floor MiB, numastat rounds to 0.01 MB: 1.
        c.within("NUMA Node Memory(%s) Total MBytes vs numastat -m MemTotal" % inst, total.get(inst), row, 1, 0)
        # Other jobs allocate between the two reads: 5 % + 64 MB.
        c.within("NUMA Node Memory(%s) Free & Zero Page List MBytes vs numastat -m MemFree" % inst,
                 free.get(inst), t["MemFree"][col], 64, 0.05)
    interop_numa_hits(c, srv)


TOUCH_PAGES = """import mmap
ones = b"1" * 4096
while True:
    m = mmap.mmap(-1, 4096 * 4096)
    m[::4096] = ones
    m.close()
"""


def interop_numa_hits(c, srv):
    """Hit Allocations/sec against numastat's numa_hit over the same seconds,
    as rates: on a quiet machine allocations come in bursts (typeperf's own
    start and exit are in numastat's window only), so a child of ours
    maps 16 MiB, touches each page and unmaps it, over and over: fresh pages
    at a steady rate both see, little enough for the other tests' Committed
    Bytes and Available Bytes."""
    load = subprocess.Popen([sys.executable, "-c", TOUCH_PAGES])
    try:
        time.sleep(0.5)
        h0, t0 = numastat_hits(), time.monotonic()
        samples = srv.typeperf(["\\NUMA Node Memory(_Total)\\Hit Allocations/sec"], 3, 1)
        h1, t1 = numastat_hits(), time.monotonic()
    finally:
        load.kill()
        load.wait()
    ours = sum(x["\\NUMA Node Memory(_Total)\\Hit Allocations/sec"] or 0 for x in samples) / len(samples)
    theirs = sum(h1[k] - h0[k] for k in h1) / (t1 - t0)
    # The windows differ by typeperf's start and exit (a few ms of 3 s) and
    # the child's rate by the CPU the other jobs leave it: 25 %.
    c.ok("NUMA Node Memory(_Total) Hit Allocations/sec vs numastat numa_hit delta / seconds",
         theirs > 0 and abs(ours - theirs) <= 0.25 * theirs,
         "typeperf %.0f/s, numastat %.0f/s, tolerance 25 %%" % (ours, theirs))


def swapon_show():
    # With no swap at all, util-linux 2.38's swapon --show exits 1 and prints nothing.
    out = subprocess.run([SWAPON, "--show=NAME,SIZE,USED", "--bytes", "--raw", "--noheadings"],
                         capture_output=True, text=True).stdout
    # --raw escapes unsafe characters as \x20: decode them to match /proc/swaps' paths.
    areas = {}
    for l in out.splitlines():
        name, size, used = l.rsplit(" ", 2)
        areas[re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), name)] = (int(size), int(used))
    return areas


def wait_swap_readers():
    """Until no test-providers runs (60 s at most): it compares the machine's
    swap totals with free(1) exactly, and a swap file would come between."""
    for _ in range(600):
        comms = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open("/proc/%s/comm" % pid) as f:
                    comms.append(f.read().strip())
            except OSError:
                pass
        if not any(c in ("test-providers", "lt-test-provide") for c in comms):
            return
        time.sleep(0.1)


def make_swap(tmp):
    """A 16 MiB swap file, on when root and the kernel allows it; its path, or None with the reason."""
    if os.geteuid() != 0:
        return None, "not root: cannot swapon a file"
    # A space, which /proc/swaps writes as \040 and swapon --raw as \x20.
    path = os.path.join(tmp, "memhw paging.swap")
    with open(path, "wb") as f:
        f.write(bytes(16 * MIB))
    os.chmod(path, 0o600)
    wait_swap_readers()
    if not MKSWAP or not SWAPOFF:
        return None, "mkswap or swapoff is missing"
    for cmd in ([MKSWAP, path], [SWAPON, path]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            os.unlink(path)
            return None, "%s failed: %s" % (" ".join(cmd), (r.stderr or r.stdout).strip())
    return path, None


def interop_paging(c, srv, tmp):
    if not SWAPON:
        Checks.skip("Paging File vs swapon", "swapon (util-linux) is not installed")
        return
    made = None
    if not swapon_show():
        made, why = make_swap(tmp)
        if not made:
            Checks.skip("Paging File vs swapon", "no swap and none can be made here: " + why)
            return
    try:
        # The swap file is on for as short a time as the check takes: other
        # tests of this machine compare swap totals too.
        s = srv.typeperf(["\\Paging File(*)\\Size Bytes", "\\Paging File(*)\\Used Bytes",
                          "\\Paging File(*)\\% Usage"])[0]
        areas = swapon_show()
    finally:
        if made:
            subprocess.run([SWAPOFF, made])
            os.unlink(made)
    size = instances(s, "Paging File", "Size Bytes")
    used = instances(s, "Paging File", "Used Bytes")
    use = instances(s, "Paging File", "% Usage")
    c.ok("Paging File instances are swapon's areas and _Total", sorted(size) == sorted(list(areas) + ["_Total"]),
         "%s vs %s" % (sorted(size), sorted(areas)))
    for name, (sz, us) in areas.items():
        c.within("Paging File(%s) Size Bytes vs swapon SIZE" % name, size.get(name), sz, 0, 0)
        # Pages go out and come back between the two reads: 4 MiB.
        c.within("Paging File(%s) Used Bytes vs swapon USED" % name, used.get(name), us, 4 * MIB, 0.05)
        c.within("Paging File(%s) %% Usage vs swapon USED/SIZE" % name, use.get(name), 100.0 * us / sz, 0.5, 0)
    c.within("Paging File(_Total) Size Bytes vs the sum of swapon SIZE", size.get("_Total"),
             sum(a[0] for a in areas.values()), 0, 0)


def interop_sensors(c, srv):
    hwmon = "/sys/class/hwmon"
    if not os.path.isdir(hwmon) or not any(re.match(r"temp\d+_input$", f)
                                           for d in os.listdir(hwmon) for f in os.listdir(os.path.join(hwmon, d))):
        Checks.skip("Thermal Zone Information vs sensors -j", "this machine has no hwmon temperature sensor")
        return
    if not shutil.which("sensors"):
        Checks.skip("Thermal Zone Information vs sensors -j", "sensors (package lm-sensors) is not installed")
        return
    s = srv.typeperf(["\\Thermal Zone Information(*)\\High Precision Temperature"])[0]
    data = json.loads(subprocess.run(["sensors", "-j"], capture_output=True, text=True).stdout or "{}")
    ours = instances(s, "Thermal Zone Information", "High Precision Temperature")
    n = 0
    for chip, features in data.items():
        name = chip.split("-")[0]
        for label, values in features.items():
            if not isinstance(values, dict):
                continue
            for k, v in values.items():
                inst = "%s.%s" % (name, label.replace("/", "_").replace("#", "_"))
                if re.match(r"temp\d+_input$", k) and inst in ours:
                    # Sensors move between the reads: 3 degrees.
                    c.within("Thermal Zone Information(%s) vs sensors -j %s" % (inst, k),
                             (ours[inst] - 2732) / 10.0, v, 3, 0)
                    n += 1
    c.ok("sensors -j and Thermal Zone Information share sensors", n > 0, "%d compared" % n)


def interop_power(c, srv):
    if os.path.isdir("/sys/class/powercap") and any(d.startswith("intel-rapl:")
                                                    for d in os.listdir("/sys/class/powercap")):
        s = srv.typeperf(["\\Power Meter(*)\\Power Budget"])[0]
        c.ok("Power Meter has the machine's RAPL zones", len(instances(s, "Power Meter", "Power Budget")) > 0)
        return
    q = subprocess.run([TYPEPERF, "-qx", "Power Meter"], env=srv.env, capture_output=True, text=True)
    c.ok("Power Meter on a machine without RAPL: no instances", "\\Power Meter(" not in q.stdout)
    c.ok("Power Meter on a machine without RAPL: the log says why", "no RAPL zones" in srv.log())


def interop(tmp):
    c = Checks()
    srv = Server(os.path.join(tmp, "srv"), ("memory", "pagingfile", "numa", "thermal", "power"), {})
    try:
        srv.wait(["Memory", "Paging File", "NUMA Node Memory", "Thermal Zone Information", "Power Meter"])
        interop_memory(c, srv)
        interop_numa(c, srv)
        interop_paging(c, srv, tmp)
        interop_sensors(c, srv)
        interop_power(c, srv)
    finally:
        srv.stop()
    return c


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode not in ("fixtures", "interop"):
        sys.exit("usage: memhw-check.py fixtures|interop")
    for b in (PERFLIBD, TYPEPERF):
        if not os.access(b, os.X_OK):
            sys.exit("FAIL: %s was not built" % b)
    # In the build tree: the swap file must be on a real filesystem, not tmpfs.
    tmp = tempfile.mkdtemp(prefix="memhw-%s." % mode, dir=os.path.join(TOP, "tests"))
    # A root perflibd runs plugins as nobody, who must read the trees too.
    os.chmod(tmp, 0o755)
    try:
        c = fixtures(tmp) if mode == "fixtures" else interop(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (c.passed, c.failed))
    return 1 if c.failed else (0 if c.passed else 77)


if __name__ == "__main__":
    sys.exit(main())
