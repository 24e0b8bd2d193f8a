#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-layout.py: the source tree's map, checked against the tree.

    check-layout.py includes SRCDIR
    check-layout.py calls SRCDIR BUILDDIR
    check-layout.py readmes SRCDIR

includes: no two headers of the tree share a name, and every
'#include "x"' in a folder of LAYERS resolves to the folder
itself or to a folder (or single file) it may include from; one that
resolves only to another folder of the tree is reported.  Headers found
nowhere in the tree (config.h, ctrpp's generated headers) are not ours to
place.

calls: within each folder of ACYCLIC, no two source files call each other,
directly or round a loop.  Read from the built objects with nm(1): a file
that uses a symbol another file of the same folder defines depends on it.

readmes: every folder of READMES starts with a README.md.

Prints one line per problem and exits 1 when there is any.
"""
import os
import re
import subprocess
import sys

SDK_H = "sdk/include/perflib"

# folder -> what it may include from besides itself: folders, or single
# headers where a folder is only allowed one of another's (the operations
# see the namespace's interface, never the live namespace).
LAYERS = {
    SDK_H: [],
    "sdk/common": [],
    "sdk/libperflib": [SDK_H],
    "sdk/librpc": [SDK_H],
    "sdk/libpcq": [SDK_H, "sdk/common", "sdk/librpc"],
    "ctrpp": [SDK_H, "sdk/common"],
    "server-glue/registry": [SDK_H, "sdk/common", "ctrpp/perfman.h"],
    "server-glue/accounts": [SDK_H, "sdk/librpc/ntlm.h"],
    "server-glue/plugins": [SDK_H, "sdk/libperflib/reader.h"],
    "server-glue/namespace": [SDK_H, "sdk/libperflib/reader.h", "sdk/librpc/pcq-utf.h"],
    "server-glue/operations": [SDK_H, "sdk/librpc", "server-glue/namespace/ns.h"],
    "server-glue/daemon": [SDK_H, "sdk/libperflib/reader.h", "sdk/librpc",
                           "server-glue/namespace", "server-glue/operations",
                           "server-glue/registry", "server-glue/plugins",
                           "server-glue/accounts"],
    "providers/common": [SDK_H],
    "tools": [SDK_H, "sdk/libperflib/reader.h"],
    "exporter": [SDK_H],
    "samples/common": [SDK_H],
}
# Every provider and sample folder: the SDK and its own common code.
for sub in ("logicaldisk", "memory", "netif", "physicaldisk", "process",
            "processor", "system", "procinfo", "thread", "pressure", "cgroup"):
    LAYERS["providers/" + sub] = [SDK_H, "providers/common"]
for sub in ("plugin", "consumer", "usermode", "kernelmode"):
    LAYERS["samples/" + sub] = [SDK_H, "samples/common"]

# Folders whose files must not call each other round a loop.
ACYCLIC = [
    "sdk/common", "sdk/libperflib", "sdk/librpc", "sdk/libpcq", "ctrpp",
    "server-glue/registry", "server-glue/accounts", "server-glue/plugins",
    "server-glue/namespace", "server-glue/operations", "server-glue/daemon",
    "providers/common", "samples/common", "tools", "exporter",
]

READMES = ["sdk", "sdk/common", "sdk/libperflib", "sdk/librpc", "sdk/libpcq", "ctrpp",
           "server-glue", "server-glue/daemon", "server-glue/namespace",
           "server-glue/operations", "server-glue/registry", "server-glue/accounts",
           "server-glue/plugins", "providers", "samples", "tools", "exporter", "tests",
           "bench", "docs"]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources(srcdir, folder):
    d = os.path.join(srcdir, folder)
    return sorted(f for f in os.listdir(d)
                  if f.endswith((".c", ".h")) and os.path.isfile(os.path.join(d, f)))


def where(srcdir, name, cache={}):
    """Folders of the tree that hold a file called name (its last part)."""
    if not cache:
        for top, dirs, files in os.walk(srcdir):
            # Build trees (./build, ./build-asan, distcheck's _build) hold
            # generated headers that have no place on the map.
            dirs[:] = [x for x in dirs if not x.startswith((".", "_build", "build"))]
            rel = os.path.relpath(top, srcdir)
            for f in files:
                cache.setdefault(f, []).append(rel)
    return cache.get(os.path.basename(name), [])


def allowed(folder, found, name):
    if found == folder:
        return True
    for a in LAYERS[folder]:
        if a == found or a == found + "/" + os.path.basename(name):
            return True
    return False


def check_includes(srcdir):
    problems = []
    # Folders reach each other's headers through -I, where two headers of
    # one name would let the search order decide which one a file gets.
    seen = set()
    for folder in sorted(LAYERS):
        for f in sources(srcdir, folder):
            homes = where(srcdir, f)
            if f.endswith(".h") and len(homes) > 1 and f not in seen:
                seen.add(f)
                problems.append("%s: one name, %d headers: in %s"
                                % (f, len(homes), ", ".join(sorted(homes))))
    for folder in sorted(LAYERS):
        for f in sources(srcdir, folder):
            path = os.path.join(srcdir, folder, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    homes = where(srcdir, m.group(1))
                    if not homes or any(allowed(folder, h, m.group(1)) for h in homes):
                        continue
                    problems.append("%s/%s:%d: includes \"%s\" from %s, which %s may not "
                                    "include from" % (folder, f, n, m.group(1),
                                                      " or ".join(homes), folder))
    return problems


def objects_of(builddir, folder, names):
    """source base name -> the objects built from it, under builddir/folder."""
    out = {}
    d = os.path.join(builddir, folder)
    if not os.path.isdir(d):
        return out
    objs = []
    for top in (d, os.path.join(d, ".libs")):
        if os.path.isdir(top):
            objs += [os.path.join(top, o) for o in os.listdir(top) if o.endswith(".o")]
    for o in objs:
        base = os.path.basename(o)[:-2]
        best = None
        for s in names:
            if (base == s or base.endswith("-" + s)) and (best is None or len(s) > len(best)):
                best = s
        if best:
            out.setdefault(best, []).append(o)
    return out


def symbols(objs):
    defined, used = set(), set()
    for o in objs:
        nm = subprocess.run(["nm", o], capture_output=True, text=True, check=True)
        for line in nm.stdout.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                used.add(parts[1])
            elif len(parts) == 3 and parts[1] in "TDBRGSVW" and parts[1] != "":
                defined.add(parts[2])
    return defined, used - defined


def cycles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check_calls(srcdir, builddir):
    problems = []
    for folder in ACYCLIC:
        names = [f[:-2] for f in sources(srcdir, folder) if f.endswith(".c")]
        objs = objects_of(builddir, folder, names)
        missing = [n for n in names if n not in objs]
        if missing:
            problems.append("%s: not built, cannot check: %s" % (folder, ", ".join(missing)))
            continue
        syms = {n: symbols(objs[n]) for n in names}
        graph = {n: set() for n in names}
        for a in names:
            for b in names:
                if a != b and syms[a][1] & syms[b][0]:
                    graph[a].add(b)
        for comp in cycles(graph):
            detail = "; ".join("%s.c uses %s.c" % (a, b) for a in comp for b in comp
                               if b in graph[a])
            problems.append("%s: files call each other in a loop: %s" % (folder, detail))
    return problems


def check_readmes(srcdir):
    return ["%s: no README.md saying what it owns, may call and is called by" % f
            for f in READMES if not os.path.isfile(os.path.join(srcdir, f, "README.md"))]


def main(argv):
    if len(argv) < 3 or argv[1] not in ("includes", "calls", "readmes"):
        sys.stderr.write(__doc__)
        return 2
    if argv[1] == "includes":
        problems = check_includes(argv[2])
    elif argv[1] == "readmes":
        problems = check_readmes(argv[2])
    else:
        if len(argv) < 4:
            sys.stderr.write(__doc__)
            return 2
        problems = check_calls(argv[2], argv[3])
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
