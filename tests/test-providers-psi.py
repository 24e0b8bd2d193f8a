#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
Pressure Stall and Control Group through a real perflibd and typeperf.

Against references nobody here wrote, read in the same second: the
kernel's own /proc/pressure files, and the cgroup files of a group this
test makes under its own cgroup (as root, where a cgroup2 hierarchy is
mounted writable) with a busy process moved into it; systemd-cgtop too
where systemd runs.  Then the group is removed and its instance must
vanish.  The provider's glue (names, value mapping, bounds) is also run
over the saved trees of tests/data/cgroup, which needs no privilege.

Exit 0 when every check ran and passed, 1 on a failure, 77 (SKIP) when
nothing could be checked; a part that cannot run says SKIP and why.
"""
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.environ.get("top_builddir") or os.getcwd()
SRC = os.environ.get("top_srcdir") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERFLIBD = os.path.join(TOP, "server-glue", "perflibd")
TYPEPERF = os.path.join(TOP, "tools", "typeperf")
FIXTURES = os.path.join(SRC, "tests", "data", "cgroup")
N = 4  # seconds (samples) of each rate window

failures = 0
checks = 0


def report(ok, what):
    global failures, checks
    checks += 1
    if not ok:
        failures += 1
    print("%s: %s" % ("PASS" if ok else "FAIL", what), flush=True)


def within(what, ours, ref, abs_tol, rel_tol=0.0):
    ok = ours is not None and abs(ours - ref) <= abs_tol + rel_tol * abs(ref)
    report(ok, "%s: typeperf %s, reference %s (tolerance %s + %s x reference)"
           % (what, ours, ref, abs_tol, rel_tol))


class Server:
    """A perflibd of its own, with only these two plugins, in the build tree."""

    def __init__(self, env_extra=None):
        self.dir = tempfile.mkdtemp(prefix="providers-psi.", dir=os.path.join(TOP, "tests"))
        # A root perflibd runs plugins as nobody, who must reach the runtime directory.
        os.chmod(self.dir, 0o755)
        self.run = os.path.join(self.dir, "run")
        for d in ("run", "registry", "plugins"):
            os.mkdir(os.path.join(self.dir, d))
        for name in ("pressure", "cgroup", "memory"):
            so = os.path.join(TOP, "providers", name, ".libs", name + ".so")
            os.symlink(so, os.path.join(self.dir, "plugins", name + ".so"))
        env = dict(os.environ, PERFLIB_RUNTIME_DIR=self.run, **(env_extra or {}))
        self.log = open(os.path.join(self.dir, "perflibd.log"), "w+")
        self.proc = subprocess.Popen([PERFLIBD, "-r", self.run, "-R", os.path.join(self.dir, "registry"),
                                      "-p", os.path.join(self.dir, "plugins")], env=env, stderr=self.log)
        sock = os.path.join(self.run, "perflibd.sock")
        for _ in range(200):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        else:
            self.stop()
            sys.exit("FAIL: perflibd did not start")
        # The plugins' hosts start after the socket: wait for both countersets.
        for _ in range(200):
            q = self.typeperf("-q")
            if "\\Pressure Stall\\" in q and "\\Control Group\\" in q and "\\Memory\\" in q:
                break
            time.sleep(0.1)

    def typeperf(self, *args):
        env = dict(os.environ, PERFLIB_RUNTIME_DIR=self.run)
        p = subprocess.run([TYPEPERF] + list(args), env=env, capture_output=True, text=True)
        return p.stdout

    def sample(self, *args):
        """typeperf's CSV as {column header: [values]} (blank samples left out)."""
        rows = list(csv.reader(io.StringIO(self.typeperf(*args))))
        out = {}
        for i, h in enumerate(rows[0][1:] if rows else [], 1):
            out[h] = [float(r[i]) for r in rows[1:] if len(r) > i and r[i].strip()]
        return out

    def instances(self, cset):
        pat = re.compile(r"^\\%s\((.*)\)\\" % re.escape(cset))
        return {m.group(1) for m in map(pat.match, self.typeperf("-qx", cset).splitlines()) if m}

    def logged(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def column(sample, suffix):
    """The values of the one column whose header ends with suffix."""
    cols = [h for h in sample if h.endswith(suffix)]
    if len(cols) != 1:
        return None
    return sample[cols[0]]


def last(sample, suffix):
    v = column(sample, suffix)
    return v[-1] if v else None


def avg(sample, suffix):
    v = column(sample, suffix)
    return sum(v) / len(v) if v else None


# ---- Pressure Stall against /proc/pressure ----

def parse_psi(text):
    out = {}
    for line in text.splitlines():
        f = line.split()
        if f and f[0] in ("some", "full"):
            out[f[0]] = {k: float(v) for k, v in (x.split("=", 1) for x in f[1:])}
    return out


def read_psi():
    out = {}
    for r in ("cpu", "memory", "io", "irq"):
        try:
            with open("/proc/pressure/" + r) as f:
                out[r] = parse_psi(f.read())
        except OSError:
            pass
    return out


def busy(n):
    return [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n)]


def stop_all(procs):
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def check_pressure(srv):
    present = read_psi()
    report(srv.instances("Pressure Stall") == set(present),
           "Pressure Stall instances %s are the readable /proc/pressure files %s"
           % (sorted(srv.instances("Pressure Stall")), sorted(present)))
    if not present:
        print("SKIP: Pressure Stall values: no /proc/pressure (no CONFIG_PSI, or psi=0)")
        return
    # The averages move every 2 s and typeperf's one sample takes about 1 s:
    # the value is the one read before it or the one after (0.005: rounding).
    before = read_psi()
    s = srv.sample(*["\\Pressure Stall(*)\\%% %s Stalled Time Avg%s" % (k, w)
                     for k in ("Some", "Full") for w in (10, 60, 300)], "-sc", "1")
    after = read_psi()
    for r, lines in before.items():
        for kind, fields in lines.items():
            for w in (10, 60, 300):
                ours = last(s, "Pressure Stall(%s)\\%% %s Stalled Time Avg%d" % (r, kind.capitalize(), w))
                lo = min(fields["avg%d" % w], after[r][kind]["avg%d" % w])
                hi = max(fields["avg%d" % w], after[r][kind]["avg%d" % w])
                report(ours is not None and lo - 0.005 <= ours <= hi + 0.005,
                       "Pressure Stall(%s) %s avg%d: typeperf %s, /proc/pressure before %.2f after %.2f"
                       % (r, kind, w, ours, fields["avg%d" % w], after[r][kind]["avg%d" % w]))
    # The totals as rates, while more busy loops than CPUs make CPU pressure.
    load = busy((os.cpu_count() or 1) + 1)
    try:
        time.sleep(0.5)
        t0, p0 = time.monotonic(), read_psi()
        s = srv.sample("\\Pressure Stall(*)\\% Some Stalled Time", "-si", "1", "-sc", str(N))
        t1, p1 = time.monotonic(), read_psi()
    finally:
        stop_all(load)
    for r in p0:
        if "some" not in p0[r]:
            continue
        ref = 100 * (p1[r]["some"]["total"] - p0[r]["some"]["total"]) / ((t1 - t0) * 1e6)
        # The reference window also spans typeperf's start, a fraction of a
        # second of it: 10 points.
        within("Pressure Stall(%s) %% Some Stalled Time vs /proc/pressure total delta" % r,
               avg(s, "Pressure Stall(%s)\\%% Some Stalled Time" % r), ref, 10)


def check_memory_pressure(srv, present):
    """Memory's pressure counters: the same file as Pressure Stall(memory)."""
    if "memory" not in present:
        print("SKIP: Memory's pressure counters: no /proc/pressure/memory")
        return
    before = read_psi()["memory"]["some"]["avg10"]
    s = srv.sample("\\Memory\\Memory Pressure Avg10", "\\Memory\\% Memory Stalled Time",
                   "\\Pressure Stall(memory)\\% Some Stalled Time", "-si", "1", "-sc", str(N))
    after = read_psi()["memory"]["some"]["avg10"]
    ours = last(s, "Memory\\Memory Pressure Avg10")
    report(ours is not None and min(before, after) - 0.005 <= ours <= max(before, after) + 0.005,
           "Memory Pressure Avg10: typeperf %s, /proc/pressure/memory before %.2f after %.2f"
           % (ours, before, after))
    # Two providers read the one total a moment apart, each over ~1 s: 1 point.
    within("Memory %% Memory Stalled Time vs Pressure Stall(memory) %% Some Stalled Time",
           avg(s, "Memory\\% Memory Stalled Time"),
           avg(s, "Pressure Stall(memory)\\% Some Stalled Time"), 1)


# ---- Control Group against a group of its own ----

def cgroup2_mount():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            if post.split()[:1] == ["cgroup2"]:
                return pre.split()[4].replace("\\040", " ")
    return None


def own_cgroup():
    with open("/proc/self/cgroup") as f:
        for line in f:
            if line.startswith("0::"):
                return line[3:].strip()
    return None


def read_kv(path):
    try:
        with open(path) as f:
            return {k: int(v) for k, v in (line.split()[:2] for line in f if len(line.split()) >= 2)}
    except OSError:
        return None


def read_value(path):
    """A one-number file, "max" as 0 (as the provider publishes it); None when missing."""
    try:
        with open(path) as f:
            s = f.read().strip()
    except OSError:
        return None
    return 0 if s == "max" else int(s)


def make_group():
    """A group under this test's own, with a busy process in it: (dir, name, process), or a reason."""
    mnt, own = cgroup2_mount(), own_cgroup()
    if os.geteuid() != 0:
        return "not root"
    if not mnt or own is None:
        return "no cgroup2 hierarchy mounted"
    name = "perflib-test-%d" % os.getpid()
    path = os.path.join(mnt + own, name)
    try:
        os.mkdir(path)
    except OSError as e:
        return "cannot make a group under %s: %s" % (mnt + own, e.strerror)
    p = busy(1)[0]
    try:
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write(str(p.pid))
    except OSError as e:
        stop_all([p])
        os.rmdir(path)
        return "cannot move a process into %s: %s" % (path, e.strerror)
    return path, (own.strip("/") + "/" if own.strip("/") else "") + name, p


def remove_group(path):
    # The last task leaves the group a moment after it is reaped.
    for _ in range(100):
        try:
            os.rmdir(path)
            return
        except OSError:
            time.sleep(0.05)
    os.rmdir(path)


def cgtop_cpu(rel):
    """systemd-cgtop's %CPU of the group over its last second, or None."""
    # COLUMNS: cgtop shortens paths to the terminal's width.
    out = subprocess.run(["systemd-cgtop", "--batch", "--raw", "--iterations=3", "--delay=1",
                          "--order=path", "--depth=64"], capture_output=True, text=True,
                         env=dict(os.environ, COLUMNS="1000")).stdout
    v = None
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] == "/" + rel and f[2] != "-":
            v = float(f[2])
    return v


def check_group(srv, path, rel):
    report(rel in srv.instances("Control Group"),
           "Control Group lists the test's group %s" % rel)
    time.sleep(0.5)
    # % Processor Time: one busy process, about 100 %.
    t0, c0 = time.monotonic(), read_kv(os.path.join(path, "cpu.stat"))
    s = srv.sample(*["\\Control Group(%s)\\%s" % (rel, c)
                     for c in ("% Processor Time", "% User Time", "% Privileged Time")],
                   "-si", "1", "-sc", str(N))
    t1, c1 = time.monotonic(), read_kv(os.path.join(path, "cpu.stat"))
    ref = 100 * (c1["usage_usec"] - c0["usage_usec"]) / ((t1 - t0) * 1e6)
    # Both windows hold the same busy loop; the reference's also spans
    # typeperf's start: 10 points.
    ours = avg(s, "\\% Processor Time")
    within("Control Group(%s) %% Processor Time vs cpu.stat usage_usec delta" % rel, ours, ref, 10)
    parts = (avg(s, "\\% User Time") or 0) + (avg(s, "\\% Privileged Time") or 0)
    within("Control Group(%s) %% User Time + %% Privileged Time vs %% Processor Time" % rel,
           parts, ours or 0, 2)
    # On a hybrid system cgtop reads CPU from the v1 hierarchies, where this
    # group does not exist: only a unified one compares.
    if not os.path.isdir("/run/systemd/system") or not shutil.which("systemd-cgtop"):
        print("SKIP: systemd-cgtop: systemd is not running here")
    elif cgroup2_mount() != "/sys/fs/cgroup":
        print("SKIP: systemd-cgtop: a hybrid hierarchy, where cgtop reads CPU from cgroup v1")
    else:
        theirs = cgtop_cpu(rel)
        report(theirs is not None, "systemd-cgtop shows /%s" % rel)
        if theirs is not None:
            within("Control Group(%s) %% Processor Time vs systemd-cgtop %%CPU" % rel, ours, theirs, 15)
    check_group_files(srv, path, rel)


def check_group_files(srv, path, rel):
    """The instantaneous counters against the group's files read right after; 0 where missing."""
    s = srv.sample("\\Control Group(%s)\\*" % rel, "-sc", "1")
    pre = "Control Group(%s)\\" % rel
    exact = {"Task Limit": read_value(os.path.join(path, "pids.max")),
             "Memory Limit Bytes": read_value(os.path.join(path, "memory.max"))}
    events = read_kv(os.path.join(path, "memory.events")) or {}
    for counter, key in (("Memory OOM Kills", "oom_kill"), ("Memory Max Events", "max")):
        exact[counter] = events.get(key, 0)
    for counter, ref in exact.items():
        within("%s%s vs its file" % (pre, counter), last(s, pre + counter), ref or 0, 0)
    # One shell loop: its task count is 1 (more for a moment when it forks).
    tasks = read_value(os.path.join(path, "pids.current"))
    within("%sTask Count vs pids.current" % pre, last(s, pre + "Task Count"), tasks or 0, 1)
    mem = read_value(os.path.join(path, "memory.current"))
    within("%sMemory Current Bytes vs memory.current" % pre, last(s, pre + "Memory Current Bytes"),
           mem or 0, 1 << 20, 0.10)


def check_cgroup(srv):
    made = make_group()
    if isinstance(made, str):
        print("SKIP: Control Group against a group of its own: %s" % made)
        return False
    path, rel, proc = made
    try:
        check_group(srv, path, rel)
    finally:
        stop_all([proc])
        remove_group(path)
    report(rel not in srv.instances("Control Group"),
           "the removed group %s is no longer an instance" % rel)
    return True


# ---- the provider over saved trees ----

def readable_copy(src):
    """A copy of the saved tree that nobody (whom a root perflibd runs plugins as) can read."""
    dst = tempfile.mkdtemp(prefix="providers-psi-tree.", dir=os.path.join(TOP, "tests"))
    os.chmod(dst, 0o755)
    tree = os.path.join(dst, "tree")
    shutil.copytree(src, tree)
    for top, dirs, files in os.walk(tree):
        os.chmod(top, 0o755)
        for f in files:
            os.chmod(os.path.join(top, f), 0o644)
    return dst, tree


def check_fixtures():
    copy, tree = readable_copy(os.path.join(FIXTURES, "v2-systemd"))
    try:
        check_tree(tree)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def check_tree(tree):
    srv = Server({"PERFLIB_CGROUP_ROOT": tree})
    try:
        # A group named with characters of counter path syntax gets them replaced.
        want = {"/", "garbage.slice", "odd [1]_2", "system.slice", "system.slice/ssh.service",
                "system.slice/docker-4f3a9c2e1b7d.scope", "user.slice", "user.slice/user-1000.slice",
                "user.slice/user-1000.slice/user@1000.service",
                "user.slice/user-1000.slice/user@1000.service/app.slice",
                "user.slice/user-1000.slice/user@1000.service/app.slice/deep.scope"}
        got = srv.instances("Control Group")
        report(got == want, "saved tree: instances %s" % sorted(got))
        d = "system.slice/docker-4f3a9c2e1b7d.scope"
        s = srv.sample(*["\\Control Group(%s)\\%s" % (g, c) for g, c in (
            (d, "Memory Limit Bytes"), (d, "Task Limit"), (d, "Task Count"),
            ("system.slice", "Memory Limit Bytes"), ("system.slice", "Memory Current Bytes"),
            ("system.slice", "Memory Peak Bytes"), ("system.slice", "Memory OOM Kills"),
            ("/", "Memory Current Bytes"), ("garbage.slice", "Task Count"))], "-sc", "1")
        for g, c, v in ((d, "Memory Limit Bytes", 536870912), (d, "Task Limit", 100), (d, "Task Count", 12),
                        ("system.slice", "Memory Limit Bytes", 0), ("system.slice", "Memory Current Bytes", 734003200),
                        ("system.slice", "Memory Peak Bytes", 1048576000), ("system.slice", "Memory OOM Kills", 1),
                        ("/", "Memory Current Bytes", 0), ("garbage.slice", "Task Count", 0)):
            within("saved tree: Control Group(%s)\\%s" % (g, c), last(s, "(%s)\\%s" % (g, c)), v, 0)
    finally:
        srv.stop()
    srv = Server({"PERFLIB_CGROUP_ROOT": tree, "PERFLIB_CGROUP_MAX_GROUPS": "3"})
    try:
        got = srv.instances("Control Group")
        report(len(got) == 3 and "/" in got, "PERFLIB_CGROUP_MAX_GROUPS=3: %s" % sorted(got))
        report("more than 3 groups" in srv.logged(), "the bound is logged")
    finally:
        srv.stop()


def main():
    for b in (PERFLIBD, TYPEPERF):
        if not os.access(b, os.X_OK):
            sys.exit("FAIL: %s was not built" % b)
    check_fixtures()
    srv = Server()
    try:
        check_pressure(srv)
        check_memory_pressure(srv, read_psi())
        check_cgroup(srv)
    finally:
        srv.stop()
    print("%d checks, %d failed" % (checks, failures))
    sys.exit(1 if failures else 0 if checks else 77)


if __name__ == "__main__":
    main()
